"""kube's resourceclaim-controller (alias ``resource-claim-controller``), for pods.

A pod that might still run gets a claim per template entry of ``spec.resourceClaims``
(found, else made from the template), named in its ``status.resourceClaimStatuses`` by a
forced apply (manager ``ResourceClaimController``); failures are Warning events
``FailedResourceClaimCreation``, retried.  A bound pod's allocated claims are reserved for
it.  A claim loses reservations of pods gone, replaced or done (the last one deallocates it,
with the ``delete-protection`` finalizer) and, unreserved, goes once its pod is done or
replaced.  PodGroup claims (GenericWorkload, off by default) are not handled.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Any

from twisted.logger import Logger

from platform_api import errors
from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.events import EventRecorder
from platform_api.fieldmanager.manager import Who
from platform_api.storage.interface import DELETED, Event, ListOptions

log = Logger()
Obj = dict[str, Any]
GROUP = "resource.platform.io"
POD_CLAIM_NAME = f"{GROUP}/pod-claim-name"  # kube's PodResourceClaimAnnotation
FINALIZER = f"{GROUP}/delete-protection"  # kube's resourceapi.Finalizer
APPLIER = Who("ResourceClaimController", "v1", "status")  # kube's fieldManager
POD = ("v1", "Pod")
MAX_BASE_LEN = 57  # room for a hyphen and generateName's 5 characters in 63
MAX_DELETED_UIDS = 500


class ClaimError(Exception):
    """A pod's claim cannot be handled now: kube's error, retried with backoff."""


class NotCreated(Exception):
    """kube's ErrClaimNotFound: the template claim has no status entry yet."""


def claim_name(pod: Obj, pod_claim: Obj) -> tuple[str | None, bool]:
    """kube's resourceclaim.Name: (the claim's name, None when not needed; whether the
    pod must be its controller)."""
    if pod_claim.get("resourceClaimName") is not None:
        return pod_claim["resourceClaimName"], False
    where = f"{pod['metadata'].get('namespace')}/{pod['metadata']['name']}"
    if pod_claim.get("resourceClaimTemplateName") is not None:
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
            if status.get("name") == pod_claim.get("name"):
                return status.get("resourceClaimName"), True
        raise NotCreated(f'pod "{where}": ResourceClaim not created yet')
    entry = f'spec.resourceClaim "{pod_claim.get("name")}"'
    raise ClaimError(f'pod "{where}", {entry}: none of the supported fields are set')


def named_claims(pod: Obj) -> Iterator[tuple[Obj, str | None, bool]]:
    """The ``spec.resourceClaims`` entries whose claim is known: (entry, name, check owner)."""
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        try:
            name, check_owner = claim_name(pod, pod_claim)
        except (NotCreated, ClaimError):
            continue
        yield pod_claim, name, check_owner


def not_for_pod(pod: Obj, claim: Obj) -> str | None:
    """kube's IsForPod: why the claim is not the pod's (its controller), or None."""
    owners = claim["metadata"].get("ownerReferences") or ()
    if any(o.get("controller") and o.get("uid") == pod["metadata"].get("uid") for o in owners):
        return None
    c, p = claim["metadata"], pod["metadata"]
    what = f"ResourceClaim {c.get('namespace')}/{c['name']}"
    return f"{what} was not created for Pod {p.get('namespace')}/{p['name']} (Pod is not owner)"


def owning_pod(claim: Obj) -> tuple[str, str]:
    """The controlling pod's (name, uid), or ("", "")."""
    for owner in claim["metadata"].get("ownerReferences") or ():
        if owner.get("controller") and (owner.get("apiVersion"), owner.get("kind")) == POD:
            return owner.get("name", ""), owner.get("uid", "")
    return "", ""


def pod_done(pod: Obj) -> bool:
    """kube's isPodDone: none of its containers runs or ever will."""
    terminal = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    deleting = bool(pod["metadata"].get("deletionTimestamp"))
    return terminal or (deleting and not (pod.get("spec") or {}).get("nodeName"))


def must_reserve(pod: Obj, claim: Obj) -> bool:
    """Allocated, and the pod not yet among its consumers."""
    status, uid = claim.get("status") or {}, pod["metadata"].get("uid")
    reserved = any(r.get("uid") == uid for r in status.get("reservedFor") or ())
    return status.get("allocation") is not None and not reserved


