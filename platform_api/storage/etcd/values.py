"""How the etcd store's objects become etcd values and back.

Values are written as kube writes them: in ``--storage-media-type``, without
``resourceVersion`` (the key's mod revision is the resourceVersion), through the value
transformer (encryption at rest) when one is configured.  A write of this server's is
remembered until its watch event comes back, so the event reuses the object instead of
decoding the value again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from platform_api.codec.goshape import set_revision
from platform_api.gotext import kept_json
from platform_api.storage import mediatypes, spans
from platform_api.storage.etcd.kv import KeyValue
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.interface import UNREADABLE, StorageError, Stored, Unreadable
from platform_api.storage.limits import check_send_size
from platform_api.storage.transformer import (
    AUTHENTICATED_PREFIXES,
    TRANSFORM_FAILED,
    StaleStored,
    TransformError,
    ValueTransformer,
    write,
)


class Values:
    def __init__(
        self, layout: KeyLayout, transformer: ValueTransformer | None, media_type: str
    ) -> None:
        self.layout = layout
        self.transformer = transformer
        self.media_type = media_type
        self.pending: dict[bytes, tuple[bytes, dict[str, Any]]] = {}  # writes on their way

    def encode(self, key: bytes, obj: dict[str, Any], expected: int) -> tuple[bytes, bytes, int]:
        """The etcd key, the value to write for ``obj`` and the length of its encoding
        before the transformer's; StorageError if etcd's client would refuse to send the write, judged
        by the value itself (a Protobuf or encrypted value's size is not its JSON's) and the
        key under this server's prefix.  Marks kube's steps on a traced write's span."""
        spans.event("About to Encode")
        meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
        plain = mediatypes.encode({**obj, "metadata": meta}, self.media_type)
        spans.event("Encode succeeded", len=len(plain))
        etcd_key = self.layout.etcd_key(key)
        try:
            value = write(self.transformer, key, plain, etcd_key)
        except TransformError as e:
            spans.event("TransformToStorage failed", err=str(e))
            raise
        spans.event("TransformToStorage succeeded")
        check_send_size(key, len(etcd_key), len(value), expected)
        return etcd_key, value, len(plain)

    def stored(self, kv: KeyValue) -> Stored | None:
        """A KeyValue as the registry sees it (decrypted, resourceVersion set), None for a
        key outside the layout, Unreadable for a value that does not decrypt or decode."""
        key = self.layout.registry_key(kv.key)
        if key is None:
            return None
        plain, stale = kv.value, False
        try:
            if self.transformer is not None:
                plain, stale = self._decrypted(key, kv)
        except TransformError as e:
            error = StorageError(TRANSFORM_FAILED, key, str(e))
            return self._unreadable(key, kv, error)
        try:
            builtin = self.layout.is_builtin(key)
            obj = mediatypes.decode(plain, builtin=builtin, typed=self.layout.type_of(key))
            set_revision(obj, str(kv.mod_revision))
        except (ValueError, KeyError, TypeError) as e:
            return self._unreadable(key, kv, StorageError(UNREADABLE, key, str(e)))
        kind = StaleStored if stale else Stored
        return kind(key, kv.mod_revision, kept_json(obj))

    def _unreadable(self, key: bytes, kv: KeyValue, error: StorageError) -> Unreadable:
        under = "/" + kv.key[len(self.layout.root) :].decode(errors="replace")
        return Unreadable(key, kv.mod_revision, kv.value, error, _named(kv.key), under)

    def _decrypted(self, key: bytes, kv: KeyValue) -> tuple[bytes, bool]:
        """The plaintext, authenticated by the etcd key as kube's is.  Releases before
        2026-12-05 authenticated AES-GCM and KMS v2 values by the registry key: such a
        value still reads, as stale, so its next write (or scripts/rewrite-secrets)
        stores it as kube-apiserver can read it."""
        assert self.transformer is not None
        try:
            return self.transformer.from_storage(key, kv.value, kv.key)
        except TransformError as first:
            if not kv.value.startswith(AUTHENTICATED_PREFIXES):
                raise  # no other provider authenticates: nothing else to try
            try:
                return self.transformer.from_storage(key, kv.value)[0], True
            except TransformError:
                raise first from None  # kube's words: the etcd key's failure

    def own_write(self, key: bytes, kv: KeyValue) -> Stored | None:
        """A write of this server's, seen on the watch: the object it wrote is at hand, so
        its value is not decoded again (most of a create's cost in the watch's path)."""
        own = self.pending.get(key)
        if own is None or own[0] != kv.value:
            return None
        obj = own[1]
        meta = {**obj["metadata"], "resourceVersion": str(kv.mod_revision)}
        return Stored(key, kv.mod_revision, kept_json({**obj, "metadata": meta}))

    @contextlib.contextmanager
    def writing(self, key: bytes, value: bytes, obj: dict[str, Any]) -> Iterator[None]:
        """While a write is on its way, its watch event can be matched to it (own_write)."""
        own = self.pending[key] = (value, obj)
        try:
            yield
        finally:
            if self.pending.get(key) is own:
                del self.pending[key]


def _named(etcd_key: bytes) -> str:
    return etcd_key.decode(errors="replace")
