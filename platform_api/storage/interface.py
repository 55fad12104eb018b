"""The storage interface: a revisioned key/value store of encoded objects.

Modelled on k8s.io/apiserver ``storage.Interface``: one global, monotonically
increasing revision is the resourceVersion of every object; writes are
compare-and-swap on that revision.  Values are JSON bytes that already carry their
``metadata.resourceVersion``, so a GET can be answered with the stored bytes.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import orjson

from platform_api.gotext import object_json

# StorageError codes (storage.ErrCode*).
KEY_NOT_FOUND = "KeyNotFound"
KEY_EXISTS = "KeyExists"
CONFLICT = "ResourceVersionConflicts"
EXPIRED = "Expired"
TOO_LARGE_REVISION = "TooLargeResourceVersion"
INVALID_OBJECT = "InvalidObj"
UNREACHABLE = "Unreachable"
# A write etcd would refuse for its size (storage/limits.py); kube answers 500 with etcd's text.
REQUEST_TOO_LARGE = "RequestTooLarge"
# A write the backend has no room for (etcd's "mvcc: database space exceeded", a full LMDB
# map or disk; storage/lmdb_space.py): kube answers 500 with the backend's text, no reason.
NO_SPACE = "NoSpace"
# A stored value that does not decode (written around the server: ``etcdctl put``); kube
# answers a read of it 500 with the decoder's text, no reason.
UNREADABLE = "Unreadable"

# etcd's default --max-request-bytes (the raft entry of one write), and kube's etcd client
# MaxCallSendMsgSize (the gRPC request).  Every backend applies both, so data can move to etcd.
MAX_REQUEST_BYTES = 1572864
MAX_GRPC_SEND_BYTES = 2 * 1024 * 1024

# Watch event types.
ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"


@dataclass(frozen=True)
class Corruption:
    """Where a value that does not decode or decrypt is: ``where`` its whole key in the
    backend (etcd's, under its prefix), ``under`` that key without the prefix (kube's
    registry key), ``revision`` the value's."""

    where: str
    under: str
    revision: int


class StorageError(Exception):
    def __init__(self, code: str, key: bytes, message: str = "", revision: int = 0) -> None:
        super().__init__(message or f"{code}: {key!r}")
        self.code = code
        self.key = key
        self.revision = revision
        self.corrupt: Corruption | None = None  # set for an Unreadable value's error


# The revision of an object no write stored: a dry run's answer.  Its content is not the
# stored state of any revision, so nothing may cache it by revision.
UNSTORED = -1


# client-go's KUBE_CACHE_MUTATION_DETECTOR, for tests: each read of a shared object checks
# that no earlier reader edited it in place (on etcd the cache holds one per key).
MUTATION_DETECTOR = bool(os.environ.get("PLATFORM_CACHE_MUTATION_DETECTOR"))


class CacheMutation(AssertionError):
    """A shared ``Stored.object`` was edited in place: an edit must start from ``copy()``."""


_LAST_READER: dict[int, str] = {}  # the detector's: id(Stored) -> where it was last read


def _check_unchanged(stored: Stored, obj: dict[str, Any]) -> None:
    if obj != orjson.loads(stored.data):
        raise CacheMutation(
            f"a reader edited the shared object of {stored.key!r}; the last reader before "
            f"this one:\n{_LAST_READER.get(id(stored), '?')}"
        )
    _LAST_READER[id(stored)] = "".join(traceback.format_stack(limit=8)[:-2])


class Stored:
    """An encoded object at a revision.  ``data`` is what a GET returns verbatim."""

    __slots__ = ("_obj", "data", "key", "revision")

    def __init__(self, key: bytes, revision: int, data: bytes) -> None:
        self.key = key
        self.revision = revision
        self.data = data
        self._obj: dict[str, Any] | None = None

    @property
    def object(self) -> dict[str, Any]:
        """The decoded object, cached: treat it as read-only (use ``copy()`` to edit).
        Caches, watch events and informers hand the same one to every reader."""
        if self._obj is None:
            self._obj = orjson.loads(self.data)
        if MUTATION_DETECTOR:
            _check_unchanged(self, self._obj)
        return self._obj

    def glance(self) -> dict[str, Any]:
        """The decoded object for a reader that keeps none of it (read-only, as
        ``object``): the cached decoding if there is one, else one not cached.  A reader
        of every event (the garbage collector) would otherwise leave every object in the
        etcd watch cache decoded, ~1.8 KB beside its ~0.4 KB of JSON."""
        if self._obj is not None:
            return self.object
        obj: dict[str, Any] = orjson.loads(self.data)
        return obj

    def copy(self) -> dict[str, Any]:
        """A private, mutable decoding of the object."""
        obj: dict[str, Any] = orjson.loads(self.data)
        return obj

    def __repr__(self) -> str:
        return f"Stored({self.key!r}, {self.revision})"


