"""One update's steps (kube's ``rest.BeforeUpdate`` inside ``GuaranteedUpdate``): what the
storage's compare-and-swap loop runs on every state it reads.  The store (store.py)
builds one per update and retries it; its steps live here, apart from the store's other
operations.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from platform_api import errors, heavy
from platform_api.codec.goshape import drop_empty, restore_empty, set_revision, shape
from platform_api.fieldmanager.timestamps import keep_old_times, without_entries
from platform_api.fieldmanager.versions import settled
from platform_api.gotext import object_json
from platform_api.registry.deletion import finishes_deletion
from platform_api.registry.prepare import before_create, check_name, check_update, prepare_update
from platform_api.registry.storedelete import Admit, Emptied
from platform_api.registry.strategy import Obj
from platform_api.storage.interface import Stored
from platform_api.validation.field import FieldError

if TYPE_CHECKING:
    from platform_api.registry.store import Store

# The object as a request wants it, given the current object (None when absent).
UpdateFunc = Callable[[Obj | None], Obj]
# Mutating admission of an update: (new object, old object or None) -> the object to
# write; it runs inside the retry loop, after the request's change, as kube's does.
Mutate = Callable[[Obj, Obj | None], Awaitable[Obj]]
# Field ownership of a write: (old object or None, new object); sets managedFields.
Track = Callable[[Obj | None, Obj], None]


class Update:
    """One update's steps, which the storage's compare-and-swap loop runs on every state
    it reads: the request's change, defaults, ownership, admission and the kind's rules,
    or a create when the object is absent and the kind allows it."""

    created = False

    def __init__(
        self,
        store: Store,
        namespace: str,
        name: str,
        updated: UpdateFunc,
        subresource: str,
        *,
        allow_create: bool,
        admit: Admit | None,
        track: Track | None,
        mutate: Mutate | None,
        applied: bool = False,
    ) -> None:
        self.store, self.namespace, self.name = store, namespace, name
        self.updated, self.subresource = updated, subresource
        self.strategy = store.subresource_strategies[subresource] if subresource else store.strategy
        self.allow_create = allow_create or self.strategy.allow_create_on_update
        self.admit, self.track, self.mutate = admit, track, mutate
        # A write of the object itself keeps the stored status, as kube's strategies
        # reset it in the internal form: a storage view converting from another version
        # keeps the stored one (a conversion there may not give it back as it was).
        self.keeps_status = not subresource and store.resource.has_status()
        # An apply that changed nothing but managedFields: kube's field manager hands back
        # the live object itself then, so a converting view keeps the stored content.
        self.applied, self.keeps_content = applied, False

    async def __call__(self, existing: Obj | None, stored: Stored | None) -> Obj:
        if existing is None:
            return await self._create()
        assert stored is not None
        return await self._change(existing, stored)

    async def _create(self) -> Obj:
        store = self.store
        if self.subresource or not self.allow_create:
            raise errors.not_found(store.resource.plural, store.resource.group, self.name)
        obj = await settled(lambda: heavy.run(self.updated, None))  # an apply's ownership
        obj.setdefault("metadata", {}).pop("resourceVersion", None)
        kept = await store.receive(obj, None, self.track)
        if self.mutate is not None:
            obj = await self.mutate(obj, None)
        restore_empty(kept)
        check_name(obj, self.name)
        now = store.now()
        await heavy.run(before_create, store.resource, store.strategy, self.namespace, obj, now)
        drop_empty(kept)
        if self.admit is not None:
            await self.admit(obj, None)
        await heavy.run(shape, obj)
        set_revision(obj, "")  # its place in the JSON, as create() keeps it
        self.created = True
        return obj

    async def _change(self, existing: Obj, stored: Stored) -> Obj:
        store = self.store
        # Patches edit what they are given: they get their own copy, so that the old
        # object stays intact for generation, status and immutability checks.
        obj = await settled(lambda: heavy.run(self.updated, stored.copy()))
        # The decoder defaults what it decodes: the kind itself, as a /status body is
        # (other sub-resources' bodies are kinds of their own).
        main = self.strategy is store.strategy or self.subresource == "status"
        main = main or getattr(self.strategy, "body_is_kind", False)
        # ownership before admission and the kind's preparation, as kube records it
        kept = await store.receive(obj, existing, self.track, main)
        if self.mutate is not None:
            obj = await self.mutate(obj, existing)
        restore_empty(kept)
        where = (self.namespace, self.name)
        rt, strategy = store.resource, self.strategy
        await heavy.run(prepare_update, rt, strategy, main, where, obj, existing)
        denied = await self._denied(obj, existing)
        await heavy.run(check_update, rt, strategy, obj, existing, denied)
        drop_empty(kept)
        if self.admit is not None:
            await self.admit(obj, existing)
        await heavy.run(shape, obj)
        # compared as stored, so after the shape (kube's runs before its validating
        # admission, which sees no managedFields times it could tell apart)
        keep_old_times(obj, existing)
        self.keeps_content = self.applied and without_entries(obj) == without_entries(existing)
        if finishes_deletion(obj, store.resource.kind):
            set_revision(obj, str(stored.revision))
            raise Emptied(Stored(stored.key, stored.revision, object_json(obj)))
        self.created = False
        return obj

    async def _denied(self, obj: Obj, existing: Obj) -> list[FieldError]:
        """What the writer may not change of a status, for kinds that ask the authorizer
        (a ResourceClaim's allocation and device status)."""
        check = getattr(self.store.strategy, "authorize_status", None)
        if self.subresource != "status" or check is None:
            return []
        denied: list[FieldError] = await check(obj, existing)
        return denied


def without_managed_fields(track: Track) -> Track:
    """kube's second try at a write too large for etcd: the same write, managedFields
    (which can be large) dropped.  Apply patches get no second try."""

    def strip(old: Obj | None, new: Obj) -> None:
        track(old, new)
        new.get("metadata", {}).pop("managedFields", None)

    return strip