def generate_name(pod_name: str, claim: str) -> str:
    """kube's generateName for a template claim, both parts cut in proportion."""
    name = f"{pod_name}-{claim}-"
    whole = len(name)
    if whole > MAX_BASE_LEN:
        name = f"{pod_name[: len(pod_name) * MAX_BASE_LEN // whole]}-"
        name += claim[: len(claim) * MAX_BASE_LEN // whole]
    return name


def claim_from_template(pod: Obj, pod_claim: Obj, template: Obj) -> Obj:
    """The claim kube creates: the template's metadata and spec, the pod as controller
    (no blockOwnerDeletion: kube sets none)."""
    meta = pod["metadata"]
    template_meta = (template.get("spec") or {}).get("metadata") or {}
    annotations = {**(template_meta.get("annotations") or {}), POD_CLAIM_NAME: pod_claim["name"]}
    owner: Obj = {"apiVersion": "v1", "kind": "Pod", "name": meta["name"]}
    owner.update(uid=meta.get("uid", ""), controller=True)
    metadata: Obj = {"generateName": generate_name(meta["name"], pod_claim["name"])}
    metadata.update(ownerReferences=[owner], annotations=annotations)
    if template_meta.get("labels"):
        metadata["labels"] = dict(template_meta["labels"])
    claim: Obj = {"apiVersion": f"{GROUP}/v1", "kind": "ResourceClaim", "metadata": metadata}
    claim["spec"] = (template.get("spec") or {}).get("spec") or {}
    return claim


class ResourceClaimController(Controller):
    """Keys are ("pod" | "claim", namespace, name)."""

    name = "resourceclaim-controller"

    def __init__(self, pods: Any, claims: Any, templates: Any, events: Any, *args: Any) -> None:
        super().__init__(*args)
        self.pods, self.claims, self.templates = pods, claims, templates
        self.events = EventRecorder(events, "resource_claim", self.reactor)
        self.known: dict[tuple[str, str], Obj] = {}  # pods with claims (kube's indexes)
        self.deleted: OrderedDict[str, None] = OrderedDict()  # kube's uidCache
        self.made: dict[tuple[str, str], Obj] = {}  # kube's mutation cache: (pod uid, claim)
        self.failures: dict[Hashable, int] = {}

    def watched(self) -> tuple[bytes, ...]:
        return (self.pods.prefix, self.claims.prefix, self.templates.prefix)

    def resync(self) -> None:
        for stored in self.pods.list("", ListOptions()).items:
            self._pod_changed(stored.object, False)
        for stored in self.claims.list("", ListOptions()).items:
            self._claim_changed(stored.object, False)

    def observe(self, event: Event) -> None:
        if event.stored is None:
            return
        obj, deleted = event.stored.object, event.type == DELETED
        if event.key.startswith(self.pods.prefix):
            self._pod_changed(obj, deleted)
        elif event.key.startswith(self.claims.prefix):
            self._claim_changed(obj, deleted)
        elif event.key.startswith(self.templates.prefix) and not deleted:
            namespace, name = obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
            for pod in self._pods_in(namespace):
                claims = (pod.get("spec") or {}).get("resourceClaims") or ()
                if any(c.get("resourceClaimTemplateName") == name for c in claims):
                    self._pod_changed(pod, False)

    def _pods_in(self, namespace: str) -> list[Obj]:
        return [pod for (ns, _), pod in self.known.items() if ns == namespace]

    def _pod_changed(self, pod: Obj, deleted: bool) -> None:
        """kube's enqueuePod: claims to release, and the pod when it needs work."""
        meta, namespace = pod["metadata"], pod["metadata"].get("namespace", "")
        extended = (pod.get("status") or {}).get("extendedResourceClaimStatus")
        relevant = bool((pod.get("spec") or {}).get("resourceClaims") or extended)
        self.known.pop((namespace, meta["name"]), None)
        if relevant and not deleted:
            self.known[(namespace, meta["name"])] = pod
        if not relevant:
            return
        if deleted:
            self.deleted[meta.get("uid", "")] = None
            while len(self.deleted) > MAX_DELETED_UIDS:
                self.deleted.popitem(last=False)
            self.made = {k: v for k, v in self.made.items() if k[0] != meta.get("uid")}
        if deleted or pod_done(pod):  # kube's podNeedsClaims is false: release them
            for _, name, _ in named_claims(pod):
                if name:
                    self.enqueue(("claim", namespace, name))
            if extended:
                self.enqueue(("claim", namespace, extended.get("resourceClaimName", "")))
        if not deleted and self._needs_work(pod):
            self.enqueue(("pod", namespace, meta["name"]))

    def _needs_work(self, pod: Obj) -> bool:
        """kube's podNeedsWork: a template claim to create, or a claim to reserve."""
        if pod["metadata"].get("deletionTimestamp"):
            return False
        namespace, named = pod["metadata"].get("namespace", ""), list(named_claims(pod))
        if len(named) < len((pod.get("spec") or {}).get("resourceClaims") or ()):
            return True  # a claim to create, or an entry kube cannot read
        for pod_claim, name, check_owner in named:
            claim = current_object(self.claims, namespace, name) if name is not None else None
            if name is None or (check_owner and claim and not_for_pod(pod, claim)):
                continue
            if claim is None and pod_claim.get("resourceClaimTemplateName") is not None:
                return True
            bound = bool((pod.get("spec") or {}).get("nodeName"))
            if claim is not None and bound and must_reserve(pod, claim):
                return True
        return False

    def _claim_changed(self, claim: Obj, deleted: bool) -> None:
        namespace, name = claim["metadata"].get("namespace", ""), claim["metadata"]["name"]
        if not deleted:
            self.enqueue(("claim", namespace, name))
        for pod in self._pods_in(namespace):
            if any(found == name for _, found, _ in named_claims(pod)):
                self._pod_changed(pod, False)

    async def sync(self, key: tuple[str, str, str]) -> float | None:
        """kube's syncHandler; a failure is retried with kube's exponential backoff."""
        kind, namespace, name = key
        try:
            await (self._sync_pod if kind == "pod" else self._sync_claim)(namespace, name)
        except (ClaimError, errors.StatusError) as e:
            failures = self.failures[key] = self.failures.get(key, 0) + 1
            log.info("{name}: work item {key} failed: {e}", name=self.name, key=key, e=e)
            return float(min(0.005 * 2 ** (failures - 1), 1000.0))
        self.failures.pop(key, None)
        return None

    async def _sync_pod(self, namespace: str, name: str) -> None:
        pod = current_object(self.pods, namespace, name)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return
        found: dict[str, str] = {}
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
            try:
                await self._handle_claim(pod, pod_claim, found)
            except (ClaimError, errors.StatusError) as e:
                message = f"PodResourceClaim {pod_claim.get('name')}: {e}"
                reason = "FailedResourceClaimCreation"
                self.events.record(pod, "v1", "Pod", "Warning", reason, message)
                raise ClaimError(f"pod {namespace}/{name}, {message}") from None
        if found:
            await self._apply_statuses(namespace, name, found)
        if (pod.get("spec") or {}).get("nodeName"):
            await self._reserve_for(pod)

    async def _handle_claim(self, pod: Obj, pod_claim: Obj, found: dict[str, str]) -> None:
        """kube's handleClaim: the template claim's name into ``found``, made if need be."""
        namespace = pod["metadata"].get("namespace", "")
        try:
            name, check_owner = claim_name(pod, pod_claim)
        except NotCreated:
            pass
        except ClaimError as e:
            raise ClaimError(f"checking for claim before creating it: {e}") from None
        else:
            if name is None:
                return
            claim = current_object(self.claims, namespace, name) if name else None
            if claim is not None:
                why = not_for_pod(pod, claim) if check_owner else None
                if why is None:
                    return
                log.warn("{why}, creating a new one", why=why)
        template = pod_claim.get("resourceClaimTemplateName")
        if template is None:
            return
        claim = self._find(pod, pod_claim["name"])
        if claim is None:
            claim = await self._create(pod, pod_claim, template)
        found[pod_claim["name"]] = claim["metadata"]["name"]

    def _find(self, pod: Obj, pod_claim: str) -> Obj | None:
        """kube's findPodResourceClaim: a claim the pod controls, made for this entry."""
        namespace, uid = pod["metadata"].get("namespace", ""), pod["metadata"].get("uid", "")
        for stored in self.claims.list(namespace, ListOptions()).items:
            claim: Obj = stored.object
            annotations = claim["metadata"].get("annotations") or {}
            if owning_pod(claim)[1] == uid and annotations.get(POD_CLAIM_NAME) == pod_claim:
                return claim
        return self.made.get((uid, pod_claim))

    async def _create(self, pod: Obj, pod_claim: Obj, template_name: str) -> Obj:
        namespace = pod["metadata"].get("namespace", "")
        template = current_object(self.templates, namespace, template_name)
        if template is None:  # kube's lister error, wrapped
            missing = f'resourceclaimtemplate.{GROUP} "{template_name}" not found'
            raise ClaimError(f'resource claim template "{template_name}": {missing}')
        claim = claim_from_template(pod, pod_claim, template)
        try:
            made: Obj = (await self.claims.create(namespace, claim)).object
        except errors.StatusError as e:  # kube names the claim before it has a name
            raise ClaimError(f"create ResourceClaim : {e}") from None
        self.made[(pod["metadata"].get("uid", ""), pod_claim["name"])] = made
        return made

    async def _apply_statuses(self, namespace: str, name: str, found: dict[str, str]) -> None:
        """kube's ApplyStatus (Force) of ``status.resourceClaimStatuses``, recording its own
        ownership (not the writer's Update); where the store keeps none (a remote one), an
        update merging the entries by name."""
        entries = [{"name": k, "resourceClaimName": v} for k, v in found.items()]
        fields = getattr(self.pods, "field_manager", None)
        config: Obj = {"apiVersion": "v1", "kind": "Pod", "status": {}}
        config["metadata"] = {"name": name, "namespace": namespace}
        config["status"]["resourceClaimStatuses"] = entries

        def write(live: Obj | None) -> Obj:
            assert live is not None  # the status sub-resource never creates
            if fields is not None:
                return fields().apply(live, config, APPLIER, True, self.pods.now())
            status = live.setdefault("status", {})
            kept = [s for s in status.get("resourceClaimStatuses") or () if s["name"] not in found]
            status["resourceClaimStatuses"] = kept + entries
            return live

        own = (lambda old, new: None) if fields is not None else None
        await self.pods.update(namespace, name, write, subresource="status", track=own)

    async def _reserve_for(self, pod: Obj) -> None:
        """A bound pod's allocated claims get the pod in ``reservedFor`` (kube's
        reserveFor: an UpdateStatus of the claim as read)."""
        meta = pod["metadata"]
        for _, name, check_owner in named_claims(pod):
            if name is None:
                continue
            claim = current_object(self.claims, meta.get("namespace", ""), name)
            if claim is None:
                return
            why = not_for_pod(pod, claim) if check_owner else None
            if why is not None:
                raise ClaimError(why)
            if must_reserve(pod, claim):
                consumer = {"resource": "pods", "name": meta["name"], "uid": meta.get("uid", "")}
                claim.setdefault("status", {}).setdefault("reservedFor", []).append(consumer)
                await self._write(claim, "status")

    async def _write(self, claim: Obj, subresource: str = "") -> Obj:
        """kube's Update(Status): the claim as read, so a change in between conflicts."""
        meta = claim["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        stored = await self.claims.update(namespace, name, lambda _: claim, subresource=subresource)
        written: Obj = stored[0].object
        return written

    async def _sync_claim(self, namespace: str, name: str) -> None:
        """kube's syncClaim, for pods."""
        claim = current_object(self.claims, namespace, name)
        if claim is None:
            return
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        remaining = [r for r in reserved if self._keep(namespace, r)]
        finalizers = claim["metadata"].get("finalizers") or []
        deleting = bool(claim["metadata"].get("deletionTimestamp"))
        if len(remaining) < len(reserved):
            claim["status"]["reservedFor"] = remaining
            if not remaining and FINALIZER in finalizers:
                claim["status"].pop("allocation", None)  # the last consumer gone: deallocate
            claim = await self._write(claim, "status")
            finalizers = claim["metadata"].get("finalizers") or []
            if FINALIZER in finalizers and (claim.get("status") or {}).get("allocation") is None:
                claim["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
                await self._write(claim)
        elif FINALIZER in finalizers and deleting and not remaining:
            if (claim.get("status") or {}).get("allocation") is not None:
                claim["status"].pop("allocation")  # allocated, unused, then deleted
                claim = await self._write(claim, "status")
            finalizers = claim["metadata"].get("finalizers") or []
            claim["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
            await self._write(claim)
        if not remaining:
            await self._delete_if_unused(claim)

    def _keep(self, namespace: str, reserved: Obj) -> bool:
        """Whether a reservedFor entry stays: consumers other than pods always do."""
        if reserved.get("apiGroup") or reserved.get("resource") != "pods":
            return True
        if reserved.get("uid") in self.deleted:
            return False
        pod = current_object(self.pods, namespace, reserved.get("name", "")) or {"metadata": {}}
        return pod["metadata"].get("uid") == reserved.get("uid") and not pod_done(pod)

    async def _delete_if_unused(self, claim: Obj) -> None:
        """A claim generated for a pod that is done or was replaced goes now; a pod not
        found is left to the garbage collector, as kube leaves it."""
        pod_name, pod_uid = owning_pod(claim)
        meta = claim["metadata"]
        where = f"{meta.get('namespace')}/{meta['name']}"
        pod = current_object(self.pods, meta.get("namespace", ""), pod_name) if pod_name else None
        if pod is None or (pod["metadata"].get("uid") == pod_uid and not pod_done(pod)):
            return
        try:
            await self.claims.delete(meta.get("namespace", ""), meta["name"])
        except errors.StatusError as e:
            raise ClaimError(f"delete unused generated claim {where}: {e}") from None
