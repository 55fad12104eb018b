"""The garbage collector: dependents follow their owners (``metadata.ownerReferences``).

It keeps an index of every object by uid and of dependents by owner uid, fed by the
watch hub.  When every owner of an object is gone, the object is deleted (dangling
references beside a live owner are removed instead).  An owner being deleted in the
foreground (``foregroundDeletion``) has its dependents deleted first and is released
once none with ``blockOwnerDeletion`` remain; an ``orphan`` owner has its dependents'
references to it removed, then is released.  A dependent whose own dependents are
already waiting for theirs (a cycle of owners) first stops blocking its owners, as kube
does, so the cycle comes apart instead of every member waiting for the next.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.registry.deletion import FOREGROUND, ORPHAN
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event, ListOptions

Ref = tuple[Store, str, str]  # store, namespace, name


class GarbageCollector(Controller):
    name = "garbage-collector-controller"
    prefix = b"/"

    def __init__(self, stores: Iterable[Store], *args: Any) -> None:
        super().__init__(*args)
        self.stores = stores  # a live view: custom resource stores come and go
        self.objects: dict[str, Ref] = {}  # uid -> where it is
        self.owners_of: dict[str, set[str]] = {}  # dependent uid -> owner uids
        self.dependents: dict[str, set[str]] = {}  # owner uid -> dependent uids

    def _store_of(self, key: bytes) -> Store | None:
        for store in self.stores:
            if key.startswith(store.prefix):
                return store
        return None

    def resync(self) -> None:
        for store in list(self.stores):
            for stored in store.list("", ListOptions()).items:
                self._index(store, stored.glance())

    def _index(self, store: Store, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata", {})
        uid = meta.get("uid")
        if not uid:
            return
        self.objects[uid] = (store, meta.get("namespace", ""), meta.get("name", ""))
        owners = {ref["uid"] for ref in meta.get("ownerReferences") or [] if ref.get("uid")}
        for old in self.owners_of.get(uid, set()) - owners:
            self.dependents.get(old, set()).discard(uid)
        for owner in owners:
            self.dependents.setdefault(owner, set()).add(uid)
        if owners:
            self.owners_of[uid] = owners
            if any(owner not in self.objects for owner in owners):
                self.enqueue(("dependent", uid), 0.1)
        else:
            self.owners_of.pop(uid, None)
        finalizers = meta.get("finalizers") or []
        if meta.get("deletionTimestamp") and (FOREGROUND in finalizers or ORPHAN in finalizers):
            self.enqueue(("owner", uid))

    def observe(self, event: Event) -> None:
        store = self._store_of(event.key)
        if store is None or event.stored is None:
            return
        obj = event.stored.glance()  # only its metadata is kept
        uid = obj.get("metadata", {}).get("uid", "")
        if event.type == DELETED:
            self.objects.pop(uid, None)
            for owner in self.owners_of.pop(uid, set()):
                self.dependents.get(owner, set()).discard(uid)
                self.enqueue(("owner", owner))  # a foreground owner may be free now
            for dependent in self.dependents.get(uid, set()):
                self.enqueue(("dependent", dependent))
            return
        self._index(store, obj)

    async def sync(self, key: tuple[str, str]) -> float | None:
        role, uid = key
        if role == "dependent":
            await self._sync_dependent(uid)
            return None
        return await self._sync_owner(uid)

    def _current(self, uid: str) -> dict[str, Any] | None:
        ref = self.objects.get(uid)
        if ref is None:
            return None
        store, namespace, name = ref
        try:
            obj = store.get(namespace, name).object
        except errors.StatusError:
            return None
        return obj if obj["metadata"].get("uid") == uid else None

    async def _sync_dependent(self, uid: str) -> None:
        obj = self._current(uid)
        if obj is None:
            return
        refs = obj["metadata"].get("ownerReferences") or []
        alive = [ref for ref in refs if self._current(ref.get("uid", "")) is not None]
        store, namespace, name = self.objects[uid]
        if not alive:
            await errors.tolerating(store.delete(namespace, name, propagation="Background"), 404)
        elif len(alive) != len(refs):
            await self._set_owner_refs(uid, alive)

    async def _sync_owner(self, uid: str) -> float | None:
        owner = self._current(uid)
        if owner is None or not owner["metadata"].get("deletionTimestamp"):
            return None
        finalizers = owner["metadata"].get("finalizers") or []
        dependents = [d for d in self.dependents.get(uid, set()) if self._current(d) is not None]
        if ORPHAN in finalizers:
            for dependent in dependents:
                obj = self._current(dependent)
                if obj is not None:
                    refs = obj["metadata"].get("ownerReferences") or []
                    await self._set_owner_refs(dependent, [r for r in refs if r.get("uid") != uid])
            await self._drop_finalizer(uid, ORPHAN)
            return None
        if FOREGROUND not in finalizers:
            return None
        blocking = 0
        for dependent in dependents:
            obj = self._current(dependent)
            if obj is None:
                continue
            solid = self._solid_owners(obj)
            if solid:  # kube: another owner keeps it; only the references to the going go
                await self._set_owner_refs(dependent, solid)
                continue
            refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") == uid]
            if any(r.get("blockOwnerDeletion") for r in refs):
                blocking += 1
            if not obj["metadata"].get("deletionTimestamp"):
                if any(self._deleting_dependents(d) for d in self.dependents.get(dependent, ())):
                    await self._unblock(dependent, obj)
                    blocking -= any(r.get("blockOwnerDeletion") for r in refs)
                store, namespace, name = self.objects[dependent]
                await errors.tolerating(
                    store.delete(namespace, name, propagation="Foreground"), 404
                )
        if blocking:
            return 0.5  # the dependents' DELETED events also bring the owner back here
        await self._drop_finalizer(uid, FOREGROUND)
        return None

    def _solid_owners(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """kube's solid owners: references to owners that exist and are not waiting for
        their dependents' deletion (dangling and waiting ones are not)."""
        return [
            r
            for r in obj["metadata"].get("ownerReferences") or []
            if self._current(r.get("uid", "")) is not None
            and not self._deleting_dependents(r.get("uid", ""))
        ]

    def _deleting_dependents(self, uid: str) -> bool:
        obj = self._current(uid)
        meta = obj["metadata"] if obj is not None else {}
        return bool(meta.get("deletionTimestamp")) and FOREGROUND in (meta.get("finalizers") or [])

    async def _unblock(self, uid: str, obj: dict[str, Any]) -> None:
        """kube's unblockOwnerReferences: every blocking reference becomes non-blocking."""
        refs = obj["metadata"].get("ownerReferences") or []
        unblocked = [
            {**r, "blockOwnerDeletion": False} if r.get("blockOwnerDeletion") else r for r in refs
        ]
        await self._set_owner_refs(uid, unblocked)

    async def _set_owner_refs(self, uid: str, refs: list[dict[str, Any]]) -> None:
        store, namespace, name = self.objects[uid]

        def update(existing: dict[str, Any] | None) -> dict[str, Any]:
            assert existing is not None
            if refs:
                existing["metadata"]["ownerReferences"] = refs
            else:
                existing["metadata"].pop("ownerReferences", None)
            return existing

        await errors.tolerating(store.update(namespace, name, update), 404)

    async def _drop_finalizer(self, uid: str, finalizer: str) -> None:
        store, namespace, name = self.objects[uid]

        def update(existing: dict[str, Any] | None) -> dict[str, Any]:
            assert existing is not None
            left = [f for f in existing["metadata"].get("finalizers") or [] if f != finalizer]
            if left:
                existing["metadata"]["finalizers"] = left
            else:
                existing["metadata"].pop("finalizers", None)
            return existing

        await errors.tolerating(store.update(namespace, name, update), 404)
