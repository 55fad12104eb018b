"""replicaset-controller and replicationcontroller-controller (kube's ReplicaSetController,
which serves both kinds): keep ``spec.replicas`` pods matching the selector, adopt
orphans that match, release pods that stopped matching, and report what exists in
``status``.

Pods are created and deleted through the API (``ControllerContext.through_api``), so
admission treats them as any client's pods.  Creates go in kube's slow-start batches (1,
2, 4, ...; the first failing batch stops the rest), at most 500 a sync; deletions take
kube's ranking (unscheduled, pending, not ready, ... first).  Until the watch shows what a
sync created or deleted, the owner is not resized again (kube's expectations).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from platform_api.controllers import podcontrol
from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.events import EventRecorder
from platform_api.controllers.informer import ByNamespace
from platform_api.errors import StatusError
from platform_api.registry.store import Store, resource_prefix
from platform_api.selectors import LabelSelector, Requirement
from platform_api.storage.interface import Event
from platform_api.timers import timer_clock
from platform_api.timestamps import format_timestamp

Obj = dict[str, Any]
Key = tuple[str, str]
MAX_BACKOFF = 60.0


@dataclass(frozen=True)
class WorkloadKind:
    api_version: str
    kind: str
    component: str
    terminating_replicas: bool  # ReplicaSets report status.terminatingReplicas; RCs do not

    def selector(self, owner: Obj) -> LabelSelector | None:
        spec = owner.get("spec") or {}
        if self.kind == "ReplicationController":
            labels = spec.get("selector") or {}
            return LabelSelector([Requirement(k, "=", (v,)) for k, v in labels.items()])
        return podcontrol.spec_selector(owner)  # kube: a nil selector selects nothing


REPLICA_SET = WorkloadKind("apps/v1", "ReplicaSet", "replicaset-controller", True)
REPLICATION_CONTROLLER = WorkloadKind(
    "v1", "ReplicationController", "replicationcontroller-controller", False
)


class ReplicaSetController(Controller):
    def __init__(
        self,
        owners: Store,
        pods: Store,
        events: Store,
        kind: WorkloadKind,
        *args: Any,
    ) -> None:
        super().__init__(*args)
        self.name = kind.component
        self.kind = kind
        self.owners, self.pods = owners, pods  # writes through the API
        self.owner_index, self.pod_index = ByNamespace(owners), ByNamespace(pods, owners=True)
        self.owner_prefix, self.pod_prefix = (
            resource_prefix(owners.resource),
            resource_prefix(pods.resource),
        )
        self.events = EventRecorder(events, kind.component, self.reactor)
        self.pod_control = podcontrol.PodControl(pods, self._event)
        self.expectations = podcontrol.Expectations(timer_clock(self.reactor))
        self.claims = podcontrol.Claims(owners, pods, kind.api_version, kind.kind)
        self._failures: dict[Key, int] = {}

    # -- events ------------------------------------------------------------------------

    def resync(self) -> None:
        self.pod_index.load()
        for owner in self.owner_index.load():
            self.enqueue(_key(owner))

    def watched(self) -> tuple[bytes, ...]:
        return (self.owner_prefix, self.pod_prefix)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.owner_prefix):
            old, new = self.owner_index.apply(event)
            if old is not None or new is not None:
                self.enqueue(_key(new or old))  # type: ignore[arg-type]
        elif event.key.startswith(self.pod_prefix):
            old, new = self.pod_index.apply(event)
            if old is not None or new is not None:
                self._pod_changed(old, new)

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        """kube's addPod/updatePod/deletePod: wake the pod's controller, or for an
        orphan every owner whose selector it matches; count what was expected."""
        pod = new or old
        assert pod is not None
        name = pod["metadata"]["name"]
        for obj in (old, new):
            if obj is None:
                continue
            owner = self._owner_of(obj)
            if owner is not None:
                key = _key(owner)
                if obj is new and old is None:
                    self.expectations.created(key)
                gone = new is None or (new["metadata"].get("deletionTimestamp") and obj is new)
                if gone:
                    self.expectations.deleted(key, name)
                self.enqueue(key)
            elif podcontrol.controller_of(obj) is None and podcontrol.is_active(obj):
                for candidate in self.owner_index.in_namespace(
                    obj["metadata"].get("namespace", "")
                ):
                    if podcontrol.matches(self.kind.selector(candidate), obj):
                        self.enqueue(_key(candidate))

    def _owner_of(self, pod: Obj) -> Obj | None:
        return podcontrol.resolve(self.owner_index, pod, self.kind.kind)

    # -- sync --------------------------------------------------------------------------

    async def sync(self, key: Key) -> float | None:
        namespace, name = key
        owner = current_object(self.owners, namespace, name)
        if owner is None:
            self.expectations.forget(key)
            self._failures.pop(key, None)
            return None
        selector = self.kind.selector(owner)
        uid = owner["metadata"]["uid"]
        mine = self.pod_index.candidates(namespace, uid)
        active = await self.claims.claim(
            owner, selector, [p for p in mine if podcontrol.is_active(p)]
        )
        terminating = [
            p
            for p in mine
            if podcontrol.is_terminating(p)
            and podcontrol.controller_of(p) is not None
            and podcontrol.matches(selector, p)
        ]
        error: Exception | None = None
        if self.expectations.satisfied(key) and not owner["metadata"].get("deletionTimestamp"):
            error = await self._manage(key, owner, active)
        written = await self._write_status(owner, self._status(owner, active, terminating, error))
        if error is not None:
            failures = self._failures[key] = self._failures.get(key, 0) + 1
            return min(0.005 * 2**failures, MAX_BACKOFF)  # kube's per-item backoff
        self._failures.pop(key, None)
        return self._availability_check(written or owner, active)

    async def _manage(self, key: Key, owner: Obj, active: list[Obj]) -> Exception | None:
        """kube's manageReplicas: create or delete the difference, at most 500 a sync."""
        want = _replicas(owner)
        diff = len(active) - want
        if diff < 0:
            return await self._create(key, owner, min(-diff, podcontrol.BURST_REPLICAS))
        if diff > 0:
            return await self._delete(key, owner, active, min(diff, podcontrol.BURST_REPLICAS))
        return None

    async def _create(self, key: Key, owner: Obj, count: int) -> Exception | None:
        self.expectations.expect(key, adds=count)
        namespace = owner["metadata"].get("namespace", "")
        ref = podcontrol.controller_ref(owner, self.kind.api_version, self.kind.kind)
        template = podcontrol.from_template(
            owner["spec"]["template"], owner["metadata"]["name"], ref
        )

        async def create_one() -> None:
            await self.pod_control.create(namespace, copy.deepcopy(template), owner)

        done, error = await podcontrol.slow_start(count, create_one)
        for _ in range(count - done):  # never made: the watch will not show them
            self.expectations.created(key)
        return error

    async def _delete(
        self, key: Key, owner: Obj, active: list[Obj], count: int
    ) -> Exception | None:
        namespace = owner["metadata"].get("namespace", "")
        colocated: dict[str, int] = {}
        for pod in self._related_pods(owner):
            if podcontrol.is_active(pod):
                node = (pod.get("spec") or {}).get("nodeName") or ""
                colocated[node] = colocated.get(node, 0) + 1
        victims = podcontrol.deletion_order(active, colocated, self.reactor.seconds())[:count]
        self.expectations.expect(key, deletes={p["metadata"]["name"] for p in victims})
        first: Exception | None = None
        for pod in victims:
            name = pod["metadata"]["name"]
            try:
                if not await self.pod_control.delete(namespace, name, owner):
                    self.expectations.deleted(key, name)
            except StatusError as e:
                self.expectations.deleted(key, name)
                first = first or e
        return first

    def _related_pods(self, owner: Obj) -> list[Obj]:
        """Pods of this owner and of its siblings (same controller, e.g. one Deployment's
        ReplicaSets): spreading deletions over nodes counts them all."""
        namespace = owner["metadata"].get("namespace", "")
        parent = podcontrol.controller_of(owner)
        siblings = [owner]
        if parent is not None:
            siblings = [
                o
                for o in self.owner_index.in_namespace(namespace)
                if (r := podcontrol.controller_of(o)) is not None
                and r.get("uid") == parent.get("uid")
            ]
        seen: dict[str, Obj] = {}
        pods = self.pod_index.in_namespace(namespace)
        for sibling in siblings:
            selector = self.kind.selector(sibling)
            for pod in pods:
                if podcontrol.matches(selector, pod):
                    seen.setdefault(pod["metadata"]["uid"], pod)
        return list(seen.values())

    # -- status ------------------------------------------------------------------------

    def _status(
        self, owner: Obj, active: list[Obj], terminating: list[Obj], error: Exception | None
    ) -> Obj:
        """kube's calculateStatus."""
        status = copy.deepcopy(owner.get("status") or {})
        spec = owner.get("spec") or {}
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        min_ready = spec.get("minReadySeconds") or 0
        now = self.reactor.seconds()
        labelled = sum(
            1
            for p in active
            if all(
                (p["metadata"].get("labels") or {}).get(k) == v for k, v in template_labels.items()
            )
        )
        ready = sum(1 for p in active if podcontrol.is_ready(p))
        available = sum(1 for p in active if podcontrol.is_available(p, min_ready, now))
        conditions = [
            c for c in status.get("conditions") or () if c.get("type") != "ReplicaFailure"
        ]
        failure = next(
            (c for c in status.get("conditions") or () if c.get("type") == "ReplicaFailure"), None
        )
        if error is not None:
            if failure is None:
                reason = "FailedCreate" if len(active) < _replicas(owner) else "FailedDelete"
                message = error.message if isinstance(error, StatusError) else str(error)
                failure = {
                    "type": "ReplicaFailure",
                    "status": "True",
                    "lastTransitionTime": format_timestamp(now),
                    "reason": reason,
                    "message": message,
                }
            conditions.append(failure)
        status.update(
            replicas=len(active),
            fullyLabeledReplicas=labelled,
            readyReplicas=ready,
            availableReplicas=available,
        )
        if self.kind.terminating_replicas:
            status["terminatingReplicas"] = len(terminating)
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
        return _omit_zeros(status)

    async def _write_status(self, owner: Obj, status: Obj) -> Obj | None:
        """kube's updateReplicaSetStatus: written only when it changed (or the
        generation moved), with the generation the sync acted on."""
        meta = owner["metadata"]
        generation = meta.get("generation", 0)
        current = _omit_zeros(copy.deepcopy(owner.get("status") or {}))
        current.pop("observedGeneration", None)
        if (
            current == status
            and (owner.get("status") or {}).get("observedGeneration") == generation
        ):
            return None
        status = {**status, "observedGeneration": generation} if generation else status

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("uid") != meta.get("uid"):
                raise StatusError(409, "Conflict", "the object was replaced")
            existing["status"] = status
            return existing

        try:
            stored, _ = await self.owners.update(
                meta.get("namespace", ""), meta["name"], change, subresource="status"
            )
        except StatusError as e:
            if e.code in (404, 409):
                return None
            raise
        return stored.copy()  # the sync goes on with it

    def _availability_check(self, owner: Obj, active: list[Obj]) -> float | None:
        """With minReadySeconds, a pod ready now becomes available later: look again then."""
        min_ready = (owner.get("spec") or {}).get("minReadySeconds") or 0
        status = owner.get("status") or {}
        if not min_ready or status.get("readyReplicas", 0) == status.get("availableReplicas", 0):
            return None
        now = self.reactor.seconds()
        waits = [
            since + min_ready - now
            for p in active
            if (since := podcontrol.ready_since(p)) is not None and since + min_ready > now
        ]
        return max(min(waits), 0.0) if waits else float(min_ready)

    def _event(self, owner: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(owner, self.kind.api_version, self.kind.kind, type_, reason, message)


def _key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def _replicas(owner: Obj) -> int:
    value = (owner.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def _omit_zeros(status: Obj) -> Obj:
    """Go's omitempty: zero counts are not written (``replicas`` always is, and
    ``terminatingReplicas``, a pointer, whenever it is set)."""
    kept = ("replicas", "terminatingReplicas")
    return {k: v for k, v in status.items() if v not in (0, None) or k in kept}
