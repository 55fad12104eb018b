"""statefulset-controller (kube's StatefulSetController): pods with a stable identity
``<set>-<ordinal>`` and their own claims, made in order (OrderedReady: each one Running
and Ready before the next; Parallel: all at once), removed from the highest ordinal
down, and replaced one at a time from the highest ordinal when the template changes
(RollingUpdate above ``partition``; OnDelete waits for the user to delete them).

Each pod template is kept as a ControllerRevision; ``status.currentRevision`` and
``updateRevision`` name them, ``revisionHistoryLimit`` bounds the rest.  Claims come from
``volumeClaimTemplates`` and outlive the pods unless the retention policy says
otherwise (owner references the garbage collector follows).  Pods and claims are made
through the API, so admission applies to them.
"""

from __future__ import annotations

import copy
from typing import Any

from platform_api.controllers import podcontrol
from platform_api.controllers import statefulsetutil as su
from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.events import EventRecorder
from platform_api.controllers.informer import ByNamespace
from platform_api.controllers.statefulsetpods import PodStep
from platform_api.errors import StatusError
from platform_api.registry.store import Store, resource_prefix
from platform_api.storage.interface import Event

Obj = dict[str, Any]
Key = tuple[str, str]
COMPONENT = "statefulset-controller"
MAX_BACKOFF = 60.0


