"""What the workload controllers share about the pods they own (kube's controller_utils
and ControllerRefManager): pods from a template, which pods count, which go first when
there are too many, adoption and release, and kube's expectations.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Coroutine
from typing import Any

from twisted.internet.defer import DeferredList, ensureDeferred

from platform_api.controllers.base import current_object, status_condition
from platform_api.controllers.informer import controller_of
from platform_api.errors import StatusError
from platform_api.registry.podannotations import deletion_cost
from platform_api.selectors import LabelSelector, SelectorError, label_selector_from
from platform_api.timestamps import parse_timestamp
from platform_api.validation.names import is_dns1123_subdomain

Obj = dict[str, Any]
EXPECTATIONS_TIMEOUT = 300.0  # kube's ExpectationsTimeout: a lost event is waited for 5 min
BURST_REPLICAS = 500  # kube-controller-manager's burstReplicas
_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}


def controller_ref(owner: Obj, api_version: str, kind: str) -> Obj:
    meta = owner["metadata"]
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def resolve(index: Any, obj: Obj, kind: str, api_version: str | None = None) -> Obj | None:
    """The owner that controls ``obj``, from an index of owners by namespace and name, if
    it is of ``kind`` (and ``api_version``) and still the same object (kube's
    resolveControllerRef)."""
    ref = controller_of(obj)
    if ref is None or ref.get("kind") != kind:
        return None
    if api_version is not None and ref.get("apiVersion") != api_version:
        return None
    namespace = obj["metadata"].get("namespace", "")
    owner: Obj | None = index.objects.get(namespace, {}).get(ref.get("name", ""))
    if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
        return None
    return owner


def template_patch(owner: Obj) -> Obj:
    """What a StatefulSet's or DaemonSet's ControllerRevision holds (kube's getPatch): the
    pod template, to be applied whole."""
    template = copy.deepcopy(owner["spec"]["template"])
    return {"spec": {"template": {**template, "$patch": "replace"}}}


def from_template(template: Obj, owner_name: str, ref: Obj) -> Obj:
    """kube's GetPodFromTemplate: the template's labels, annotations, finalizers and
    spec; a name generated from the owner's; the owner as controller."""
    meta = template.get("metadata") or {}
    prefix = f"{owner_name}-"
    if is_dns1123_subdomain(f"{owner_name}a"):  # kube's ValidatePodName(prefix, true)
        prefix = owner_name
    pod_meta: Obj = {"generateName": prefix, "ownerReferences": [ref]}
    for field in ("labels", "annotations"):
        if meta.get(field):
            pod_meta[field] = dict(meta[field])
    if meta.get("finalizers"):
        pod_meta["finalizers"] = list(meta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": template["spec"]}


def is_active(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def is_terminating(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and bool(pod["metadata"].get("deletionTimestamp"))


def is_ready(pod: Obj) -> bool:
    condition = status_condition(pod, "Ready")
    return condition is not None and condition.get("status") == "True"


def ready_since(pod: Obj) -> float | None:
    condition = status_condition(pod, "Ready")
    if condition is None or condition.get("status") != "True":
        return None
    return parse_timestamp(condition.get("lastTransitionTime"))


def is_available(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    """Ready for at least ``min_ready_seconds`` (kube's IsPodAvailable)."""
    if not is_ready(pod):
        return False
    if min_ready_seconds == 0:
        return True
    since = ready_since(pod)
    return since is not None and since + min_ready_seconds <= now


def _restarts(pod: Obj) -> tuple[int, int]:
    status = pod.get("status") or {}
    regular = max(
        (c.get("restartCount", 0) for c in status.get("containerStatuses") or ()), default=0
    )
    sidecars = {
        c.get("name")
        for c in (pod.get("spec") or {}).get("initContainers") or ()
        if c.get("restartPolicy") == "Always"
    }
    sidecar = max(
        (
            c.get("restartCount", 0)
            for c in status.get("initContainerStatuses") or ()
            if c.get("name") in sidecars
        ),
        default=0,
    )
    return regular, sidecar


def _log_rank(timestamp: float, now: float) -> int:
    """kube's LogarithmicScaleDown buckets: log2 of the age in nanoseconds."""
    age = (now - timestamp) * 1e9
    return int(math.log2(age)) if age > 0 else -1


def _by_age(t1: float | None, t2: float | None, now: float, uids: tuple[str, str]) -> int:
    """Newer first, a missing time before any; within one log2 bucket, by uid."""
    if t1 is None or t2 is None:
        return -1 if t1 is None else 1
    diff = _log_rank(t1, now) - _log_rank(t2, now)
    if diff == 0:
        return -1 if uids[0] < uids[1] else 1
    return -1 if diff < 0 else 1


def _deletion_cost(pod: Obj) -> int:
    """kube's getPodDeletionCost: what does not read as one costs 0."""
    return deletion_cost(pod["metadata"].get("annotations") or {}) or 0


def deletion_order(pods: list[Obj], colocated: dict[str, int], now: float) -> list[Obj]:
    """Pods to delete first, first (kube's ActivePodsWithRanks.Less with its default
    gates): unscheduled; pending, unknown, running; not ready; lower deletion cost; more
    active siblings on the same node; ready more recently; more restarts; newer."""

    def less(a: Obj, b: Obj) -> int:  # kube's rules, in kube's order
        node_a, node_b = (p.get("spec", {}).get("nodeName") or "" for p in (a, b))
        if node_a != node_b and not (node_a and node_b):
            return -1 if not node_a else 1
        phase_a, phase_b = (
            _PHASE_ORDER.get((p.get("status") or {}).get("phase") or "", -1) for p in (a, b)
        )
        if phase_a != phase_b:
            return -1 if phase_a < phase_b else 1
        if is_ready(a) != is_ready(b):
            return -1 if not is_ready(a) else 1
        if _deletion_cost(a) != _deletion_cost(b):
            return -1 if _deletion_cost(a) < _deletion_cost(b) else 1
        rank_a, rank_b = colocated.get(node_a, 0), colocated.get(node_b, 0)
        if rank_a != rank_b:
            return -1 if rank_a > rank_b else 1
        uids = (a["metadata"].get("uid", ""), b["metadata"].get("uid", ""))
        if is_ready(a) and is_ready(b):
            since_a, since_b = ready_since(a), ready_since(b)
            if since_a != since_b:
                return _by_age(since_a, since_b, now, uids)
        if _restarts(a) != _restarts(b):
            return -1 if _restarts(a) > _restarts(b) else 1
        created_a, created_b = (
            parse_timestamp(p["metadata"].get("creationTimestamp")) for p in (a, b)
        )
        if created_a != created_b:
            return _by_age(created_a, created_b, now, uids)
        return 0

    return sorted(pods, key=functools.cmp_to_key(less))


async def slow_start(
    count: int, call: Callable[[], Coroutine[Any, Any, None]]
) -> tuple[int, Exception | None]:
    """kube's slowStartBatch: batches of 1, 2, 4, ... calls; the first failing batch
    ends it.  Returns (calls that succeeded, the first error)."""
    done, batch = 0, 1
    while done < count:
        size = min(batch, count - done)
        results: list[tuple[bool, Any]] = await DeferredList(
            [ensureDeferred(call()) for _ in range(size)], consumeErrors=True
        )
        failures = [r for ok, r in results if not ok]
        done += size - len(failures)
        if failures:
            return done, failures[0].value
        batch *= 2
    return done, None


def terminating_namespace(error: Exception) -> bool:
    """A create refused because the namespace is going (kube's NamespaceTerminatingCause)."""
    if not isinstance(error, StatusError) or not error.details:
        return False
    causes = error.details.get("causes") or ()
    return any(c.get("reason") == "NamespaceTerminating" for c in causes)


class Expectations:
    """kube's ControllerExpectations: creates and deletes a sync has made and the watch
    has not shown yet; until they are seen (or 5 minutes pass) the owner is not resized
    again, so a lagging view never makes it create twice."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._adds: dict[Any, int] = {}
        self._deletes: dict[Any, set[str]] = {}
        self._since: dict[Any, float] = {}

    def satisfied(self, key: Any) -> bool:
        if key not in self._since:
            return True
        if self._adds.get(key, 0) <= 0 and not self._deletes.get(key):
            return True
        return self.clock() - self._since[key] > EXPECTATIONS_TIMEOUT

    def expect(self, key: Any, adds: int = 0, deletes: set[str] | None = None) -> None:
        self._adds[key] = adds
        self._deletes[key] = set(deletes or ())
        self._since[key] = self.clock()

    def created(self, key: Any) -> None:
        if key in self._adds:
            self._adds[key] -= 1

    def deleted(self, key: Any, pod_name: str) -> None:
        self._deletes.get(key, set()).discard(pod_name)

    def forget(self, key: Any) -> None:
        for table in (self._adds, self._deletes, self._since):
            table.pop(key, None)


def spec_selector(owner: Obj) -> LabelSelector | None:
    """The owner's ``spec.selector``; None (selects nothing) when absent or unusable."""
    selector = (owner.get("spec") or {}).get("selector")
    if selector is None:
        return None
    try:
        return label_selector_from(selector)
    except SelectorError:
        return None


def matches(selector: LabelSelector | None, obj: Obj) -> bool:
    return selector is not None and selector.matches(obj["metadata"].get("labels") or {})


class Claims:
    """kube's ControllerRefManager: which dependents (pods of a ReplicaSet, ReplicaSets
    of a Deployment) an owner claims.  Its own that match; orphans that match, adopted
    (after a fresh read shows the owner is still there and not going); its own that no
    longer match, released (unless the owner is going)."""

    def __init__(
        self, owners: Any, dependents: Any, api_version: str, kind: str, finalizer: str = ""
    ) -> None:
        self.owners, self.dependents = owners, dependents
        self.api_version, self.kind = api_version, kind
        self.finalizer = finalizer  # added on adoption (a Job's pod-tracking finalizer)

    async def claim(self, owner: Obj, selector: LabelSelector | None, objs: list[Obj]) -> list[Obj]:
        uid = owner["metadata"]["uid"]
        deleting = bool(owner["metadata"].get("deletionTimestamp"))
        claimed: list[Obj] = []
        for obj in objs:
            ref = controller_of(obj)
            if ref is not None and ref.get("uid") != uid:
                continue
            matched = matches(selector, obj)
            if ref is not None:
                if matched:
                    claimed.append(obj)
                elif not deleting:
                    await self._set_controller(obj, uid, None)
            elif matched and not deleting and not obj["metadata"].get("deletionTimestamp"):
                adopted = await self._adopt(owner, obj)
                if adopted is not None:
                    claimed.append(adopted)
        return claimed

    async def _adopt(self, owner: Obj, obj: Obj) -> Obj | None:
        meta = owner["metadata"]
        fresh = current_object(self.owners, meta.get("namespace", ""), meta["name"])
        if fresh is None or fresh["metadata"]["uid"] != meta["uid"]:
            return None
        if fresh["metadata"].get("deletionTimestamp"):
            return None  # kube's RecheckDeletionTimestamp: a going owner adopts nothing
        ref = controller_ref(owner, self.api_version, self.kind)
        return await self._set_controller(obj, obj["metadata"]["uid"], ref)

    async def _set_controller(self, obj: Obj, expect_uid: str, ref: Obj | None) -> Obj | None:
        """Adopt (``ref``: add it to an orphan whose uid is ``expect_uid``) or release
        (drop the reference to ``expect_uid``); None when the object went or changed
        hands meanwhile."""
        meta = obj["metadata"]

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            refs = existing["metadata"].get("ownerReferences") or []
            if ref is not None:
                if existing["metadata"].get("uid") != expect_uid or controller_of(existing):
                    raise StatusError(409, "Conflict", "the object changed owner or identity")
                existing["metadata"]["ownerReferences"] = [*refs, ref]
                finalizers = existing["metadata"].get("finalizers") or []
                if self.finalizer and self.finalizer not in finalizers:
                    existing["metadata"]["finalizers"] = [*finalizers, self.finalizer]
            else:
                kept = [r for r in refs if r.get("uid") != expect_uid]
                existing["metadata"]["ownerReferences"] = kept
            return existing

        try:
            stored, _ = await self.dependents.update(
                meta.get("namespace", ""), meta["name"], change
            )
        except StatusError as e:
            if e.code in (404, 409):
                return None
            raise
        claimed: Obj = stored.object
        return claimed


class PodControl:
    """kube's RealPodControl: a controller's pod creates and deletes, each reported as an
    Event on its owner (SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete)."""

    def __init__(self, pods: Any, record: Callable[[Obj, str, str, str], None]) -> None:
        self.pods = pods
        self.record = record  # (owner, type, reason, message)

    async def create(self, namespace: str, pod: Obj, owner: Obj) -> Obj | None:
        """The pod made; None when the namespace is going (every create would fail, so
        nothing is reported).  Other refusals are reported and raised."""
        try:
            made = await self.pods.create(namespace, pod)
        except StatusError as e:
            if terminating_namespace(e):
                return None
            self.record(owner, "Warning", "FailedCreate", f"Error creating: {e.message}")
            raise
        obj: Obj = made.object
        self.record(owner, "Normal", "SuccessfulCreate", f"Created pod: {obj['metadata']['name']}")
        return obj

    async def delete(self, namespace: str, name: str, owner: Obj) -> bool:
        """False when it was gone already; other refusals are reported and raised."""
        try:
            await self.pods.delete(namespace, name)
        except StatusError as e:
            if e.code == 404:
                return False
            self.record(owner, "Warning", "FailedDelete", f"Error deleting: {e.message}")
            raise
        self.record(owner, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
        return True
