"""The generic registry store (kube's ``registry.Store``): one for every resource type.

It turns API operations into storage operations: fills system metadata, runs the
kind's strategy and the admission checks inside the storage's compare-and-swap
loop, maps storage errors to Status errors, and implements the deletion protocol.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import orjson

from platform_api import errors
from platform_api.authentication.user import UserInfo
from platform_api.errors import StatusError
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.deletion import deletion_finalizers
from platform_api.registry.strategy import (
    FinalizeStrategy,
    Obj,
    StatusStrategy,
    Strategy,
    strategy_for,
)
from platform_api.scheme.decoding import format_timestamp
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import (
    CONFLICT,
    EXPIRED,
    INVALID_OBJECT,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    NO_SPACE,
    REQUEST_TOO_LARGE,
    UNSTORED,
    ListOptions,
    ListResult,
    Preconditions,
    Storage,
    StorageError,
    Stored,
)
from platform_api.storage.view import AsyncStorageView
from platform_api.uid import new_uid
from platform_api.validation import field
from platform_api.validation.field import FieldError

# The object as a request wants it, given the current object (None when absent).
UpdateFunc = Callable[[Obj | None], Obj]
# Validating admission: (new object, old object or None); raises StatusError.
Admit = Callable[[Obj, Obj | None], Awaitable[None]]
# Mutating admission of an update: (new object, old object or None) -> the object to
# write; it runs inside the retry loop, after the request's change, as kube's does.
Mutate = Callable[[Obj, Obj | None], Awaitable[Obj]]
# Field ownership of a write: (old object or None, new object); sets managedFields.
Track = Callable[[Obj | None, Obj], None]

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_GENERATED_BASE_MAX = 58
_RV_ON_CREATE = "resourceVersion should not be set on objects to be created"
_NAMESPACE_MISMATCH = (
    "the namespace of the provided object does not match the namespace sent on the request"
)


def resource_prefix(rt: ResourceType) -> bytes:
    return f"/{rt.group or 'core'}/{rt.plural}/".encode()


def generate_name(base: str) -> str:
    return base[:_GENERATED_BASE_MAX] + "".join(random.choices(_NAME_CHARS, k=5))


class WriteGuard(Protocol):
    """A check a kind's storage makes on every create and update, whoever configured
    admission (kube's RBAC stores refuse escalation this way)."""

    async def check(self, user: UserInfo, namespace: str, obj: Obj, old: Obj | None) -> None: ...


class Store:
    """CRUD for one resource type over the storage interface."""

    guard: WriteGuard | None = None

    def __init__(
        self,
        resource: ResourceType,
        storage: Storage,
        strategy: Strategy | None = None,
        prefix: bytes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.resource = resource
        self.storage = storage
        self.strategy = strategy or strategy_for(resource)
        self.subresource_strategies: dict[str, Strategy] = {
            "status": StatusStrategy(self.strategy),
            "finalize": FinalizeStrategy(self.strategy),
            # kinds whose sub-resources have rules of their own (a CSR's approval, status)
            **getattr(self.strategy, "subresource_strategies", dict)(),
        }
        self.prefix = prefix or resource_prefix(resource)
        self.clock = clock

    # -- keys and errors --------------------------------------------------------------

    def key(self, namespace: str, name: str) -> bytes:
        if self.resource.namespaced:
            return self.prefix + namespace.encode() + b"\x00" + name.encode()
        return self.prefix + name.encode()

    def list_prefix(self, namespace: str) -> bytes:
        if self.resource.namespaced and namespace:
            return self.prefix + namespace.encode() + b"\x00"
        return self.prefix

    def name_of_key(self, key: bytes) -> str:
        return (
            key.rsplit(b"\x00", 1)[-1].decode()
            if self.resource.namespaced
            else key[len(self.prefix) :].decode()
        )

    def _error(self, e: StorageError, name: str) -> StatusError:
        rt = self.resource
        if e.code == KEY_NOT_FOUND:
            return errors.not_found(rt.plural, rt.group, name)
        if e.code == KEY_EXISTS:
            return errors.already_exists(rt.plural, rt.group, name)
        if e.code == CONFLICT:
            return errors.conflict(rt.plural, rt.group, name)
        if e.code == INVALID_OBJECT:
            return errors.conflict(rt.plural, rt.group, name, str(e))
        if e.code == EXPIRED:
            return errors.expired("The resourceVersion for the provided list is too old.")
        if e.code == REQUEST_TOO_LARGE:
            return errors.unknown(str(e))  # kube passes etcd's error through as it is
        if e.code == NO_SPACE:  # etcd's "database space exceeded", a full disk: the same
            return errors.unknown(str(e))
        return errors.internal_error(e)

    def _invalid(self, name: str, errs: list[FieldError]) -> StatusError:
        return errors.invalid(self.resource.kind, self.resource.group, name, errs)

    def now(self) -> str:
        return format_timestamp(self.clock())

    # -- reads ------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> Stored:
        try:
            return self.storage.get(self.key(namespace, name))
        except StorageError as e:
            raise self._error(e, name) from None

    def list(self, namespace: str, options: ListOptions) -> ListResult:
        try:
            return self.storage.get_list(self.list_prefix(namespace), options)
        except StorageError as e:
            raise self._error(e, "") from None

    # What clients are served: a view whose conversions call out (a conversion webhook)
    # converts here, asynchronously; every other view already converts on read.

    async def served(self, stored: Stored) -> Stored:
        if isinstance(self.storage, AsyncStorageView):
            return await self.storage.present(stored)
        return stored

    async def read(self, namespace: str, name: str) -> Stored:
        return await self.served(self.get(namespace, name))

    async def read_list(self, namespace: str, options: ListOptions) -> ListResult:
        result = self.list(namespace, options)
        if isinstance(self.storage, AsyncStorageView):
            return await self.storage.present_list(result)
        return result

    # -- create -----------------------------------------------------------------------

    def _before_create(self, namespace: str, obj: Obj) -> str:
        """Fill system metadata and validate; returns the object's name."""
        meta = obj.setdefault("metadata", {})
        rt = self.resource
        if rt.namespaced:
            body_ns = meta.get("namespace") or ""
            if body_ns and body_ns != namespace:
                raise errors.bad_request(_NAMESPACE_MISMATCH)
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if meta.get("generateName") and not meta.get("name"):
            meta["name"] = generate_name(meta["generateName"])
        apply_defaults(rt.group, rt.kind, obj)
        meta["uid"] = new_uid()
        meta["creationTimestamp"] = self.now()
        for system in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(system, None)
        self.strategy.prepare_for_create(obj)
        errs = self.strategy.validate(obj)
        name = meta.get("name", "")
        if errs:
            raise self._invalid(name, errs)
        self.strategy.canonicalize(obj)
        return str(name)

    async def create(
        self,
        namespace: str,
        obj: Obj,
        *,
        dry_run: bool = False,
        admit: Admit | None = None,
        track: Track | None = None,
    ) -> Stored:
        if obj.get("metadata", {}).get("resourceVersion"):
            raise errors.bad_request(_RV_ON_CREATE)
        meta = obj.get("metadata", {})
        generated = bool(meta.get("generateName")) and not meta.get("name")
        name = self._before_create(namespace, obj)
        if admit is not None:
            await admit(obj, None)
        if track is not None:
            track(None, obj)
        key = self.key(namespace, name)
        if dry_run:
            return self._dry_run_create(key, obj, name)
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
            raise self._error(e, name) from None

    def _dry_run_create(self, key: bytes, obj: Obj, name: str) -> Stored:
        try:
            self.storage.get(key)
        except StorageError:
            return Stored(key, UNSTORED, orjson.dumps(obj))
        raise errors.already_exists(self.resource.plural, self.resource.group, name)

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
        strategy = self.subresource_strategies[subresource] if subresource else self.strategy
        key = self.key(namespace, name)
        created = False

        async def try_update(existing: Obj | None, stored: Stored | None) -> Obj:
            nonlocal created
            if existing is None:
                if subresource or not (strategy.allow_create_on_update or force_allow_create):
                    raise errors.not_found(self.resource.plural, self.resource.group, name)
                obj = updated(None)
                obj.setdefault("metadata", {}).pop("resourceVersion", None)
                if mutate is not None:
                    obj = await mutate(obj, None)
                self._check_name(obj, name)
                self._before_create(namespace, obj)
                if admit is not None:
                    await admit(obj, None)
                if track is not None:
                    track(None, obj)
                created = True
                return obj
            # Patches edit what they are given: they get their own copy, so that the
            # old object stays intact for generation, status and immutability checks.
            assert stored is not None
            obj = updated(stored.copy())
            if mutate is not None:
                obj = await mutate(obj, existing)
            self._before_update(namespace, name, obj, existing, strategy)
            if admit is not None:
                await admit(obj, existing)
            if track is not None:
                track(existing, obj)
            created = False
            return obj

        if dry_run:
            return await self._dry_run_update(key, try_update)
        try:
            try:
                stored = await self.storage.guaranteed_update(
                    key, try_update, ignore_not_found=True
                )
            except StorageError as e:
                if e.code != REQUEST_TOO_LARGE or track is None:
                    raise
                track = _without_managed_fields(track)  # try_update reads the new one
                stored = await self.storage.guaranteed_update(
                    key, try_update, ignore_not_found=True
                )
        except StorageError as e:
            raise self._error(e, name) from None
        if not created and self._should_delete_after_update(stored.object):
            version = stored.object["metadata"]["resourceVersion"]
            try:
                gone = await self.storage.delete(
                    key, preconditions=Preconditions(resource_version=version)
                )
                return gone, False
            except StorageError:
                pass  # someone else changed it meanwhile: their write decides
        return stored, created

    async def _dry_run_update(
        self, key: bytes, try_update: Callable[[Obj | None, Stored | None], Awaitable[Obj]]
    ) -> tuple[Stored, bool]:
        try:
            current: Stored | None = self.storage.get(key)
        except StorageError:
            current = None
        obj = await try_update(current.copy() if current else None, current)
        return Stored(key, UNSTORED, orjson.dumps(obj)), current is None

    def _check_name(self, obj: Obj, name: str) -> None:
        body_name = obj.get("metadata", {}).get("name")
        if body_name is not None and body_name != name:
            raise errors.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        obj.setdefault("metadata", {})["name"] = name

    def _before_update(
        self, namespace: str, name: str, obj: Obj, existing: Obj, strategy: Strategy
    ) -> None:
        meta = obj.setdefault("metadata", {})
        old_meta = existing["metadata"]
        self._check_name(obj, name)
        if self.resource.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise errors.bad_request(_NAMESPACE_MISMATCH)
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        version = meta.get("resourceVersion")
        if not version:
            if not strategy.allow_unconditional_update:
                # kube's update handler names the resource here, not the kind
                rt = self.resource
                raise errors.invalid(rt.plural, rt.group, name, [_rv_required()])
            meta["resourceVersion"] = old_meta["resourceVersion"]
        elif version != old_meta["resourceVersion"]:
            raise errors.conflict(self.resource.plural, self.resource.group, name)
        if strategy is self.strategy:
            apply_defaults(self.resource.group, self.resource.kind, obj)
        if "generation" in old_meta:
            meta["generation"] = old_meta["generation"]
        else:
            meta.pop("generation", None)
        strategy.prepare_for_update(obj, existing)
        meta = obj["metadata"]
        meta.setdefault("uid", old_meta.get("uid"))
        for system in ("creationTimestamp", "deletionTimestamp"):
            if old_meta.get(system):
                meta[system] = old_meta[system]
        if "deletionGracePeriodSeconds" in old_meta and "deletionGracePeriodSeconds" not in meta:
            meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
        errs = strategy.validate_update(obj, existing)
        if errs:
            raise self._invalid(name, errs)
        strategy.canonicalize(obj)

    @staticmethod
    def _should_delete_after_update(obj: Obj) -> bool:
        """The last finalizer of an object being deleted is gone: finish the deletion."""
        meta = obj.get("metadata", {})
        return (
            bool(meta.get("deletionTimestamp"))
            and not meta.get("finalizers")
            and meta.get("deletionGracePeriodSeconds", 0) == 0
        )

    # -- delete -----------------------------------------------------------------------

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
    ) -> tuple[Stored, bool]:
        """Returns the last (or now terminating) state and whether it is gone."""
        key = self.key(namespace, name)
        current = self.get(namespace, name)
        if preconditions is not None:
            why = preconditions.failure(current.object)
            if why:
                raise errors.conflict(self.resource.plural, self.resource.group, name, why)
        if admit is not None:
            await admit(current.object, current.object)
        finalizers = deletion_finalizers(current.object, propagation, orphan)
        if not current.object["metadata"].get("deletionTimestamp"):
            # Kinds that clean up before they go (CRDs) add their finalizer now.
            extra = self.strategy.finalizers_on_delete
            finalizers += [f for f in extra if f not in finalizers]
        if finalizers or self._has_pending_finalizers(current.object):
            return await self._mark_deleting(key, name, current, dry_run, finalizers), False
        if dry_run:
            return current, True
        try:
            stored = await self.storage.delete(key, preconditions=preconditions)
        except StorageError as e:
            raise self._error(e, name) from None
        return stored, True

    def _has_pending_finalizers(self, obj: Obj) -> bool:
        meta = obj.get("metadata", {})
        if meta.get("finalizers"):
            return True
        if self.resource.kind == "Namespace":  # namespaces finalize through spec.finalizers
            return bool(obj.get("spec", {}).get("finalizers"))
        return False

    async def _mark_deleting(
        self, key: bytes, name: str, current: Stored, dry_run: bool, finalizers: Sequence[str]
    ) -> Stored:
        """First phase of a deletion: stamp ``deletionTimestamp``; finalizers do the rest."""
        meta = current.object["metadata"]
        if meta.get("deletionTimestamp") and (meta.get("finalizers") or []) == list(finalizers):
            return current

        def mark(existing: Obj | None, _stored: Stored | None) -> Obj:
            if existing is None:
                raise errors.not_found(self.resource.plural, self.resource.group, name)
            meta = existing["metadata"]
            if finalizers:
                meta["finalizers"] = list(finalizers)
            else:
                meta.pop("finalizers", None)
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = self.now()
                meta["deletionGracePeriodSeconds"] = 0
                self.strategy.prepare_for_delete(existing)
                if self.resource.kind == "Namespace":
                    existing.setdefault("status", {})["phase"] = "Terminating"
            return existing

        if dry_run:
            return Stored(key, UNSTORED, orjson.dumps(mark(current.copy(), current)))
        try:
            return await self.storage.guaranteed_update(key, mark)
        except StorageError as e:
            raise self._error(e, name) from None

    def deleted_status(self, stored: Stored, obj: Obj | None = None) -> dict[str, Any]:
        """The Success Status kube answers for kinds that do not return the deleted object."""
        meta = (obj if obj is not None else stored.object).get("metadata", {})
        details: dict[str, Any] = {"name": meta.get("name", "")}
        if self.resource.group:
            details["group"] = self.resource.group
        details["kind"] = self.resource.plural
        details["uid"] = meta.get("uid", "")
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }


def _without_managed_fields(track: Track) -> Track:
    """kube's second try at a write too large for etcd: the same write, managedFields
    (which can be large) dropped.  Apply patches get no second try."""

    def strip(old: Obj | None, new: Obj) -> None:
        track(old, new)
        new.get("metadata", {}).pop("managedFields", None)

    return strip


def _rv_required() -> FieldError:
    return field.invalid("metadata.resourceVersion", 0, "must be specified for an update")
