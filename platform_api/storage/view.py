"""A storage seen through a pair of conversions: kube's storage codec, as a wrapper.

Custom resources are stored at one version and served at several: each served
version's store reads and writes through a ``StorageView`` that converts objects out
of storage (to the served version, with read-time defaults) and into it (to the
storage version).  Writes convert inside the compare-and-swap callback, so a retried
update converts the fresh object again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from inspect import isawaitable
from typing import Any

from platform_api.gotext import object_json
from platform_api.storage.interface import (
    KEY_NOT_FOUND,
    UNSTORED,
    Event,
    ListOptions,
    ListResult,
    Preconditions,
    ReadsThrough,
    Storage,
    StorageError,
    Stored,
    TryUpdate,
    ValidateDeletion,
    reads_history,
    reads_through,
)

Obj = dict[str, Any]
# out(obj): the object as served, or None when the stored form already is.
Out = Callable[[Obj], Obj | None]
Into = Callable[[Obj], Obj]


class StorageView:
    """Implements the Storage protocol over ``inner``."""

    def __init__(self, inner: Storage, out: Out, into: Into, converted: Into | None = None) -> None:
        self.inner = inner
        self._out = out
        self._into = into
        self._converted = converted or into

    def present(self, stored: Stored) -> Stored:
        """``stored`` as this view serves it (the same object when nothing changes)."""
        converted = self._out(stored.object)
        if converted is None:
            return stored
        seen = Stored(stored.key, stored.revision, object_json(converted))
        seen._obj = converted
        return seen

    def _seen(self, obj: Obj) -> Obj:
        converted = self._out(obj)
        return obj if converted is None else converted

    def served_form(self, obj: Obj) -> Obj:
        """An object of the storage version in this view's version."""
        return self._seen(obj)

    def stored_form(self, obj: Obj) -> Obj:
        """An object of this view's version in the storage version, as the conversion
        alone gives it (without the defaults a write's reading back adds)."""
        return self._converted(obj)

    def unwritten(self, key: bytes, obj: Obj) -> Stored:
        """What a create of ``obj`` would read back, without writing it (a dry run)."""
        return self.present(Stored(key, UNSTORED, object_json(self._into(obj))))

    # -- reads --------------------------------------------------------------------------

    def current_revision(self) -> int:
        return self.inner.current_revision()

    def compacted_revision(self) -> int:
        return self.inner.compacted_revision()

    def mark_compaction(self) -> Awaitable[int]:
        return self.inner.mark_compaction()

    def count(self, prefix: bytes) -> int:
        return self.inner.count(prefix)

    def get(self, key: bytes) -> Stored:
        return self.present(self.inner.get(key))

    def get_list(self, prefix: bytes, options: ListOptions) -> ListResult:
        return self._present_list(self.inner.get_list(prefix, self._served(options)))

    def _served(self, options: ListOptions) -> ListOptions:
        wanted = options.predicate
        if wanted is None:
            return options
        # Selectors see the served form.
        return replace(options, predicate=lambda obj: wanted(self._seen(obj)))

    def _present_list(self, result: ListResult) -> ListResult:
        result.items = [self.present(item) for item in result.items]
        return result

    @property
    def reads_through(self) -> bool:
        return reads_through(self.inner) is not None

    @property
    def database_history(self) -> bool:
        return reads_history(self.inner) is not None

    async def get_through(self, key: bytes) -> Stored:
        return self.present(await _beneath(self.inner).get_through(key))

    async def get_list_through(self, prefix: bytes, options: ListOptions) -> ListResult:
        inner = _beneath(self.inner)
        return self._present_list(await inner.get_list_through(prefix, self._served(options)))

    def events_since(self, revision: int, prefix: bytes = b"") -> list[Event]:
        return [self.present_event(e) for e in self.inner.events_since(revision, prefix)]

    def present_event(self, event: Event) -> Event:
        return replace(
            event,
            stored=self.present(event.stored) if event.stored is not None else None,
            prev=self.present(event.prev) if event.prev is not None else None,
        )

    # -- writes -------------------------------------------------------------------------

    async def create(self, key: bytes, obj: Obj) -> Stored:
        return self.present(await self.inner.create(key, self._into(obj)))

    async def guaranteed_update(
        self,
        key: bytes,
        try_update: TryUpdate,
        *,
        ignore_not_found: bool = False,
        preconditions: Preconditions | None = None,
    ) -> Stored:
        async def attempt(existing: Obj | None, stored: Stored | None) -> Obj:
            seen = None if existing is None else self._seen(existing)
            wanted = try_update(seen, None if stored is None else self.present(stored))
            if isawaitable(wanted):
                wanted = await wanted
            if existing is not None and getattr(try_update, "keeps_content", False):
                return _with_entries_of(existing, wanted)
            into = self._into(wanted)
            if existing is not None and getattr(try_update, "keeps_status", False):
                _keep_status(into, existing)
            return into

        stored = await self.inner.guaranteed_update(
            key, attempt, ignore_not_found=ignore_not_found, preconditions=preconditions
        )
        return self.present(stored)

    async def delete(
        self,
        key: bytes,
        *,
        preconditions: Preconditions | None = None,
        validate: ValidateDeletion | None = None,
    ) -> Stored:
        check = None if validate is None else (lambda obj: validate(self._seen(obj)))
        return self.present(
            await self.inner.delete(key, preconditions=preconditions, validate=check)
        )

    async def delete_corrupt(self, key: bytes, stand_in: Obj) -> None:
        await self.inner.delete_corrupt(key, stand_in)


# out_many(objs): the objects as served (conversions that call out take a batch).
OutMany = Callable[[list[Obj]], Awaitable[list[Obj]]]
IntoAsync = Callable[[Obj], Awaitable[Obj]]