class Unreadable(Stored):
    """A value in the store that does not decrypt or decode, and ``error``, what reading
    it fails with.  Kept in the current state, so reads report it and an unsafe delete
    (kube's AllowUnsafeMalformedObjectDeletion) can remove it; watchers never see it."""

    __slots__ = ("error",)

    def __init__(
        self,
        key: bytes,
        revision: int,
        data: bytes,
        error: StorageError,
        where: str,
        under: str = "",
    ) -> None:
        """``under``: ``where`` without the backend's prefix (kube's registry key)."""
        super().__init__(key, revision, data)
        self.error = error
        error.corrupt = Corruption(where, under or where, revision)

    @property
    def where(self) -> str:
        """The key as the backend names it (etcd's, under its prefix)."""
        assert self.error.corrupt is not None
        return self.error.corrupt.where

    @property
    def object(self) -> dict[str, Any]:
        raise self.error

    def glance(self) -> dict[str, Any]:
        raise self.error

    def copy(self) -> dict[str, Any]:
        raise self.error


def readable(items: list[Stored]) -> list[Stored]:
    """What the server's own readers (informers, controllers, admission) list: an object
    whose value does not decode is passed over, as watchers pass over it, rather than
    failing them all; a client's list reports it."""
    return [s for s in items if not isinstance(s, Unreadable)]


def deleted_at(last: Stored, revision: int) -> Stored:
    """A deleted object's last state at the deletion's revision: what kube's storage
    answers a delete with, and the object of its DELETED event."""
    obj = last.copy()
    obj.setdefault("metadata", {})["resourceVersion"] = str(revision)
    return Stored(last.key, revision, object_json(obj))


@dataclass(frozen=True)
class Preconditions:
    """``metav1.Preconditions``: the write applies only to this uid / resourceVersion."""

    uid: str | None = None
    resource_version: str | None = None

    def failure(self, current: dict[str, Any]) -> str | None:
        """Why ``current`` fails the preconditions, in kube's words, or None."""
        meta = current.get("metadata") or {}
        if self.uid is not None and meta.get("uid") != self.uid:
            return (
                f"Precondition failed: UID in precondition: {self.uid}, "
                f"UID in object meta: {meta.get('uid', '')}"
            )
        if self.resource_version is not None and (
            meta.get("resourceVersion") != self.resource_version
        ):
            return (
                "Precondition failed: ResourceVersion in precondition: "
                f"{self.resource_version}, ResourceVersion in object meta: "
                f"{meta.get('resourceVersion', '')}"
            )
        return None


@dataclass(frozen=True)
class ListOptions:
    """What ``get_list`` returns.

    ``revision`` 0 reads the newest state; a positive revision reads the state as of
    that revision (within the history window).  ``start_after`` is the last key a
    previous chunk returned.  ``predicate`` filters decoded objects; when it is set
    the remaining count is not computed (kube omits it with selectors).  ``single``:
    the prefix is one object's key (a ``metadata.name`` selector) and only that key is
    read, not the keys it prefixes, as kube's non-recursive GetList reads it.
    """

    revision: int = 0
    start_after: bytes = b""
    limit: int = 0
    predicate: Callable[[dict[str, Any]], bool] | None = None
    single: bool = False

    def selects(self, stored: Stored) -> bool:
        """Whether the list takes ``stored``: a value that does not decode always (the
        registry reports it to a client, or passes over it for the server's own reads)."""
        return (
            self.predicate is None
            or isinstance(stored, Unreadable)
            or self.predicate(stored.object)
        )


@dataclass
class ListResult:
    items: list[Stored]
    revision: int
    # Key of the last returned item when more items remain, else None.
    continue_key: bytes | None
    remaining: int | None


@dataclass
class Event:
    """One change.  For DELETED, ``stored`` is the last state and ``revision`` the deletion's.

    ``encoded`` and ``batches`` hold what watch streams encoded of it while it was
    delivered (each stream kind's line, the batch it starts), so each is encoded once
    for every stream; ``delivered`` drops them."""

    type: str
    revision: int
    key: bytes
    stored: Stored | None
    prev: Stored | None = None
    encoded: dict[Any, bytes] | None = field(default=None, compare=False, repr=False)
    batches: dict[Any, bytes] | None = field(default=None, compare=False, repr=False)


