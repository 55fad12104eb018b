"""The generic registry store (kube's ``registry.Store``): one for every resource type.

It turns API operations into storage operations: fills system metadata and runs the
kind's strategy (prepare.py) and the admission checks inside the storage's
compare-and-swap loop, maps storage errors to Status errors (storeerrors.py), and takes
its keys and reads from storereads.py and the deletion protocol from storedelete.py
(its rules in deletion.py).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
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
from platform_api.fieldmanager.manager import FieldManager, Who, update_tracker
from platform_api.fieldmanager.versions import settled
from platform_api.gotext import object_json
from platform_api.registry import storeerrors
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.gateddrops import GateCheck, kube_defaults
from platform_api.registry.prepare import (
    before_create,
)
from platform_api.registry.storedelete import Admit, Deletions, Emptied
from platform_api.registry.storereads import Reads
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
    KEY_EXISTS,
    REQUEST_TOO_LARGE,
    UNSTORED,
    Storage,
    StorageError,
    Stored,
)
from platform_api.storage.view import AsyncStorageView, StorageView
from platform_api.timestamps import format_timestamp

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


class Store(Reads, Deletions):
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

    def applier(
        self, manager: str, config: Obj, subresource: str = ""
    ) -> Callable[[Obj | None], Obj]:
        """An update function applying ``config`` with force, as ``manager``: kube's
        controllers that ``Apply`` or ``ApplyStatus`` their part of an object."""
        if self.field_manager is None:
            raise RuntimeError(f"the store of {self.resource.plural} has no field manager")
        fields = self.field_manager()
        who = Who(manager, self.resource.api_version, subresource)

        def apply(live: Obj | None) -> Obj:
            if live is None:  # (no controller applies to create)
                raise errors.not_found(self.resource.plural, self.resource.group, "")
            # a copy per try: the merge shares the configuration's values
            return fields.apply(live, copy.deepcopy(config), who, True, self.now())

        return apply

    def now(self) -> str:
        return format_timestamp(self.clock())

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

    async def receive(
        self, obj: Obj, live: Obj | None, track: Track | None, default: bool = True
    ) -> Kept:
        """A write's object as admission sees it: defaulted as kube's decoding defaults
        what the writer sent, in Go's shape, its ownership recorded (run again after
        each conversion it waits for: versions.settled).  Returns the explicitly empty
        lists and maps Go's JSON leaves out, for the kind's defaulting and validation
        to see again after mutating admission (``restore_empty``).  (Large writes run
        these, the kind's preparation and validation on a thread: ``heavy``.)"""
        kept = await heavy.run(self._as_decoded, obj, default, track is not None)
        if track is not None:
            await settled(lambda: heavy.run(track, live, obj))
        return kept

    def _as_decoded(self, obj: Obj, default: bool, tracked: bool) -> Kept:
        if default:
            self.default(obj)
        kept: Kept = []
        meta = obj.get("metadata")
        reset = isinstance(meta, dict) and meta.get("managedFields") == []
        shape(obj, DECODED, kept)
        if tracked and reset:  # Go decodes it as an empty slice, not nil: a reset (is_reset)
            obj["metadata"]["managedFields"] = []
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
        kept = await self.receive(obj, None, track)
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
        applied: bool = False,
    ) -> tuple[Stored, bool]:
        """Returns the new state and whether it was created; ``applied``: a server-side
        apply's write."""
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
            applied=applied,
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
