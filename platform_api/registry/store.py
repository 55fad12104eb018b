"""The generic registry store (kube's ``registry.Store``): one for every resource type.

It turns API operations into storage operations: fills system metadata and runs the
kind's strategy (prepare.py) and the admission checks inside the storage's
compare-and-swap loop, maps storage errors to Status errors (storeerrors.py), and takes
the deletion protocol from storedelete.py (its rules in deletion.py).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import replace
from typing import Protocol

from platform_api import errors, heavy
from platform_api.authentication.user import UserInfo
from platform_api.codec.goshape import (
    DECODED,
    RECEIVED,
    Kept,
    drop_empty,
    restore_empty,
    set_revision,
    shape,
)
from platform_api.errors import StatusError
from platform_api.fieldmanager.manager import FieldManager, Who, update_tracker
from platform_api.gotext import object_json
from platform_api.registry import corrupt, storeerrors
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.gateddrops import GateCheck, kube_defaults
from platform_api.registry.prepare import (
    before_create,
)
from platform_api.registry.storedelete import Admit, Deletions, Emptied
from platform_api.registry.storeupdate import (
    Mutate,
    Track,
    Update,
    UpdateFunc,
    without_managed_fields,
)
from platform_api.registry.strategy import (
    FinalizeStrategy,
    GenericStrategy,
    Obj,
    StatusStrategy,
    Strategy,
    strategy_for,
)
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import (
    EXPIRED,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    REQUEST_TOO_LARGE,
    UNSTORED,
    ListOptions,
    ListResult,
    ReadsThrough,
    Storage,
    StorageError,
    Stored,
    Unreadable,
    readable,
    reads_from_cache,
    reads_history,
    reads_through,
)
from platform_api.storage.view import AsyncStorageView, StorageView
from platform_api.timestamps import format_timestamp
from platform_api.validation.field import go_quote
from platform_api.validation.names import is_path_segment_name

# The field manager of the in-server controller whose task is running (set per task by
# controllers/base.py): its writes that name no tracker record an Update by it, as its
# requests would in kube.  Requests never set it.
WRITER: ContextVar[str | None] = ContextVar("writer", default=None)


def resource_prefix(rt: ResourceType) -> bytes:
    return f"/{rt.group or 'core'}/{rt.plural}/".encode()


class WriteGuard(Protocol):
    """A check a kind's storage makes on every create and update, whoever configured
    admission (kube's RBAC stores refuse escalation this way)."""

    async def check(self, user: UserInfo, namespace: str, obj: Obj, old: Obj | None) -> None: ...


class Store(Deletions):
    """CRUD for one resource type over the storage interface."""

    guard: WriteGuard | None = None
    # The kind's ownership tracker, for the writes the server makes itself (``tracker``);
    # set by the server's assembly, None in stores built without one.
    field_manager: Callable[[], FieldManager] | None = None

    def __init__(
        self,
        resource: ResourceType,
        storage: Storage,
        strategy: Strategy | None = None,
        prefix: bytes | None = None,
        clock: Callable[[], float] = time.time,
        gates: GateCheck | None = None,
    ) -> None:
        self.resource = resource
        self.storage = storage
        self.strategy = strategy or strategy_for(resource)
        self.gates: GateCheck = gates or kube_defaults  # the server's --feature-gates
        if gates is not None and isinstance(self.strategy, GenericStrategy):
            self.strategy.gates = gates
        self.subresource_strategies: dict[str, Strategy] = {
            "status": StatusStrategy(self.strategy),
            "finalize": FinalizeStrategy(self.strategy),
            # kinds whose sub-resources have rules of their own (a CSR's approval, status)
            **getattr(self.strategy, "subresource_strategies", dict)(),
        }
        self.prefix = prefix or resource_prefix(resource)
        self.clock = clock
        # Called with each object once it is gone from storage (kube's AfterDelete): the
        # Service IP allocator frees its addresses.
        self.after_delete: list[Callable[[Obj], Awaitable[None]]] = []

    def _writer_tracker(self, subresource: str) -> Track | None:
        writer = WRITER.get()
        return None if writer is None else self.tracker(writer, subresource)

    def tracker(self, manager: str, subresource: str = "") -> Track | None:
        """A write of the server's own recorded in managedFields as an Update by
        ``manager``, as kube's loopback writes are."""
        if self.field_manager is None:
            return None
        who = Who(manager, self.resource.api_version, subresource)
        return update_tracker(self.field_manager(), who, self.now)

    # -- keys and errors --------------------------------------------------------------

    def key(self, namespace: str, name: str) -> bytes:
        if self.resource.namespaced:
            return self.prefix + namespace.encode() + b"/" + name.encode()
        return self.prefix + name.encode()

    def named_key(self, namespace: str, name: str) -> bytes:
        """The key of an object a request names: a name that cannot be one path segment
        is refused before storage sees it, as kube's key functions refuse it."""
        if name in (".", "..") or "/" in name or "%" in name:
            problems = ";".join(is_path_segment_name(name))
            raise errors.bad_request(f"Name parameter invalid: {go_quote(name)}: {problems}")
        return self.key(namespace, name)

    def list_prefix(self, namespace: str) -> bytes:
        if self.resource.namespaced and namespace:
            return self.prefix + namespace.encode() + b"/"
        return self.prefix

    def name_of_key(self, key: bytes) -> str:
        return (
            key.rsplit(b"/", 1)[-1].decode()
            if self.resource.namespaced
            else key[len(self.prefix) :].decode()
        )

    def namespace_of_key(self, key: bytes) -> str:
        if not self.resource.namespaced:
            return ""
        return key[len(self.prefix) :].split(b"/", 1)[0].decode()

    def _error(self, e: StorageError, name: str, *, updating: bool = False) -> StatusError:
        corrupt.count_decode_errors(self.resource, [e])
        if e.corrupt is not None and self.gates(corrupt.GATE):  # kube's corrupt object
            if updating:
                return corrupt.update_error(e, e.corrupt)
            return corrupt.read_error(e, e.corrupt)
        return storeerrors.interpret(e, self.resource, name)

    def now(self) -> str:
        return format_timestamp(self.clock())

    # -- reads ------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> Stored:
        """The object; a value there that does not decode is the read's error, as kube's."""
        return self._decoded(self.get_as_stored(namespace, name), name)

    def _decoded(self, stored: Stored, name: str) -> Stored:
        """``stored``, or the read's error for a value that does not decode."""
        if isinstance(stored, Unreadable):
            raise self._error(stored.error, name)
        return stored

    def get_as_stored(self, namespace: str, name: str) -> Stored:
        """What the storage holds, even a value that does not decode (an unsafe delete's)."""
        try:
            return self.storage.get(self.named_key(namespace, name))
        except StorageError as e:
            raise self._error(e, name) from None

    def list(self, namespace: str, options: ListOptions) -> ListResult:
        """The server's own list: objects that do not decode are passed over (readable)."""
        try:
            result = self.storage.get_list(self.list_prefix(namespace), options)
        except StorageError as e:
            raise self._error(e, "") from None
        return replace(result, items=readable(result.items))

    # What clients are served: a view whose conversions call out (a conversion webhook)
    # converts here, asynchronously; every other view already converts on read.

    async def served(self, stored: Stored) -> Stored:
        if isinstance(self.storage, AsyncStorageView):
            return await self.storage.present(stored)
        return stored

    async def read(
        self, namespace: str, name: str, *, consistent: bool = False, stale: bool = False
    ) -> Stored:
        """What a get serves; ``consistent`` (no resourceVersion): from the database when
        the cache cannot prove itself current (storage/etcd/through.py), or (``stale``)
        did not catch up in time."""
        through = self._through(consistent, stale)
        if through is None:
            return await self.served(self.get(namespace, name))
        return await self.served(await self._get_from(through, namespace, name))

    async def get_or_fetch(self, namespace: str, name: str) -> Stored:
        """``get``; a key the cache does not hold is looked for in the database that keeps
        every write (etcd): another replica may have just written it, and kube's writes
        read etcd where its cache has nothing."""
        try:
            stored = await self._stored_at(self.named_key(namespace, name))
        except StorageError as e:
            raise self._error(e, name) from None
        return self._decoded(stored, name)

    async def _stored_at(self, key: bytes) -> Stored:
        """What the cache holds at ``key``, else (etcd) the database; raises StorageError."""
        try:
            return self.storage.get(key)
        except StorageError as e:
            history = reads_history(self.storage)
            if e.code != KEY_NOT_FOUND or history is None:
                raise
        return await history.get_through(key)

    async def _fetched(self, key: bytes) -> Stored | None:
        """What a dry-run write finds at ``key`` (as kube's dry run, which reads where its
        cache has nothing); None where nothing is."""
        try:
            return await self._stored_at(key)
        except StorageError:
            return None

    async def _get_from(self, through: ReadsThrough, namespace: str, name: str) -> Stored:
        try:
            stored = await through.get_through(self.named_key(namespace, name))
        except StorageError as e:
            raise self._error(e, name) from None
        return self._decoded(stored, name)

    async def read_list(
        self,
        namespace: str,
        options: ListOptions,
        *,
        consistent: bool = False,
        stale: bool = False,
        prefix: bytes | None = None,
    ) -> ListResult:
        """What a list serves (``consistent`` and ``stale`` as for ``read``); ``prefix``,
        keys within the namespace's that a selector confines it to (endpoints/list.py
        ``narrowed``)."""
        through = self._through(consistent, stale)
        prefix = prefix or self.list_prefix(namespace)
        read = self._list_at if through is None else through.get_list_through
        gate_on = self.gates(corrupt.GATE)
        try:
            result = await read(prefix, options)
            if options.limit and gate_on:
                result = await corrupt.past_limit(read, prefix, options, result)
        except StorageError as e:
            raise self._error(e, "") from None
        from_database = through is not None or not reads_from_cache(self.storage)
        try:
            result = corrupt.check_readable(self.resource, result, gate_on, counted=from_database)
        except StorageError as e:  # the gate off: the first value that does not decode
            raise storeerrors.interpret(e, self.resource, "") from None
        if isinstance(self.storage, AsyncStorageView):
            return await self.storage.present_list(result)
        return result

    def _through(self, consistent: bool, stale: bool) -> ReadsThrough | None:
        """The database to read from rather than the cache, if any."""
        if stale:
            return reads_history(self.storage)
        return reads_through(self.storage) if consistent else None

    async def _list_at(self, prefix: bytes, options: ListOptions) -> ListResult:
        """From the cache; at a revision it let go, from the database that still has it
        (kube's cacher delegates such lists to etcd, which answers Expired once compacted)."""
        try:
            return self.storage.get_list(prefix, options)
        except StorageError as e:
            history = reads_history(self.storage) if options.revision else None
            if e.code != EXPIRED or history is None:
                raise
        return await history.get_list_through(prefix, options)

    # -- create -----------------------------------------------------------------------

    def default(self, obj: Obj) -> None:
        """The kind's defaults, as kube's decoder sets them: before mutating admission
        (webhooks and policies see them), and again before validation.  In Go a zero
        value is as absent, so defaulting fills both."""
        shape(obj, RECEIVED)
        apply_defaults(self.resource.group, self.resource.kind, obj)
        labels = getattr(self.strategy, "default_labels", None)  # those that need the server
        if labels is not None:
            labels(obj)

    def receive(
        self, obj: Obj, live: Obj | None, track: Track | None, default: bool = True
    ) -> Kept:
        """A write's object as admission sees it: defaulted as kube's decoding defaults
        what the writer sent, in Go's shape, its ownership recorded.  Returns the
        explicitly empty lists and maps Go's JSON leaves out, for the kind's defaulting
        and validation to see again after mutating admission (``restore_empty``).
        (Large writes run this, the kind's preparation and validation on a thread:
        ``heavy``.)"""
        if default:
            self.default(obj)
        kept: Kept = []
        shape(obj, DECODED, kept)
        if track is not None:
            track(live, obj)
        return kept

    async def create(
        self,
        namespace: str,
        obj: Obj,
        *,
        dry_run: bool = False,
        admit: Admit | None = None,
        track: Track | None = None,
        mutate: Mutate | None = None,
    ) -> Stored:
        """kube's order: ownership is recorded for what the writer sent, then mutating
        admission, the kind's preparation and validation, validating admission."""
        track = track or self._writer_tracker("")
        kept = await heavy.run(self.receive, obj, None, track)
        if mutate is not None:
            obj = await mutate(obj, None)
        restore_empty(kept)
        meta = obj.get("metadata", {})
        # kube's CheckGeneratedNameError: any object that names a generateName, even
        # one that also names itself, is told the server could not generate a name
        generated = bool(meta.get("generateName"))
        now = self.now()
        name = await heavy.run(before_create, self.resource, self.strategy, namespace, obj, now)
        drop_empty(kept)
        if admit is not None:
            await admit(obj, None)
        # as stored: admission may have dropped some, and Protobuf nils lists
        await heavy.run(shape, obj)
        key = self.key(namespace, name)
        if dry_run:
            return await self._dry_run_create(key, obj, name, generated)
        storeerrors.check_created_version(obj["metadata"].get("resourceVersion"))
        set_revision(obj, "")  # its place in the JSON; the storage fills it in
        try:
            try:
                return await self.storage.create(key, obj)
            except StorageError as e:
                if e.code != REQUEST_TOO_LARGE or track is None:
                    raise
                # kube drops managedFields (which can be large) and tries once more
                obj["metadata"].pop("managedFields", None)
                return await self.storage.create(key, obj)
        except StorageError as e:
            if e.code == KEY_EXISTS and generated:
                raise errors.generate_name_conflict(
                    self.resource.plural, self.resource.group, name
                ) from None
            if e.code == KEY_EXISTS:
                raise storeerrors.already_exists(self.storage, self.resource, key, name) from None
            raise self._error(e, name) from None

    async def _dry_run_create(self, key: bytes, obj: Obj, name: str, generated: bool) -> Stored:
        if await self._fetched(key) is None:  # answered as a create reads it back
            if isinstance(self.storage, AsyncStorageView):
                return await self.storage.unwritten(key, obj)
            if isinstance(self.storage, StorageView):
                return self.storage.unwritten(key, obj)
            return Stored(key, UNSTORED, object_json(obj))
        if generated:
            raise errors.generate_name_conflict(self.resource.plural, self.resource.group, name)
        raise storeerrors.already_exists(self.storage, self.resource, key, name)

    # -- update -----------------------------------------------------------------------

    async def update(
        self,
        namespace: str,
        name: str,
        updated: UpdateFunc,
        *,
        dry_run: bool = False,
        admit: Admit | None = None,
        subresource: str = "",
        force_allow_create: bool = False,
        track: Track | None = None,
        mutate: Mutate | None = None,
    ) -> tuple[Stored, bool]:
        """Returns the new state and whether it was created."""
        step = Update(
            self,
            namespace,
            name,
            updated,
            subresource,
            allow_create=force_allow_create,
            admit=admit,
            track=track or self._writer_tracker(subresource),
            mutate=mutate,
        )
        key = self.named_key(namespace, name)
        try:
            if dry_run:
                return await self._dry_run_update(key, step)
            try:
                stored = await self.storage.guaranteed_update(key, step, ignore_not_found=True)
            except StorageError as e:
                if e.code != REQUEST_TOO_LARGE or step.track is None:
                    raise
                step.track = without_managed_fields(step.track)
                stored = await self.storage.guaranteed_update(key, step, ignore_not_found=True)
        except Emptied as emptied:
            return await self._delete_emptied(emptied.last, name, dry_run), False
        except StorageError as e:
            raise self._error(e, name, updating=True) from None
        return stored, step.created

    async def _dry_run_update(
        self, key: bytes, try_update: Callable[[Obj | None, Stored | None], Awaitable[Obj]]
    ) -> tuple[Stored, bool]:
        current = await self._fetched(key)
        obj = await try_update(current.copy() if current else None, current)
        return Stored(key, UNSTORED, object_json(obj)), current is None
