"""The few failures of an etcd call that the store tells apart.

A failed gRPC call carries a status code and etcd's message; ``from_status`` turns them into
one of these by etcd's own message text (the strings etcd's Go client matches on), so the
store maps ``Compacted`` to Expired, ``FutureRevision`` to TooLargeResourceVersion and
``RequestTooLarge`` to 413.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from platform_api.storage.interface import NO_SPACE, REQUEST_TOO_LARGE, UNREACHABLE, StorageError

T = TypeVar("T")

# gRPC status codes the gateway reports (google.golang.org/grpc/codes).
_UNAVAILABLE_CODES = frozenset({4, 14})  # DeadlineExceeded, Unavailable


class EtcdError(Exception):
    """Any failed etcd call; ``code`` is the gRPC status code (0 when there was none)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class Unavailable(EtcdError):
    """No endpoint answered (refused, timed out, no leader): safe to retry later."""


class Compacted(EtcdError):
    """The revision asked for is older than the compacted one (the store's Expired)."""

    def __init__(self, message: str, compact_revision: int = 0) -> None:
        super().__init__(message, 11)
        self.compact_revision = compact_revision


class FutureRevision(EtcdError):
    """The revision asked for is newer than etcd's current one."""


class RequestTooLarge(EtcdError):
    """The request is over etcd's ``--max-request-bytes``."""


class NoSpace(EtcdError):
    """etcd's backend quota is full (``mvcc: database space exceeded``): only deletes and
    compaction help, as with a full LMDB map."""


class WatchCanceled(EtcdError):
    """etcd ended a watch for a reason other than compaction (the reason is the message)."""


_BY_MESSAGE: dict[str, type[EtcdError]] = {
    "etcdserver: mvcc: required revision has been compacted": Compacted,
    "etcdserver: mvcc: required revision is a future revision": FutureRevision,
    "etcdserver: request is too large": RequestTooLarge,
    "etcdserver: mvcc: database space exceeded": NoSpace,
    "etcdserver: no leader": Unavailable,
    "etcdserver: leader changed": Unavailable,
    "etcdserver: request timed out": Unavailable,
    "etcdserver: too many requests": Unavailable,
}


def from_status(code: int, message: str) -> EtcdError:
    """The exception for gRPC status ``code`` (an int, codes.proto) with etcd's ``message``."""
    kind = _BY_MESSAGE.get(message)
    if kind is Compacted:
        return Compacted(message)
    if kind is not None:
        return kind(message, code)
    if code == 8 and "larger than max" in message:  # gRPC's own receive limit
        return RequestTooLarge(message, code)
    if code in _UNAVAILABLE_CODES:
        return Unavailable(message, code)
    return EtcdError(message, code)


async def storage_call(key: bytes, work: Awaitable[T]) -> T:
    """An etcd call for ``key``, its failures as the registry's StorageErrors."""
    try:
        return await work
    except EtcdError as e:
        raise storage_error(key, e) from None


def storage_error(key: bytes, error: EtcdError) -> StorageError:
    """An etcd call's failure for ``key`` as the registry's StorageError."""
    if isinstance(error, RequestTooLarge):
        return StorageError(REQUEST_TOO_LARGE, key, error.message)
    if isinstance(error, NoSpace):
        return StorageError(NO_SPACE, key, error.message)
    return StorageError(UNREACHABLE, key, error.message)
