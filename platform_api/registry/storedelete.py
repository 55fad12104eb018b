"""The deletion protocol of the generic store (kube's Store.Delete, and the update that
ends a deletion): ``Store`` takes it from ``Deletions``; the rules it applies are in
deletion.py.

A delete first writes the terminating state when a graceful deletion starts or
finalizers hold the object (deletionTimestamp, the grace period, the finalizers a
propagation policy asks for), and removes the object now only if nothing holds it then.
An update that lets a deleting object go deletes it instead of writing (``Emptied``,
raised out of the storage's update loop).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from platform_api import errors
from platform_api.codec.goshape import shape
from platform_api.errors import StatusError
from platform_api.gotext import object_json
from platform_api.registry.deletion import (
    GRACEFUL,
    PENDING,
    before_delete,
    check_preconditions,
    deletion_finalizers,
    finishes_deletion,
    has_pending_finalizers,
    mark_deleting,
    requested_grace,
    set_finalizers,
)
from platform_api.registry.strategy import Obj, Strategy
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import UNSTORED, Preconditions, Storage, StorageError, Stored

# Validating admission: (new object, old object or None); raises StatusError.
Admit = Callable[[Obj, Obj | None], Awaitable[None]]


class Deletions:
    """Deletes for a ``Store``; what it uses of the store is declared here."""

    resource: ResourceType
    storage: Storage
    strategy: Strategy
    clock: Callable[[], float]
    after_delete: list[Callable[[Obj], Awaitable[None]]]
    # --enable-garbage-collector: without a collector, a delete's propagation policy adds
    # no orphan/foregroundDeletion finalizer (nothing would remove it), as kube's Store.
    garbage_collection: bool = True

    if TYPE_CHECKING:

        def named_key(self, namespace: str, name: str) -> bytes: ...

        def get(self, namespace: str, name: str) -> Stored: ...

        async def get_or_fetch(self, namespace: str, name: str) -> Stored: ...

        def now(self) -> str: ...

        def _error(self, e: StorageError, name: str) -> StatusError: ...

    async def delete(
        self,
        namespace: str,
        name: str,
        *,
        preconditions: Preconditions | None = None,
        dry_run: bool = False,
        admit: Admit | None = None,
        propagation: str | None = None,
        orphan: bool | None = None,
        grace_period: int | None = None,
    ) -> tuple[Stored, bool]:
        """Returns the last (or now terminating) state and whether it is gone.  As kube's
        Store.Delete: a graceful deletion or pending finalizers first write the
        terminating state; the object goes now only if nothing holds it then."""
        key = self.named_key(namespace, name)
        current = await self.get_or_fetch(namespace, name)
        if preconditions is not None:
            check_preconditions(self.resource, name, preconditions, current.object)
        if admit is not None:
            await admit(current.object, current.object)
        requested = requested_grace(grace_period)
        step = self._before_delete(current.copy(), requested)
        if step == PENDING:
            return current, False
        finalizers = (
            deletion_finalizers(
                current.object, propagation, orphan, self.strategy.default_propagation
            )
            if self.garbage_collection
            else list(current.object["metadata"].get("finalizers") or [])
        )
        if not current.object["metadata"].get("deletionTimestamp"):
            # Kinds that clean up before they go (CRDs) add their finalizer now.
            extra = self.strategy.finalizers_on_delete
            finalizers += [f for f in extra if f not in finalizers]
        if (
            step == GRACEFUL
            or finalizers
            or has_pending_finalizers(current.object, self.resource.kind)
        ):
            marked = await self._mark_deleting(key, name, current, dry_run, finalizers, requested)
            if marked is None or not finishes_deletion(marked.object, self.resource.kind):
                return marked or self.get(namespace, name), False
            current = marked
            if preconditions is not None and preconditions.resource_version is not None:
                version = current.object["metadata"].get("resourceVersion")
                preconditions = Preconditions(preconditions.uid, version)
        if dry_run:
            return current, True
        try:
            stored = await self.storage.delete(key, preconditions=preconditions)
        except StorageError as e:
            raise self._error(e, name) from None
        await self._deleted(stored)
        return stored, True

    def _before_delete(self, obj: Obj, requested: int | None) -> str:
        period = self.strategy.deletion_grace(obj, requested)
        return before_delete(obj, period, requested, self.clock())

    async def _deleted(self, gone: Stored) -> None:
        for hook in self.after_delete:
            await hook(gone.object)

    async def _mark_deleting(
        self,
        key: bytes,
        name: str,
        current: Stored,
        dry_run: bool,
        finalizers: Sequence[str],
        requested: int | None,
    ) -> Stored | None:
        """First phase of a deletion: stamp ``deletionTimestamp`` (and a grace period);
        finalizers, or a later delete, do the rest.  None when a graceful deletion
        became pending meanwhile (nothing to write)."""
        meta = current.object["metadata"]
        unchanged = (meta.get("finalizers") or []) == list(finalizers)
        if (
            meta.get("deletionTimestamp")
            and unchanged
            and not meta.get("deletionGracePeriodSeconds")
        ):
            return current

        def mark(existing: Obj | None, _stored: Stored | None) -> Obj:
            if existing is None:
                raise errors.not_found(self.resource.plural, self.resource.group, name)
            step = self._before_delete(existing, requested)
            if step == PENDING:
                raise Pending
            if step == GRACEFUL:
                set_finalizers(existing, finalizers)
                shape(existing)  # the new fields in their places
                return existing
            return mark_deleting(
                existing, finalizers, self.now(), self.resource.kind, self.strategy
            )

        try:
            if dry_run:
                return Stored(key, UNSTORED, object_json(mark(current.copy(), current)))
            return await self.storage.guaranteed_update(key, mark)
        except Pending:
            return None
        except StorageError as e:
            raise self._error(e, name) from None

    async def _delete_emptied(self, last: Stored, name: str, dry_run: bool) -> Stored:
        """An update that lets a deleting object go (its last finalizer removed) deletes
        it instead of writing, as kube's Store.Update: watchers see the stored state
        deleted, the caller gets the object it sent at the stored resourceVersion."""
        if dry_run:
            return Stored(last.key, UNSTORED, last.data)
        uid = last.object["metadata"].get("uid")
        try:
            gone = await self.storage.delete(last.key, preconditions=Preconditions(uid=uid))
        except StorageError as e:
            raise self._error(e, name) from None
        await self._deleted(gone)
        return last


class Emptied(Exception):
    """An update removed what held a deleting object: delete it instead of writing."""

    def __init__(self, last: Stored) -> None:
        super().__init__()
        self.last = last


class Pending(Exception):
    """A graceful deletion is already under way (raised out of the update to skip it)."""
