"""Which Nodes a DaemonSet's pod belongs on and what that pod looks like (kube's
daemonset_util and the scheduler predicates the DaemonSet controller runs itself):
nodeName, node selector and required node affinity, NoSchedule/NoExecute taints; the
tolerations every daemon pod gets; the affinity that pins a pod to its Node.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from platform_api.controllers.deploymentutil import scaled_value
from platform_api.controllers.tainteviction import tolerates
from platform_api.registry.apps import TEMPLATE_GENERATION
from platform_api.scheme import nodetaints as nt

Obj = dict[str, Any]
API_VERSION, KIND = "apps/v1", "DaemonSet"
HASH_LABEL = "controller-revision-hash"  # pods and ControllerRevisions
GENERATION_LABEL = "pod-template-generation"
NAME_FIELD = "metadata.name"


def _requirement_matches(req: Obj, value: str | None) -> bool:
    """One node selector requirement against a label (or field) value, None: absent."""
    operator, values = req.get("operator"), req.get("values") or []
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            have, bound = int(value), int(values[0])
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def _term_matches(term: Obj, node: Obj) -> bool:
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not expressions and not fields:
        return False  # an empty term matches nothing
    labels = node["metadata"].get("labels") or {}
    name = node["metadata"].get("name")
    return all(_requirement_matches(r, labels.get(r.get("key", ""))) for r in expressions) and all(
        r.get("key") == NAME_FIELD and _requirement_matches(r, name) for r in fields
    )


def fits_affinity(spec: Obj, node: Obj) -> bool:
    """The pod's nodeSelector and required node affinity admit the Node."""
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    return any(_term_matches(t, node) for t in required.get("nodeSelectorTerms") or ())


def _untolerated(tolerations: list[Obj], taints: list[Obj], effects: tuple[str, ...]) -> bool:
    return any(
        t.get("effect") in effects and not any(tolerates(tol, t) for tol in tolerations)
        for t in taints
    )


def should_run(ds: Obj, node: Obj) -> tuple[bool, bool]:
    """kube's NodeShouldRunDaemonPod: (a pod should start there, one there may stay)."""
    spec = _daemon_spec(ds["spec"]["template"].get("spec") or {})
    name = node["metadata"]["name"]
    if spec.get("nodeName") not in (None, "", name):
        return False, False
    if not fits_affinity(spec, node):
        return False, False
    taints = (node.get("spec") or {}).get("taints") or []
    tolerations = spec.get("tolerations") or []
    if _untolerated(tolerations, taints, (nt.NO_SCHEDULE, nt.NO_EXECUTE)):
        return False, not _untolerated(tolerations, taints, (nt.NO_EXECUTE,))
    return True, True


def _daemon_tolerations(keys: nt.TaintKeys) -> list[tuple[str, str]]:
    return [
        (keys.not_ready, nt.NO_EXECUTE),
        (keys.unreachable, nt.NO_EXECUTE),
        (keys.disk_pressure, nt.NO_SCHEDULE),
        (keys.memory_pressure, nt.NO_SCHEDULE),
        (keys.pid_pressure, nt.NO_SCHEDULE),
        (keys.unschedulable, nt.NO_SCHEDULE),
    ]


# Whether a daemon pod may run on a Node is judged with the tolerations for the taints
# under either prefix (the Node's, branded or kube's, are the control plane's either way).
_EITHER = (nt.BRANDED, nt.UPSTREAM)


# Template spec (by identity) -> it with the daemon tolerations: a sync asks once per
# Node, three times over, and a deep copy each time was most of a sync beside 250 Nodes.
_with_tolerations: dict[int, tuple[Obj, Obj]] = {}


def _daemon_spec(spec: Obj) -> Obj:
    """``with_daemon_tolerations(spec)``, read-only, made once per template object (the
    informer's objects are replaced, never changed in place)."""
    cached = _with_tolerations.get(id(spec))
    if cached is not None and cached[0] is spec:
        return cached[1]
    if len(_with_tolerations) >= 64:
        _with_tolerations.clear()
    made = with_daemon_tolerations(spec, _EITHER)
    _with_tolerations[id(spec)] = (spec, made)
    return made


def with_daemon_tolerations(spec: Obj, keys: Sequence[nt.TaintKeys] = (nt.BRANDED,)) -> Obj:
    """kube's AddOrUpdateDaemonPodTolerations: a daemon pod stays through the node
    conditions the control plane taints for (and network-unavailable with hostNetwork),
    under the taint keys ``keys``."""
    spec = copy.deepcopy(spec)
    wanted = []
    for taint_keys in keys:
        wanted += _daemon_tolerations(taint_keys)
        if spec.get("hostNetwork"):
            wanted.append((taint_keys.network_unavailable, nt.NO_SCHEDULE))
    tolerations = spec.setdefault("tolerations", [])
    for key, effect in wanted:
        toleration = {"key": key, "operator": "Exists", "effect": effect}
        for i, existing in enumerate(tolerations):
            same = (existing.get("key"), existing.get("effect")) == (key, effect)
            if same and (existing.get("operator") or "Equal") == "Exists":
                tolerations[i] = toleration
                break
        else:
            tolerations.append(toleration)
    return spec


def template_generation(ds: Obj) -> str | None:
    return (ds["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION)


def pod_template(ds: Obj, hash_: str, keys: nt.TaintKeys = nt.BRANDED) -> Obj:
    """kube's CreatePodTemplate: the daemon tolerations (for the taints under ``keys``),
    the generation and hash labels."""
    template = copy.deepcopy(ds["spec"]["template"])
    template["spec"] = with_daemon_tolerations(template.get("spec") or {}, (keys,))
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    generation = template_generation(ds)
    if generation is not None:
        labels[GENERATION_LABEL] = generation
    if hash_:
        labels[HASH_LABEL] = hash_
    return template


def pin_to_node(spec: Obj, node_name: str) -> None:
    """kube's ReplaceDaemonSetPodNodeNameNodeAffinity: required affinity to one Node."""
    term = {"matchFields": [{"key": NAME_FIELD, "operator": "In", "values": [node_name]}]}
    affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    required = affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    required["nodeSelectorTerms"] = [term]


def target_node(pod: Obj) -> str | None:
    """kube's GetTargetNodeName: spec.nodeName, else the Node its affinity pins it to."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or ():
        for req in term.get("matchFields") or ():
            if req.get("key") == NAME_FIELD and req.get("operator") == "In":
                values = req.get("values") or []
                return str(values[0]) if len(values) == 1 else None
    return None


def is_updated(pod: Obj, ds: Obj, hash_: str) -> bool:
    labels = pod["metadata"].get("labels") or {}
    generation = template_generation(ds)
    by_generation = generation is not None and labels.get(GENERATION_LABEL) == generation
    return (bool(hash_) and labels.get(HASH_LABEL) == hash_) or by_generation


def surge_and_unavailable(ds: Obj, desired: int) -> tuple[int, int]:
    """kube's SurgeCount and UnavailableCount (percentages rounded up); with neither,
    one may be unavailable."""
    strategy = ds["spec"].get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate")
    if strategy.get("type", "RollingUpdate") != "RollingUpdate" or rolling is None:
        surge = unavailable = 0
    else:
        surge = scaled_value(rolling.get("maxSurge") or 0, desired, True)
        unavailable = scaled_value(rolling.get("maxUnavailable") or 0, desired, True)
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def allows_surge(ds: Obj) -> bool:
    strategy = ds["spec"].get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate")
    if strategy.get("type", "RollingUpdate") != "RollingUpdate" or not rolling:
        return False
    return scaled_value(rolling.get("maxSurge") or 0, 1, True) > 0
