"""kube's corrupt-object errors, with ``AllowUnsafeMalformedObjectDeletion`` on.

With the gate on, kube's storage reports a value that does not decode or decrypt as a
corrupt object (kubernetes/apiserver's ``corrupt_obj_deleter.go``), so a client can tell
it from other failures and delete it unsafely: a read of it is an InternalError wrapping
``StorageError: corrupt object, Code: 7, Key: <key under the prefix>, ...``, and a list
that meets any is ``StorageReadError``, one cause per corrupt object, named by its whole
etcd key; an update or patch of one is a plain 500, ``object not decodable revision=N:
...``.  With the gate off the decoder's text is the error, as it is (storeerrors.py; a
list's, ``check_readable`` here).
The texts are those kube-apiserver v1.36 answered for values put with ``etcdctl``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from platform_api import errors
from platform_api.apiserver.metrics import REGISTRY, ReactorCounter
from platform_api.errors import StatusError
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import (
    UNREADABLE,
    Corruption,
    ListOptions,
    ListResult,
    StorageError,
    Unreadable,
)
from platform_api.storage.transformer import TRANSFORM_FAILED, listed

GATE = "AllowUnsafeMalformedObjectDeletion"
_MOST = 100  # kube's maxCorruptObjErrsToAggregate
STORE_READ_ERROR = "StorageReadError"
DECODE_ERRORS = ReactorCounter(
    "apiserver_storage_decode_errors_total",
    "[ALPHA] Number of stored object decode errors split by object type",
    ["group", "resource"],
    REGISTRY,
)


def count_decode_errors(rt: ResourceType, found: list[StorageError]) -> None:
    """kube's etcd3 store counts each value it read that does not decode (one that does
    not decrypt fails before decoding, uncounted)."""
    for error in found:
        if error.code == UNREADABLE:
            DECODE_ERRORS.inc(rt.group, rt.plural)


def _problem(error: StorageError, corruption: Corruption) -> str:
    if error.code == TRANSFORM_FAILED:  # kube's transformer wrapper knows no revision
        return f"data from the storage is not transformable revision=0: {error}"
    return f"object not decodable revision={corruption.revision}: {error}"


def corrupt_text(error: StorageError, corruption: Corruption, key: str) -> str:
    """kube's ``StorageError`` for a corrupt object named ``key``."""
    return (
        f"StorageError: corrupt object, Code: 7, Key: {key}, ResourceVersion: 0, "
        f"AdditionalErrorMsg: {_problem(error, corruption)}"
    )


def update_error(error: StorageError, corruption: Corruption) -> StatusError:
    """An update or patch of a corrupt object: kube's guaranteed update passes the
    decoder's wrapped error on as it is, a plain 500 (a value that does not decrypt is
    its storage's InternalError there, as with the gate off)."""
    problem = _problem(error, corruption)
    if error.code == TRANSFORM_FAILED:
        return errors.internal_error(problem)
    return errors.unknown(problem)


def read_error(error: StorageError, corruption: Corruption) -> StatusError:
    """A get, update or delete of a corrupt object (kube names it under its prefix)."""
    return errors.internal_error(corrupt_text(error, corruption, corruption.under))


def list_error(rt: ResourceType, found: list[StorageError]) -> StatusError:
    """A list that met corrupt objects: each one a cause (at most a hundred)."""
    causes = []
    for error in found[:_MOST]:
        corruption = error.corrupt
        assert corruption is not None
        text = corrupt_text(error, corruption, corruption.where)
        causes.append(
            {"reason": "UnexpectedServerResponse", "message": text, "field": corruption.where}
        )
    if len(found) > _MOST:
        causes.append({"reason": "TooMany", "message": "too many errors, the list is truncated"})
    resource = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
    details = {"name": "list", "group": rt.group, "kind": rt.plural, "causes": causes}
    return StatusError(
        500,
        STORE_READ_ERROR,
        f"failed to read one or more {resource} from the storage",
        {k: v for k, v in details.items() if v},
    )


def check_readable(
    rt: ResourceType, result: ListResult, gate_on: bool, *, counted: bool = True
) -> ListResult:
    """A client's list fails on an object that does not decode, as kube's does: on the
    first, or with the gate on on every one, each a cause.  ``counted``: the list was read
    from the database (kube counts its etcd3 store's decode errors, not its cache's)."""
    found = [stored for stored in result.items if isinstance(stored, Unreadable)]
    if counted:
        count_decode_errors(rt, [stored.error for stored in found[: None if gate_on else 1]])
    if found and gate_on:
        raise list_error(rt, [stored.error for stored in found])
    if found:
        raise listed(found[0])
    return result


async def past_limit(
    read: Callable[[bytes, ListOptions], Awaitable[ListResult]],
    prefix: bytes,
    options: ListOptions,
    result: ListResult,
) -> ListResult:
    """A chunk that met a corrupt object, with the gate on: kube's list reads on until it
    has ``limit`` objects that decode, so its error names every corrupt object up to
    there, past the chunk's end too."""
    readable = sum(1 for s in result.items if not isinstance(s, Unreadable))
    if readable == len(result.items) or result.continue_key is None:
        return result
    rest = await read(prefix, replace(options, start_after=result.continue_key, limit=0))
    items = list(result.items)
    for stored in rest.items:
        if readable >= options.limit:
            break
        items.append(stored)
        readable += not isinstance(stored, Unreadable)
    return replace(result, items=items)
