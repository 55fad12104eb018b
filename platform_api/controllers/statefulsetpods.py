"""One sync's work on a StatefulSet's pods (kube's updateStatefulSet with its
StatefulPodControl): every ordinal in range gets its pod and claims, out-of-range pods
go from the highest ordinal down, then the rolling update replaces stale pods.  With
OrderedReady the first pod not yet Running and Ready (and available) stops the sync.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from platform_api.controllers import podcontrol
from platform_api.controllers import statefulsetutil as su
from platform_api.controllers.base import current_object
from platform_api.errors import StatusError

if TYPE_CHECKING:
    from platform_api.controllers.statefulset import StatefulSetController

Obj = dict[str, Any]


def _created(pod: Obj) -> bool:
    return bool((pod.get("status") or {}).get("phase"))


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def _running_and_ready(pod: Obj) -> bool:
    return _phase(pod) == "Running" and podcontrol.is_ready(pod)


class PodStep:
    def __init__(
        self, c: StatefulSetController, s: Obj, current: Obj, update: Obj, pods: list[Obj]
    ) -> None:
        self.c, self.s = c, s
        self.current, self.update = current, update
        self.current_set = su.apply_revision(s, current)
        self.update_set = su.apply_revision(s, update)
        self.now = c.reactor.seconds()
        self.min_ready = s["spec"].get("minReadySeconds") or 0
        self.monotonic = s["spec"].get("podManagementPolicy") != "Parallel"
        first = su.start(s)
        count = su.replicas(s)
        self.replicas: list[Obj] = [{}] * count
        self.condemned: list[Obj] = []
        for pod in pods:
            if su.in_range(pod, s):
                self.replicas[su.ordinal(pod) - first] = pod
            elif su.ordinal(pod) >= 0:
                self.condemned.append(pod)
        for i in range(count):
            if not self.replicas[i]:
                self.replicas[i] = self._versioned(first + i)
        self.condemned.sort(key=su.ordinal, reverse=True)
        self.replaced = 0  # pods deleted for the update (kube's status.CurrentReplicas--)

    def _versioned(self, index: int) -> Obj:
        """kube's newVersionedStatefulSetPod: below the partition (or, without one, below
        the current replica count) a pod of the current revision, else of the update."""
        spec = self.current_set["spec"]
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("rollingUpdate")
        first = su.start(self.current_set)
        current_count = (self.current_set.get("status") or {}).get("currentReplicas", 0)
        below = (
            strategy.get("type", "RollingUpdate") == "RollingUpdate"
            and rolling is None
            and index < first + current_count
        ) or (rolling is not None and index < first + int(rolling.get("partition") or 0))
        if below:
            return su.new_pod(self.current_set, index, self.current["metadata"]["name"])
        return su.new_pod(self.update_set, index, self.update["metadata"]["name"])

    def _unavailable(self, pod: Obj) -> bool:
        return _terminating(pod) or not podcontrol.is_available(pod, self.min_ready, self.now)

    def status(self) -> Obj:
        """kube's computeReplicaStatus over the replicas and the condemned."""
        out = dict.fromkeys(
            (
                "replicas",
                "readyReplicas",
                "availableReplicas",
                "currentReplicas",
                "updatedReplicas",
            ),
            0,
        )
        for pod in [*self.replicas, *self.condemned]:
            if _created(pod):
                out["replicas"] += 1
            if _running_and_ready(pod):
                out["readyReplicas"] += 1
                if podcontrol.is_available(pod, self.min_ready, self.now):
                    out["availableReplicas"] += 1
            if _created(pod) and not _terminating(pod):
                revision = su.pod_revision(pod)
                out["currentReplicas"] += revision == self.current["metadata"]["name"]
                out["updatedReplicas"] += revision == self.update["metadata"]["name"]
        out["currentReplicas"] -= self.replaced
        return out

    async def run(self) -> None:
        if self.s["metadata"].get("deletionTimestamp"):
            return
        first_unavailable = next(
            (p for p in [*self.replicas, *reversed(self.condemned)] if self._unavailable(p)), None
        )
        if await self._for_all(self.replicas, self._replica):
            return
        if await self._for_all(self.condemned, self._fix_claims):
            return

        async def condemn(pod: Obj) -> bool:
            return await self._condemned(pod, first_unavailable)

        if await self._for_all(self.condemned, condemn):
            return
        strategy = self.s["spec"].get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete":
            return
        await self._roll(int((strategy.get("rollingUpdate") or {}).get("partition") or 0))

    async def _for_all(self, pods: list[Obj], step: Any) -> bool:
        """kube's runForAll: in order, stopping where a step says so (OrderedReady), or
        all of them in slow-start batches (Parallel).  True: stop the sync here."""
        if self.monotonic:
            for pod in pods:
                if await step(pod):
                    return True
            return False
        queue = list(pods)

        async def one() -> None:
            await step(queue.pop(0))

        _, error = await podcontrol.slow_start(len(pods), one)
        if error is not None:
            raise error
        return False

    async def _replica(self, pod: Obj) -> bool:
        """kube's processReplica: True when the sync must stop (OrderedReady waits)."""
        if _phase(pod) in ("Failed", "Succeeded"):
            if not _terminating(pod):
                await self._delete(pod)
            return True
        if not _created(pod):
            if self._claim_is_stale(pod):
                return True
            await self._create(pod)
            if self.monotonic:
                return True
        if _phase(pod) == "Pending":
            await self._create_claims(pod)
            await self._retention(pod)
        if self.monotonic and (
            _terminating(pod)
            or not _running_and_ready(pod)
            or not podcontrol.is_available(pod, self.min_ready, self.now)
        ):
            return True
        matches = su.identity_matches(self.s, pod) and su.storage_matches(self.s, pod)
        if matches and self._retention_ok(pod):
            return False
        await self._repair(pod)
        return False

    async def _condemned(self, pod: Obj, first_unavailable: Obj | None) -> bool:
        if _terminating(pod):
            return self.monotonic
        waiting = self.monotonic and pod is not first_unavailable
        if waiting and (
            not _running_and_ready(pod)
            or not podcontrol.is_available(pod, self.min_ready, self.now)
        ):
            return True
        await self._delete(pod)
        return True

    async def _fix_claims(self, pod: Obj) -> bool:
        if not self._retention_ok(pod):
            await self._retention(pod)
        return False

    async def _roll(self, partition: int) -> None:
        """Replace stale pods from the highest ordinal down to the partition, one at a
        time, each only once the ones above it are available."""
        update_name = self.update["metadata"]["name"]
        for pod in reversed(self.replicas[partition:]):
            if su.pod_revision(pod) != update_name and not _terminating(pod):
                await self._delete(pod)
                self.replaced += 1
                return
            if self._unavailable(pod):
                return

    # -- pods and claims ---------------------------------------------------------------

    async def _create(self, pod: Obj) -> None:
        await self._create_claims(pod)
        namespace, name = self.s["metadata"].get("namespace", ""), pod["metadata"]["name"]
        try:
            await self.c.pods.create(namespace, copy.deepcopy(pod))
        except StatusError as e:
            if e.code == 409 and e.reason == "AlreadyExists":
                raise
            self._pod_event("create", name, e)
            raise
        await self._retention(pod)
        self._pod_event("create", name, None)

    async def _delete(self, pod: Obj) -> None:
        meta = pod["metadata"]
        try:
            await self.c.pods.delete(meta.get("namespace", ""), meta["name"])
        except StatusError as e:
            if e.code != 404:
                self._pod_event("delete", meta["name"], e)
                raise
        self._pod_event("delete", meta["name"], None)

    async def _repair(self, pod: Obj) -> None:
        """kube's UpdateStatefulPod: identity, storage and claim owners put right."""
        s = self.update_set

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            if not su.identity_matches(s, existing):
                su.update_identity(s, existing)
            if not su.storage_matches(s, existing):
                su.update_storage(s, existing)
            return existing

        if not su.storage_matches(s, pod):
            await self._create_claims(pod)
        if not self._retention_ok(pod):
            await self._retention(pod)
        meta = pod["metadata"]
        try:
            await self.c.pods.update(meta.get("namespace", ""), meta["name"], change)
        except StatusError as e:
            self._pod_event("update", meta["name"], e)
            raise
        self._pod_event("update", meta["name"], None)

    def _claim(self, name: str) -> Obj | None:
        namespace = self.s["metadata"].get("namespace", "")
        return self.c.claim_index.objects.get(namespace, {}).get(name)

    async def _create_claims(self, pod: Obj) -> None:
        """kube's createPersistentVolumeClaims: each missing claim made; one being
        deleted is an error (the pod would lose its data)."""
        first: Exception | None = None
        for claim in su.claims_for(self.s, su.ordinal(pod)).values():
            name = claim["metadata"]["name"]
            existing = self._claim(name)
            if existing is not None:
                if existing["metadata"].get("deletionTimestamp"):
                    first = first or StatusError(409, "Conflict", f"pvc {name} is being deleted")
                continue
            try:
                await self.c.claims.create(claim["metadata"]["namespace"], claim)
            except StatusError as e:
                if e.code == 409 and e.reason == "AlreadyExists":
                    continue
                self._claim_event(name, pod, e)
                first = first or e
                continue
            self._claim_event(name, pod, None)
        if first is not None:
            raise first

    def _claim_is_stale(self, pod: Obj) -> bool:
        _, scaled = su.retention_policy(self.s)
        if scaled == "Retain":
            return False
        claims = su.claims_for(self.s, su.ordinal(pod)).values()
        return any(
            (found := self._claim(c["metadata"]["name"])) is not None and su.stale_for(found, pod)
            for c in claims
        )

    def _retention_ok(self, pod: Obj) -> bool:
        for claim in su.claims_for(self.update_set, su.ordinal(pod)).values():
            found = self._claim(claim["metadata"]["name"])
            if found is not None and not su.owners_up_to_date(found, self.update_set, pod):
                return False
        return True

    async def _retention(self, pod: Obj) -> None:
        """kube's UpdatePodClaimForRetentionPolicy."""
        s = self.update_set
        live = self._live(pod)
        for claim in su.claims_for(s, su.ordinal(pod)).values():
            name = claim["metadata"]["name"]
            found = self._claim(name)
            if found is None:
                continue
            if su.unexpected_controller(found, s, live):
                message = (
                    f"PersistentVolumeClaim {name} has a conflicting OwnerReference that acts "
                    "as a manging controller, the retention policy is ignored for this claim"
                )
                self.c.record_event(self.s, "Warning", "ConflictingController", message)
            if su.owners_up_to_date(found, s, live):
                continue

            def change(existing: Obj | None) -> Obj:
                assert existing is not None
                su.set_owners(existing, s, live)
                return existing

            await self.c.claims.update(found["metadata"].get("namespace", ""), name, change)

    def _live(self, pod: Obj) -> Obj:
        """The pod as stored (a freshly made one has its uid only there)."""
        namespace = self.s["metadata"].get("namespace", "")
        return self.c.pod_index.objects.get(namespace, {}).get(pod["metadata"]["name"]) or (
            current_object(self.c.pods, namespace, pod["metadata"]["name"]) or pod
        )

    def _pod_event(self, verb: str, pod: str, error: Exception | None) -> None:
        title, name = verb.title(), self.s["metadata"]["name"]
        if error is None:
            message = f"{title} Pod {pod} in StatefulSet {name} successful"
            self.c.record_event(self.s, "Normal", f"Successful{title}", message)
        else:
            text = error.message if isinstance(error, StatusError) else str(error)
            message = f"{title} Pod {pod} in StatefulSet {name} failed error: {text}"
            self.c.record_event(self.s, "Warning", f"Failed{title}", message)

    def _claim_event(self, claim: str, pod: Obj, error: Exception | None) -> None:
        name, pod_name = self.s["metadata"]["name"], pod["metadata"]["name"]
        if error is None:
            message = f"Create Claim {claim} Pod {pod_name} in StatefulSet {name} success"
            self.c.record_event(self.s, "Normal", "SuccessfulCreate", message)
        else:
            text = error.message if isinstance(error, StatusError) else str(error)
            message = f"Create Claim {claim} for Pod {pod_name} in StatefulSet {name} failed error: {text}"
            self.c.record_event(self.s, "Warning", "FailedCreate", message)
