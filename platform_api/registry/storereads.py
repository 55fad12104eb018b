"""The generic store's keys and reads (kube's Store.Get and Store.List): ``Store`` takes
them from ``Reads``, as it takes deletes from storedelete.py.

A read is served from the storage's cache, from the database behind it when the cache
cannot prove itself current or no longer holds the revision asked for (etcd), and maps
storage errors to Status errors, corrupt values included (corrupt.py).
"""

from __future__ import annotations

from dataclasses import replace

from platform_api import errors
from platform_api.errors import StatusError
from platform_api.registry import corrupt, storeerrors
from platform_api.registry.gateddrops import GateCheck
from platform_api.scheme.types import ResourceType
from platform_api.storage.etcd.layout import DEFAULT_PREFIX, default_kube_key
from platform_api.storage.interface import (
    EXPIRED,
    KEY_NOT_FOUND,
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
from platform_api.storage.view import AsyncStorageView
from platform_api.validation.field import go_quote
from platform_api.validation.names import is_path_segment_name


class Reads:
    """Keys and reads for a ``Store``; what it uses of the store is declared here."""

    resource: ResourceType
    storage: Storage
    prefix: bytes
    gates: GateCheck

    # -- keys and errors --------------------------------------------------------------

    def key(self, namespace: str, name: str) -> bytes:
        if self.resource.namespaced:
            _require_namespace(namespace)
            key = self.prefix + namespace.encode() + b"/" + name.encode()
            if namespace in (".", ".."):
                raise _invalid_key(key)
            return key
        return self.prefix + name.encode()

    def named_key(self, namespace: str, name: str) -> bytes:
        """The key of an object a request names: a name that cannot be one path segment
        is refused before storage sees it, as kube's key functions refuse it (after an
        empty namespace)."""
        if not name:  # the handler's Namer (dispatch asks it of built-in routes before a body)
            raise errors.bad_request("name must be provided")
        if self.resource.namespaced:
            _require_namespace(namespace)  # before the name's own checks, as in kube
        if name in (".", "..") or "/" in name or "%" in name:
            problems = ";".join(is_path_segment_name(name))
            raise errors.bad_request(f"Name parameter invalid: {go_quote(name)}: {problems}")
        return self.key(namespace, name)

    def list_prefix(self, namespace: str) -> bytes:
        if self.resource.namespaced and namespace:
            if namespace in (".", ".."):
                raise _invalid_key(self.prefix + namespace.encode())
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


def _require_namespace(namespace: str) -> None:
    """kube's NamespaceKeyFunc refuses a namespaced key without a namespace
    (``/namespaces//configmaps/x``, a collection delete's items there)."""
    if not namespace:
        raise errors.bad_request("Namespace parameter required.")


def _invalid_key(key: bytes) -> StatusError:
    """kube's etcd3 store refuses a key with a ``.`` or ``..`` segment (a namespace in the
    URL: names are refused before); its plain 500 names the key under the prefix."""
    kube_key = default_kube_key(key).removeprefix(DEFAULT_PREFIX)
    return errors.unknown(f"invalid key: {go_quote(kube_key)}")
