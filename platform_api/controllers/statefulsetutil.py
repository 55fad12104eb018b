"""What the StatefulSet controller knows about identities, storage and revisions (kube's
stateful_set_utils and controller history): pod ``<set>-<ordinal>`` with its hostname,
labels and claims ``<template>-<set>-<ordinal>``; ControllerRevisions holding the pod
template, named by kube's hash of it; who owns a claim under the retention policy.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from platform_api import gotext
from platform_api.controllers import podcontrol
from platform_api.controllers.deploymentutil import safe_encode

Obj = dict[str, Any]
API_VERSION, KIND = "apps/v1", "StatefulSet"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"  # on pods
HASH_LABEL = "controller.kubernetes.io/hash"  # on ControllerRevisions
_POD_NAME = re.compile(r"^(.*)-([0-9]+)$")


def parent_and_ordinal(pod: Obj) -> tuple[str, int]:
    found = _POD_NAME.match(pod["metadata"].get("name", ""))
    if found is None:
        return "", -1
    ordinal = int(found.group(2))
    return found.group(1), ordinal if ordinal < 2**31 else -1


def ordinal(pod: Obj) -> int:
    return parent_and_ordinal(pod)[1]


def start(s: Obj) -> int:
    return int(((s.get("spec") or {}).get("ordinals") or {}).get("start") or 0)


def replicas(s: Obj) -> int:
    value = (s.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def in_range(pod: Obj, s: Obj) -> bool:
    return start(s) <= ordinal(pod) <= start(s) + replicas(s) - 1


def is_member(s: Obj, pod: Obj) -> bool:
    return parent_and_ordinal(pod)[0] == s["metadata"]["name"]


def claim_name(s: Obj, template: Obj, index: int) -> str:
    return f"{template['metadata']['name']}-{s['metadata']['name']}-{index}"


def identity_matches(s: Obj, pod: Obj) -> bool:
    parent, index = parent_and_ordinal(pod)
    meta = pod["metadata"]
    return (
        index >= 0
        and parent == s["metadata"]["name"]
        and meta.get("name") == f"{parent}-{index}"
        and meta.get("namespace") == s["metadata"].get("namespace")
        and (meta.get("labels") or {}).get(POD_NAME_LABEL) == meta.get("name")
    )


def storage_matches(s: Obj, pod: Obj) -> bool:
    index = ordinal(pod)
    if index < 0:
        return False
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or ()}
    for template in s["spec"].get("volumeClaimTemplates") or ():
        volume = volumes.get(template["metadata"]["name"]) or {}
        claim = volume.get("persistentVolumeClaim") or {}
        if claim.get("claimName") != claim_name(s, template, index):
            return False
    return True


def claims_for(s: Obj, index: int) -> dict[str, Obj]:
    """The PVCs of one ordinal, by template name (kube's getPersistentVolumeClaims)."""
    selector = (s["spec"].get("selector") or {}).get("matchLabels") or {}
    out: dict[str, Obj] = {}
    for template in s["spec"].get("volumeClaimTemplates") or ():
        claim = copy.deepcopy(template)
        claim.pop("status", None)
        meta = claim.setdefault("metadata", {})
        meta["name"] = claim_name(s, template, index)
        meta["namespace"] = s["metadata"].get("namespace", "")
        meta["labels"] = {**(meta.get("labels") or {}), **selector}
        claim.update(apiVersion="v1", kind="PersistentVolumeClaim")
        out[template["metadata"]["name"]] = claim
    return out


def update_identity(s: Obj, pod: Obj) -> None:
    index = ordinal(pod)
    meta = pod["metadata"]
    meta["name"] = f"{s['metadata']['name']}-{index}"
    meta["namespace"] = s["metadata"].get("namespace", "")
    labels = meta.setdefault("labels", {})
    labels[POD_NAME_LABEL] = meta["name"]
    labels[POD_INDEX_LABEL] = str(index)


def update_storage(s: Obj, pod: Obj) -> None:
    claims = claims_for(s, ordinal(pod))
    volumes = [
        {"name": name, "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}
        for name, claim in claims.items()
    ]
    spec = pod.setdefault("spec", {})
    volumes += [v for v in spec.get("volumes") or () if v.get("name") not in claims]
    spec["volumes"] = volumes


def new_pod(s: Obj, index: int, revision: str) -> Obj:
    """kube's newStatefulSetPod: the template, the set as controller, its identity and
    storage, and the revision label."""
    ref = podcontrol.controller_ref(s, API_VERSION, KIND)
    pod = podcontrol.from_template(s["spec"]["template"], s["metadata"]["name"], ref)
    pod = copy.deepcopy(pod)
    pod["metadata"].pop("generateName", None)
    pod["metadata"]["name"] = f"{s['metadata']['name']}-{index}"
    update_identity(s, pod)
    pod["spec"]["hostname"] = pod["metadata"]["name"]
    if s["spec"].get("serviceName"):
        pod["spec"]["subdomain"] = s["spec"]["serviceName"]
    update_storage(s, pod)
    pod["metadata"]["labels"][REVISION_LABEL] = revision
    return pod


def pod_revision(pod: Obj) -> str:
    return str((pod["metadata"].get("labels") or {}).get(REVISION_LABEL, ""))


# -- revisions ------------------------------------------------------------------------------


def revision_hash(data: Obj, collisions: int | None) -> str:
    """kube's HashControllerRevision: FNV-1 (32 bits) over the data's JSON as Go writes
    it, then the collision count's digits; the sum's digits in the safe alphabet."""
    raw = gotext.marshal(data).encode()
    if collisions is not None:
        raw += str(collisions).encode()
    return safe_encode(str(fnv1_32(raw)))


def fnv1_32(raw: bytes) -> int:
    """FNV-1, 32 bits (Go's hash/fnv New32: multiply, then xor)."""
    value = 0x811C9DC5
    for byte in raw:
        value = ((value * 0x01000193) & 0xFFFFFFFF) ^ byte
    return value


def new_revision(s: Obj, number: int, collisions: int | None) -> Obj:
    data = podcontrol.template_patch(s)
    labels = dict(((s["spec"]["template"].get("metadata") or {}).get("labels")) or {})
    digest = revision_hash(data, collisions)
    labels[HASH_LABEL] = digest
    meta: Obj = {
        "name": f"{s['metadata']['name'][:223]}-{digest}",
        "namespace": s["metadata"].get("namespace", ""),
        "labels": labels,
        "ownerReferences": [podcontrol.controller_ref(s, API_VERSION, KIND)],
    }
    if s["metadata"].get("annotations"):
        meta["annotations"] = dict(s["metadata"]["annotations"])
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": meta,
        "data": data,
        "revision": number,
    }


def same_data(a: Obj, b: Obj) -> bool:
    return gotext.marshal(a.get("data")) == gotext.marshal(b.get("data"))


def apply_revision(s: Obj, revision: Obj) -> Obj:
    """The set as it was at ``revision``: its pod template put back."""
    out = copy.deepcopy(s)
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template"))
    if isinstance(template, dict):
        template.pop("$patch", None)
        out["spec"]["template"] = template
    return out


def revision_order(revision: Obj) -> tuple[int, str, str]:
    meta = revision["metadata"]
    return int(revision.get("revision") or 0), meta.get("creationTimestamp", ""), meta["name"]


# -- claims and the retention policy --------------------------------------------------------


def retention_policy(s: Obj) -> tuple[str, str]:
    policy = s["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
    return policy.get("whenDeleted", "Retain"), policy.get("whenScaled", "Retain")


def _matches(ref: Obj, obj: Obj, api_version: str, kind: str) -> bool:
    return (
        ref.get("apiVersion") == api_version
        and ref.get("kind") == kind
        and ref.get("name") == obj["metadata"].get("name")
    )


def _has_ref(claim: Obj, owner: Obj) -> bool:
    uid = owner["metadata"].get("uid")
    return any(r.get("uid") == uid for r in claim["metadata"].get("ownerReferences") or ())


def _stale_ref(claim: Obj, obj: Obj, api_version: str, kind: str) -> bool:
    for ref in claim["metadata"].get("ownerReferences") or ():
        if _matches(ref, obj, api_version, kind):
            return bool(ref.get("uid") != obj["metadata"].get("uid"))
    return False


def stale_for(claim: Obj, pod: Obj) -> bool:
    """The claim names an older pod of the same name as owner (kube's PodClaimIsStale)."""
    return _stale_ref(claim, pod, "v1", "Pod")


def unexpected_controller(claim: Obj, s: Obj, pod: Obj) -> bool:
    if retention_policy(s) == ("Retain", "Retain"):
        return False
    for ref in claim["metadata"].get("ownerReferences") or ():
        for owner, api_version, kind in ((s, API_VERSION, KIND), (pod, "v1", "Pod")):
            if _matches(ref, owner, api_version, kind):
                if ref.get("uid") != owner["metadata"].get("uid"):
                    return True
                break
        else:
            if ref.get("controller"):
                return True
    return False


def owners_up_to_date(claim: Obj, s: Obj, pod: Obj) -> bool:
    """kube's isClaimOwnerUpToDate: the claim's references are what the policy asks."""
    if _stale_ref(claim, s, API_VERSION, KIND) or _stale_ref(claim, pod, "v1", "Pod"):
        return True
    if unexpected_controller(claim, s, pod):
        return not (_has_ref(claim, s) or _has_ref(claim, pod))
    uids = {s["metadata"].get("uid"), pod["metadata"].get("uid")}
    for ref in claim["metadata"].get("ownerReferences") or ():
        if ref.get("uid") in uids and not ref.get("controller"):
            return False
    deleted, scaled = retention_policy(s)
    on_set, on_pod = _has_ref(claim, s), _has_ref(claim, pod)
    scaled_down = not in_range(pod, s)
    if scaled == "Retain":
        return (on_set, on_pod) == (deleted == "Delete", False)
    if deleted == "Retain":
        return not on_set and scaled_down == on_pod
    return scaled_down != on_set and scaled_down == on_pod


def set_owners(claim: Obj, s: Obj, pod: Obj) -> None:
    """kube's updateClaimOwnerRefForSetAndPod."""
    unexpected = unexpected_controller(claim, s, pod)
    refs = [
        r
        for r in claim["metadata"].get("ownerReferences") or ()
        if not (_matches(r, s, API_VERSION, KIND) or _matches(r, pod, "v1", "Pod"))
    ]
    if not unexpected:
        deleted, scaled = retention_policy(s)
        scaled_down = not in_range(pod, s)
        if scaled == "Delete" and scaled_down:
            refs = _add_controller(refs, pod, "v1", "Pod")
        if deleted == "Delete" and (scaled == "Retain" or not scaled_down):
            refs = _add_controller(refs, s, API_VERSION, KIND)
    claim["metadata"]["ownerReferences"] = refs


def _add_controller(refs: list[Obj], owner: Obj, api_version: str, kind: str) -> list[Obj]:
    if any(r.get("uid") == owner["metadata"].get("uid") for r in refs):
        return refs
    return [*refs, podcontrol.controller_ref(owner, api_version, kind)]