class StatefulSetController(Controller):
    name = COMPONENT

    def __init__(
        self, sets: Store, pods: Store, claims: Store, revisions: Store, events: Store, *args: Any
    ) -> None:
        super().__init__(*args)
        self.sets, self.pods, self.claims, self.revisions = sets, pods, claims, revisions
        self.set_index, self.pod_index = ByNamespace(sets), ByNamespace(pods, owners=True)
        self.claim_index = ByNamespace(claims)
        self.revision_index = ByNamespace(revisions, owners=True)
        self.prefixes = {
            "set": resource_prefix(sets.resource),
            "pod": resource_prefix(pods.resource),
            "claim": resource_prefix(claims.resource),
            "revision": resource_prefix(revisions.resource),
        }
        self.events = EventRecorder(events, COMPONENT, self.reactor)
        self.pod_claims = podcontrol.Claims(sets, pods, su.API_VERSION, su.KIND)
        self.revision_claims = podcontrol.Claims(sets, revisions, su.API_VERSION, su.KIND)
        self._failures: dict[Key, int] = {}

    # -- events ------------------------------------------------------------------------

    def resync(self) -> None:
        self.pod_index.load()
        self.claim_index.load()
        self.revision_index.load()
        for s in self.set_index.load():
            self.enqueue(_key(s))

    def watched(self) -> tuple[bytes, ...]:
        return tuple(self.prefixes.values())

    def observe(self, event: Event) -> None:
        key = event.key
        if key.startswith(self.prefixes["set"]):
            old, new = self.set_index.apply(event)
            if old is not None or new is not None:
                self.enqueue(_key(new or old))  # type: ignore[arg-type]
        elif key.startswith(self.prefixes["pod"]):
            old, new = self.pod_index.apply(event)
            if old is not None or new is not None:
                self._pod_changed(old, new)
        elif key.startswith(self.prefixes["claim"]):
            self.claim_index.apply(event)
        elif key.startswith(self.prefixes["revision"]):
            self.revision_index.apply(event)

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        for obj in (old, new):
            if obj is None:
                continue
            owner = self._owner_of(obj)
            if owner is not None:
                self.enqueue(_key(owner))
                if obj is new and old is not None and new is not None:
                    became_ready = podcontrol.is_ready(new) and not podcontrol.is_ready(old)
                    min_ready = owner["spec"].get("minReadySeconds") or 0
                    if became_ready and min_ready:
                        self.enqueue(_key(owner), float(min_ready))
            elif obj is new and podcontrol.controller_of(obj) is None:
                namespace = obj["metadata"].get("namespace", "")
                for candidate in self.set_index.in_namespace(namespace):
                    if podcontrol.matches(podcontrol.spec_selector(candidate), obj):
                        self.enqueue(_key(candidate))

    def _owner_of(self, obj: Obj) -> Obj | None:
        return podcontrol.resolve(self.set_index, obj, su.KIND)

    # -- sync --------------------------------------------------------------------------

    async def sync(self, key: Key) -> float | None:
        namespace, name = key
        s = current_object(self.sets, namespace, name)
        if s is None:
            self._failures.pop(key, None)
            return None
        selector = podcontrol.spec_selector(s)
        if selector is None:
            return None  # kube: an unusable selector is not retried
        try:
            revisions = await self._claimed(s, selector, self.revision_index, self.revision_claims)
            pods = await self._claimed(s, selector, self.pod_index, self.pod_claims)
            status = await self._update(s, pods, revisions)
        except StatusError:
            failures = self._failures[key] = self._failures.get(key, 0) + 1
            return min(0.005 * 2**failures, MAX_BACKOFF)
        self._failures.pop(key, None)
        return _availability_recheck(s, status, pods, self.reactor.seconds())

    async def _claimed(self, s: Obj, selector: Any, index: ByNamespace, claims: Any) -> list:
        uid = s["metadata"]["uid"]
        candidates = index.candidates(s["metadata"].get("namespace", ""), uid)
        if index is self.pod_index:
            candidates = [p for p in candidates if su.is_member(s, p)]
        claimed: list[Obj] = await claims.claim(s, selector, candidates)
        return claimed

    async def _update(self, s: Obj, pods: list[Obj], revisions: list[Obj]) -> Obj:
        """kube's UpdateStatefulSet: revisions, pods, status, then old history trimmed."""
        s = copy.deepcopy(s)
        revisions.sort(key=su.revision_order)
        current, update, collisions = await self._revisions(s, revisions)
        status, error = await self._pods(s, current, update, collisions, pods)
        await self._write_status(s, status)
        await self._trim_history(s, pods, revisions, current, update)
        if error is not None:
            raise error
        return status

    async def _revisions(self, s: Obj, revisions: list[Obj]) -> tuple[Obj, Obj, int]:
        """kube's getStatefulSetRevisions: (current, update, collision count)."""
        collisions = int((s.get("status") or {}).get("collisionCount") or 0)
        number = int(revisions[-1].get("revision") or 0) + 1 if revisions else 1
        proposed = su.new_revision(s, number, collisions)
        equal = [r for r in revisions if su.same_data(r, proposed)]
        if equal and equal[-1] is revisions[-1]:
            update = revisions[-1]
        elif equal:
            update = await self._renumber(equal[-1], number)
        else:
            update, collisions = await self._create_revision(s, proposed, collisions)
        wanted = (s.get("status") or {}).get("currentRevision")
        current = next((r for r in revisions if r["metadata"]["name"] == wanted), update)
        return current, update, collisions

    async def _renumber(self, revision: Obj, number: int) -> Obj:
        meta = revision["metadata"]

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["revision"] = number
            return existing

        stored, _ = await self.revisions.update(meta.get("namespace", ""), meta["name"], change)
        renumbered: Obj = stored.object
        return renumbered

    async def _create_revision(self, s: Obj, proposed: Obj, collisions: int) -> tuple[Obj, int]:
        namespace = s["metadata"].get("namespace", "")
        while True:
            candidate = su.new_revision(s, proposed["revision"], collisions)
            try:
                made = await self.revisions.create(namespace, candidate)
                return made.object, collisions
            except StatusError as e:
                if e.code != 409:
                    raise
            existing = current_object(self.revisions, namespace, candidate["metadata"]["name"])
            if existing is not None and su.same_data(existing, candidate):
                return existing, collisions
            collisions += 1

    async def _pods(
        self, s: Obj, current: Obj, update: Obj, collisions: int, pods: list[Obj]
    ) -> tuple[Obj, Exception | None]:
        step = PodStep(self, s, current, update, pods)
        error: Exception | None = None
        try:
            await step.run()
        except StatusError as e:
            error = e
        status = step.status()
        status.update(
            observedGeneration=s["metadata"].get("generation", 0),
            currentRevision=current["metadata"]["name"],
            updateRevision=update["metadata"]["name"],
            collisionCount=collisions,
        )
        return status, error

    async def _write_status(self, s: Obj, status: Obj) -> None:
        """Written when a counter, a revision or the generation moved (kube's
        inconsistentStatus), after kube's completeRollingUpdate."""
        spec, before = s["spec"], s.get("status") or {}
        want = su.replicas(s)
        rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        if rolling and all(
            status[k] == want for k in ("updatedReplicas", "readyReplicas", "replicas")
        ):
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = status["updateRevision"]
        counters = ("replicas", "currentReplicas", "readyReplicas", "updatedReplicas")
        moved = status["observedGeneration"] > before.get("observedGeneration", 0)
        moved = moved or any(
            status[f] != before.get(f, 0) for f in (*counters, "availableReplicas")
        )
        moved = moved or any(
            status[f] != before.get(f, "") for f in ("currentRevision", "updateRevision")
        )
        if not moved:
            return
        meta = s["metadata"]
        written = _go_status(status, before)

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("uid") != meta.get("uid"):
                raise StatusError(409, "Conflict", "the StatefulSet was replaced")
            existing["status"] = written
            return existing

        try:
            await self.sets.update(
                meta.get("namespace", ""), meta["name"], change, subresource="status"
            )
        except StatusError as e:
            if e.code != 404:
                raise

    async def _trim_history(
        self, s: Obj, pods: list[Obj], revisions: list[Obj], current: Obj, update: Obj
    ) -> None:
        live = {current["metadata"]["name"], update["metadata"]["name"]}
        live.update(su.pod_revision(p) for p in pods)
        history = [r for r in revisions if r["metadata"]["name"] not in live]
        limit = s["spec"].get("revisionHistoryLimit", 10)
        if limit < 0 or len(history) <= limit:
            return
        for revision in history[: len(history) - limit]:
            meta = revision["metadata"]
            try:
                await self.revisions.delete(meta.get("namespace", ""), meta["name"])
            except StatusError as e:
                if e.code != 404:
                    raise

    def record_event(self, s: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(s, su.API_VERSION, su.KIND, type_, reason, message)


def _key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def _go_status(status: Obj, before: Obj) -> Obj:
    """The status as Go writes it: ``replicas``, ``availableReplicas`` and the
    collision count (a pointer) always; other zeros and empty strings left out."""
    kept = ("replicas", "availableReplicas", "collisionCount")
    out = {k: v for k, v in status.items() if v not in (0, "", None) or k in kept}
    if before.get("conditions"):
        out["conditions"] = before["conditions"]
    return out


def _availability_recheck(s: Obj, status: Obj, pods: list[Obj], now: float) -> float | None:
    min_ready = s["spec"].get("minReadySeconds") or 0
    if not min_ready or status.get("readyReplicas", 0) == status.get("availableReplicas", 0):
        return None
    waits = [
        since + min_ready - now
        for p in pods
        if (since := podcontrol.ready_since(p)) is not None and since + min_ready > now
    ]
    return max(min(waits), 0.0) if waits else float(min_ready)
