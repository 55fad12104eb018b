"""Storage failures as kube's store words them (its ``storeerr`` package and the checks
its etcd3 store makes on a create): the registry store's one place for them."""

from __future__ import annotations

from platform_api import errors, gotext
from platform_api.errors import StatusError
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import (
    CONFLICT,
    EXPIRED,
    INVALID_OBJECT,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    NO_SPACE,
    REQUEST_TOO_LARGE,
    UNREADABLE,
    Storage,
    StorageError,
)

_RV_ON_CREATE = "resourceVersion should not be set on objects to be created"


def interpret(e: StorageError, rt: ResourceType, name: str) -> StatusError:
    """The Status error of a storage failure on ``name`` of ``rt``."""
    if e.code == KEY_NOT_FOUND:
        return errors.not_found(rt.plural, rt.group, name)
    if e.code == KEY_EXISTS:
        return errors.already_exists(rt.plural, rt.group, name)
    if e.code == CONFLICT:
        return errors.conflict(rt.plural, rt.group, name)
    if e.code == INVALID_OBJECT:
        return errors.conflict(rt.plural, rt.group, name, str(e))
    return unnamed(e)


def unnamed(e: StorageError) -> StatusError:
    """The Status error of a storage failure that names no object (every code but the
    four above)."""
    if e.code == EXPIRED:
        return errors.expired("The resourceVersion for the provided list is too old.")
    if e.code == REQUEST_TOO_LARGE:
        return errors.unknown(str(e))  # kube passes etcd's error through as it is
    if e.code in (NO_SPACE, UNREADABLE):  # "database space exceeded", a full disk; a
        return errors.unknown(str(e))  # value that does not decode: the text as it is
    return errors.internal_error(e)


def already_exists(storage: Storage, rt: ResourceType, key: bytes, name: str) -> StatusError:
    """kube's AlreadyExists, which says so when the object there is being deleted
    (a namespace still terminating, an object waiting on its finalizers)."""
    error = errors.already_exists(rt.plural, rt.group, name)
    try:
        existing = storage.get(key).object
    except StorageError:
        return error
    if existing.get("metadata", {}).get("deletionTimestamp"):
        error.message = "object is being deleted: " + error.message
    return error


def check_created_version(version: object) -> None:
    """kube's storage refuses a create whose resourceVersion it reads as a revision (an
    unsigned decimal other than 0) with a plain 500; anything else it lets through and
    replaces."""
    try:
        numbered = isinstance(version, str) and gotext.parse_int(version, unsigned=True) != 0
    except ValueError:
        numbered = False
    if numbered:
        raise errors.unknown(_RV_ON_CREATE)