class _Stale(Exception):
    """The object changed between the read and the write of an update: read again."""


def _with_entries_of(stored: Obj, wanted: Obj) -> Obj:
    """The stored object with ``wanted``'s managedFields."""
    meta = {k: v for k, v in stored["metadata"].items() if k != "managedFields"}
    entries = (wanted.get("metadata") or {}).get("managedFields")
    if entries:
        meta["managedFields"] = entries
    return {**stored, "metadata": meta}


def _keep_status(new: Obj, old: Obj) -> None:
    """``new`` with ``old``'s status, both in the stored form."""
    if "status" in old:
        new["status"] = old["status"]
    else:
        new.pop("status", None)


def _unless_changed(expected: int, new: Obj) -> TryUpdate:
    """A compare-and-swap step that writes ``new`` only over revision ``expected``."""

    def attempt(_existing: Obj | None, stored: Stored | None) -> Obj:
        if (0 if stored is None else stored.revision) != expected:
            raise _Stale()
        return new

    return attempt


class AsyncStorageView:
    """A view whose conversions are calls out (a conversion webhook).

    Its synchronous reads give objects as stored; whatever serves objects to clients
    awaits ``present``/``present_list``/``present_events``.  An update reads, converts,
    applies the change and converts back outside the storage's compare-and-swap, then
    writes only if nothing changed meanwhile (else it starts again).
    """

    def __init__(self, inner: Storage, out_many: OutMany, into: IntoAsync) -> None:
        self.inner = inner
        self._out_many = out_many
        self._into = into

    async def present(self, stored: Stored) -> Stored:
        return (await self._present_all([stored]))[0]

    async def unwritten(self, key: bytes, obj: Obj) -> Stored:
        """What a create of ``obj`` would read back, without writing it (a dry run)."""
        return await self.present(Stored(key, UNSTORED, object_json(await self._into(obj))))

    async def _present_all(self, items: list[Stored]) -> list[Stored]:
        if not items:
            return items
        converted = await self._out_many([item.object for item in items])
        out = []
        for item, obj in zip(items, converted, strict=True):
            if obj is item.object:
                out.append(item)
                continue
            seen = Stored(item.key, item.revision, object_json(obj))
            seen._obj = obj
            out.append(seen)
        return out

    async def present_list(self, result: ListResult) -> ListResult:
        result.items = await self._present_all(result.items)
        return result

    async def present_events(self, events: list[Event]) -> list[Event]:
        singles = [s for e in events for s in (e.stored, e.prev) if s is not None]
        seen = {id(s): p for s, p in zip(singles, await self._present_all(singles), strict=True)}
        return [
            replace(
                e,
                stored=seen[id(e.stored)] if e.stored is not None else None,
                prev=seen[id(e.prev)] if e.prev is not None else None,
            )
            for e in events
        ]

    # -- reads: as stored ---------------------------------------------------------------

    def current_revision(self) -> int:
        return self.inner.current_revision()

    def compacted_revision(self) -> int:
        return self.inner.compacted_revision()

    def mark_compaction(self) -> Awaitable[int]:
        return self.inner.mark_compaction()

    def count(self, prefix: bytes) -> int:
        return self.inner.count(prefix)

    def get(self, key: bytes) -> Stored:
        return self.inner.get(key)

    def get_list(self, prefix: bytes, options: ListOptions) -> ListResult:
        return self.inner.get_list(prefix, options)

    @property
    def reads_through(self) -> bool:
        return reads_through(self.inner) is not None

    @property
    def database_history(self) -> bool:
        return reads_history(self.inner) is not None

    def get_through(self, key: bytes) -> Awaitable[Stored]:
        return _beneath(self.inner).get_through(key)

    def get_list_through(self, prefix: bytes, options: ListOptions) -> Awaitable[ListResult]:
        return _beneath(self.inner).get_list_through(prefix, options)

    def events_since(self, revision: int, prefix: bytes = b"") -> list[Event]:
        return self.inner.events_since(revision, prefix)

    # -- writes -------------------------------------------------------------------------

    async def create(self, key: bytes, obj: Obj) -> Stored:
        return await self.present(await self.inner.create(key, await self._into(obj)))

    async def guaranteed_update(
        self,
        key: bytes,
        try_update: TryUpdate,
        *,
        ignore_not_found: bool = False,
        preconditions: Preconditions | None = None,
    ) -> Stored:
        while True:
            try:
                current: Stored | None = self.inner.get(key)
            except StorageError as e:
                if e.code != KEY_NOT_FOUND or not ignore_not_found:
                    raise
                current = None
            seen = None if current is None else await self.present(current)
            wanted = try_update(None if seen is None else seen.copy(), seen)
            if isawaitable(wanted):
                wanted = await wanted
            stored_form = await self._into(wanted)
            expected = 0 if current is None else current.revision
            try:
                result = await self.inner.guaranteed_update(
                    key,
                    _unless_changed(expected, stored_form),
                    ignore_not_found=ignore_not_found,
                    preconditions=preconditions,
                )
            except _Stale:
                continue
            return await self.present(result)

    async def delete(
        self,
        key: bytes,
        *,
        preconditions: Preconditions | None = None,
        validate: ValidateDeletion | None = None,
    ) -> Stored:
        stored = await self.inner.delete(key, preconditions=preconditions, validate=validate)
        return await self.present(stored)

    async def delete_corrupt(self, key: bytes, stand_in: Obj) -> None:
        await self.inner.delete_corrupt(key, stand_in)


def _beneath(inner: Storage) -> ReadsThrough:
    """``inner``'s reads from its database: a caller asks only when its flags say so."""
    through = reads_through(inner) or reads_history(inner)
    assert through is not None
    return through