def delivered(events: list[Event]) -> None:
    """Every watch stream has had ``events``: drop their encodings.  The etcd watch cache
    keeps its events for the history window, where those bytes would stay (~1.7 KB an
    event); a stream that replays one later encodes it again."""
    for event in events:
        event.encoded = event.batches = None


# May be async: admission webhooks run inside the retry loop, as in kube.
TryUpdate = Callable[
    [dict[str, Any] | None, Stored | None], dict[str, Any] | Awaitable[dict[str, Any]]
]
ValidateDeletion = Callable[[dict[str, Any]], None]


class Storage(Protocol):
    """A revisioned store; reads are synchronous snapshots, writes are Deferreds."""

    def current_revision(self) -> int: ...

    def compacted_revision(self) -> int:
        """Lists (and continue tokens) below this revision answer 410 Expired."""
        ...

    def mark_compaction(self) -> Awaitable[int]:
        """A tick of kube's compactor (every ``--etcd-compaction-interval``): the revision
        moves on, and lists below the previous tick's revision expire."""
        ...

    def get(self, key: bytes) -> Stored:
        """The newest state of ``key``; raises StorageError(KEY_NOT_FOUND)."""
        ...

    def get_list(self, prefix: bytes, options: ListOptions) -> ListResult: ...

    def count(self, prefix: bytes) -> int: ...

    def create(self, key: bytes, obj: dict[str, Any]) -> Awaitable[Stored]:
        """Store a new object; its resourceVersion is set to the new revision."""
        ...

    def guaranteed_update(
        self,
        key: bytes,
        try_update: TryUpdate,
        *,
        ignore_not_found: bool = False,
        preconditions: Preconditions | None = None,
    ) -> Awaitable[Stored]:
        """Apply ``try_update`` to the newest state, retrying on concurrent writes.

        ``try_update(obj, stored)`` gets a private copy (None when absent and
        ``ignore_not_found``) and returns the new object.  A result equal to the
        current object is not written and keeps its resourceVersion.
        """
        ...

    def delete(
        self,
        key: bytes,
        *,
        preconditions: Preconditions | None = None,
        validate: ValidateDeletion | None = None,
    ) -> Awaitable[Stored]:
        """Remove ``key``; returns the last state at the deletion's revision
        (``deleted_at``). Retries ``validate`` on conflicts."""
        ...

    def delete_corrupt(self, key: bytes, stand_in: dict[str, Any]) -> Awaitable[None]:
        """Remove a value that no longer decodes (kube's unsafe delete); the change log
        and watchers get ``stand_in`` as the deleted object."""
        ...

    def events_since(self, revision: int, prefix: bytes = b"") -> list[Event]:
        """Changes after ``revision`` from the change log; raises EXPIRED (its ``revision``
        the oldest one the log still has) if that history is gone."""
        ...


class ReadsThrough(Protocol):
    """A storage whose cache cannot prove a consistent read current (etcd before 3.5.13,
    etcd/through.py): such reads go to the database itself.  Or one whose database keeps
    revisions its cache has let go (``reads_history``)."""

    reads_through: bool

    def get_through(self, key: bytes) -> Awaitable[Stored]: ...

    def get_list_through(self, prefix: bytes, options: ListOptions) -> Awaitable[ListResult]: ...


def reads_through(storage: object) -> ReadsThrough | None:
    """``storage`` when its consistent reads go to the database, else None."""
    return cast(ReadsThrough, storage) if getattr(storage, "reads_through", False) else None


def reads_history(storage: object) -> ReadsThrough | None:
    """``storage`` when its database keeps revisions its cache no longer holds (etcd keeps
    them until compacted; the watch cache only its window): a list at such a revision, a
    later chunk or an exact resourceVersion, is read there, as kube's cacher delegates it."""
    return cast(ReadsThrough, storage) if getattr(storage, "database_history", False) else None


def reads_from_cache(storage: object) -> bool:
    """Whether ``storage`` answers ``get`` from a cache that may lag writes made through
    another server (etcd's watch cache); LMDB's reads are current in every worker."""
    return reads_through(storage) is not None or hasattr(storage, "consistent_revision")


async def consistent_get(storage: Storage, key: bytes) -> Stored:
    """``get`` as of now, for a server-side reader with no request scope (kube's live
    lookups are GETs, consistent): on a cache, once it has etcd's current revision, or
    from etcd itself where the cache cannot prove that.  Raises StorageError as ``get``."""
    through = reads_through(storage)
    if through is not None:
        return await through.get_through(key)
    current = getattr(storage, "consistent_revision", None)
    if current is not None:
        await storage.wait_for_revision(await current())  # type: ignore[attr-defined]
    return storage.get(key)
