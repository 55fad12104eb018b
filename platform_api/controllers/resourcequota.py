"""kube's resourcequota-controller: each quota's ``status.hard`` and ``status.used``.

A quota is recounted when it is created or its spec changes, when an object it limits
is created, changed or deleted in its namespace, and on a full resync every minute.
The count lists what is stored, adds the charges admission made for objects still being
written, and is written back with a compare-and-swap: a lost race recounts.

A recount asked for by creates only raises usage.  The charges in flight it adds are
this process's; under ``--workers`` or on several replicas, another process's admission
may have charged a create it has not stored yet, and a recount that lowered usage to
what is stored would give that charge back and let a burst of creates through a full
quota.  (kube's controller does not recount on creates at all; creates that skip
admission here, a controller's own, are counted this way.)  Deletes, changes, quota
edits, expiring charges and the resync may lower it, as kube's replenishment does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from twisted.internet.task import LoopingCall

from platform_api import errors
from platform_api.admission.quota import resources as rl
from platform_api.admission.quota.catalog import IGNORED, Registry
from platform_api.admission.quota.evaluators import Evaluator, usage_stats
from platform_api.admission.quota.pending import PendingCharges, pending_for
from platform_api.controllers.base import Controller
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event, ListOptions

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, quota name)
RESYNC = 60.0  # seconds between full recounts (kube's --resource-quota-sync-period)
BATCH = 0.05  # a burst of changes in a namespace is counted once
# The server hands this controller and the admission plugin the same ledger.
__all__ = ["ResourceQuotaController", "pending_for"]


class ResourceQuotaController(Controller):
    name = "resourcequota-controller"

    def __init__(
        self,
        quotas: Store,
        stores: Iterable[Store],
        pending: PendingCharges,
        *args: Any,
        registry: Registry | None = None,
    ) -> None:
        super().__init__(*args)
        self.quotas = quotas
        self.stores = stores  # live: custom resource stores come and go
        self.pending = pending
        self.registry = registry or Registry()
        self.hard_names: dict[str, dict[str, list[str]]] = {}  # namespace -> quota -> names
        self._loop: LoopingCall | None = None
        self._expiries: dict[Key, Any] = {}  # pending-charge expiry recounts, by quota
        # (group, plural, namespace) -> (the list's revision, name -> object): the kinds a
        # quota limits, kept from events after one list (kube counts from its listers; a
        # list per recount decoded a busy namespace's every pod under churn)
        self.held: dict[tuple[str, str, str], tuple[int, dict[str, Obj]]] = {}
        self.may_lower: set[Key] = set()  # quotas whose next recount may give usage back

    def start(self) -> None:
        super().start()
        self._loop = LoopingCall(self.resync)
        self._loop.clock = self.reactor
        self._loop.start(RESYNC, now=False)

    def stop(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        for call in self._expiries.values():
            if call.active():
                call.cancel()
        self._expiries.clear()
        super().stop()

    def resync(self) -> None:
        self.held.clear()  # the full recount reads storage afresh, once a minute
        for stored in self.quotas.list("", ListOptions()).items:
            self._index(stored.object)
            meta = stored.object["metadata"]
            self.recount((meta.get("namespace", ""), meta["name"]))

    def recount(self, key: Key, delay: float = 0.0) -> None:
        """A full recount of ``key``: one that may lower its usage."""
        self.may_lower.add(key)
        self.enqueue(key, delay)

    def _index(self, quota: Obj) -> None:
        meta = quota["metadata"]
        names = list(((quota.get("spec") or {}).get("hard") or {}).keys())
        self.hard_names.setdefault(meta.get("namespace", ""), {})[meta["name"]] = names

    def observe(self, event: Event) -> None:
        parts = event.key.split(b"/", 4)
        if len(parts) < 5:
            return  # not a namespaced object
        group = "" if parts[1] == b"core" else parts[1].decode()
        plural = parts[2].decode()
        namespace, name = parts[3].decode(), parts[4].decode()
        if (group, plural) == ("", "resourcequotas"):
            self._quota_changed(event, namespace)
        elif (group, plural) not in IGNORED:
            self._keep(event, (group, plural, namespace), name)
            self._object_changed(event, group, plural, namespace)

    def _keep(self, event: Event, kind: tuple[str, str, str], name: str) -> None:
        held = self.held.get(kind)
        if held is None or event.revision <= held[0]:
            return  # not kept, or the list had it
        if event.type == DELETED or event.stored is None:
            held[1].pop(name, None)
        else:
            held[1][name] = event.stored.object

    def _quota_changed(self, event: Event, namespace: str) -> None:
        name = self.quotas.name_of_key(event.key)
        if event.type == DELETED or event.stored is None:
            self.hard_names.get(namespace, {}).pop(name, None)
            if not self.hard_names.get(namespace):  # nothing left to count here
                self.held = {k: v for k, v in self.held.items() if k[2] != namespace}
            return
        quota = event.stored.object
        self._index(quota)
        if event.prev is None or _needs_count(quota, event.prev.object):
            self.recount((namespace, name))

    def _object_changed(self, event: Event, group: str, plural: str, namespace: str) -> None:
        state = event.stored or event.prev
        if state is not None and self.pending.holds(namespace):
            # stored (or already gone): its charge is in the count from now on
            self.pending.seen(namespace, state.object.get("metadata", {}).get("uid", ""))
        quotas = self.hard_names.get(namespace)
        if not quotas:
            return
        ev = self.registry.get(group, plural)
        if ev is None:
            return
        if type(ev) is Evaluator and event.type not in ("ADDED", DELETED):
            return  # a change never alters an object count
        for name, hard in quotas.items():
            if not ev.matching_resources(hard):
                continue
            if event.type == "ADDED":
                self.enqueue((namespace, name), BATCH)  # raises usage only
            else:
                self.recount((namespace, name), BATCH)

    def _objects(self, ev: Evaluator, namespace: str) -> list[Obj] | None:
        kind = (ev.group, ev.plural, namespace)
        held = self.held.get(kind)
        if held is None:
            store = next(
                (s for s in list(self.stores) if (s.resource.group, s.resource.plural) == kind[:2]),
                None,
            )
            if store is None:
                return None  # not served (yet): its usage is left as it was
            listed = store.list(namespace, ListOptions())
            objects = {s.object["metadata"]["name"]: s.object for s in listed.items}
            held = self.held[kind] = (listed.revision, objects)
        return list(held[1].values())

    def count(self, quota: Obj) -> rl.ResourceList:
        """``CalculateUsage`` over what is stored, plus charges of objects in flight."""
        meta = quota["metadata"]
        namespace = meta.get("namespace", "")
        hard = rl.from_object((quota.get("spec") or {}).get("hard"))
        used = rl.from_object((quota.get("status") or {}).get("used"))
        fresh: rl.ResourceList = {}
        counted: list[str] = []
        uids: set[str] = set()
        for ev in self.registry.for_names(hard):
            names = ev.matching_resources(hard)
            objects = self._objects(ev, namespace)
            if objects is None:
                continue
            uids.update(o["metadata"].get("uid", "") for o in objects)
            fresh = rl.add(fresh, usage_stats(ev, objects, quota, names))
            counted += names
        fresh = rl.mask(fresh, counted)
        in_flight = rl.mask(self.pending.outstanding(namespace, meta["name"], uids), counted)
        used.update(rl.add(fresh, in_flight))
        return rl.mask(used, hard)

    async def sync(self, key: Key) -> float | None:
        async with self.pending.locked(key[0]):
            return await self._sync(*key)

    async def _sync(self, namespace: str, name: str) -> float | None:
        key = (namespace, name)
        lower = key in self.may_lower
        self.may_lower.discard(key)
        try:
            stored = self.quotas.get(namespace, name)
        except errors.StatusError:
            return None  # gone
        quota = stored.copy()  # edited below: the stored object is shared (etcd's cache)
        status = quota.get("status") or {}
        spec_hard = rl.from_object((quota.get("spec") or {}).get("hard"))
        used = self.count(quota)
        if not lower:  # creates only: what admission charged stays charged
            used = rl.at_least(used, rl.from_object(status.get("used")))
        dirty = (
            "hard" not in status
            or "used" not in status
            or not rl.equals(spec_hard, rl.from_object(status.get("hard")))
            or not rl.equals(used, rl.from_object(status.get("used")))
        )
        if dirty:
            quota["status"] = {"hard": rl.to_object(spec_hard), "used": rl.to_object(used)}
            try:
                await self.quotas.update(
                    namespace, name, lambda _current: quota, subresource="status"
                )
            except errors.StatusError as e:
                if e.code == 409:
                    if lower:
                        self.may_lower.add(key)
                    return 0.0  # admission or an edit got there first: count again
                if e.code != 404:
                    raise
                return None
        self._recount_at_expiry((namespace, name))
        return None

    def _recount_at_expiry(self, key: Key) -> None:
        """Charges still in flight run out: count again then (a retry of the work queue
        would hold back the recounts other changes ask for meanwhile)."""
        delay = self.pending.next_expiry(*key)
        if delay is None or (key in self._expiries and self._expiries[key].active()):
            return
        self._expiries[key] = self.reactor.callLater(delay, self.recount, key)


def _needs_count(quota: Obj, before: Obj) -> bool:
    """A quota edit that changes what it limits, or a status that does not say it yet."""
    spec, old_spec = quota.get("spec") or {}, before.get("spec") or {}
    if spec != old_spec:
        return True
    status = quota.get("status") or {}
    hard = rl.from_object(spec.get("hard"))
    used = status.get("used") or {}
    return not rl.equals(hard, rl.from_object(status.get("hard"))) or any(
        n not in used for n in hard
    )
