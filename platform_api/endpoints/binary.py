"""Protobuf and CBOR answers, with each stored revision encoded once.

A JSON GET writes the stored bytes untouched; a binary one must encode.  A stored
revision never changes, so its encoding is cached by storage key, revision and type
(versions, and the two Event APIs, are views of one stored revision), and a list is its
items' cached encodings put together, as the JSON list is its items' stored bytes.
Protobuf carries the type only in its envelope, so one message serves both names of a
group and every watcher; a CBOR object names its own apiVersion, so only objects sent
under the branded names are cached.  Each cache is bounded in bytes,
oldest entries out first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api import errors
from platform_api.codec import cbor, protobuf
from platform_api.scheme import bytefields
from platform_api.scheme.types import rebrand_group
from platform_api.storage.interface import UNSTORED, Stored

Obj = dict[str, Any]
CACHE_BYTES = 64 * 1024 * 1024
# (object, apiVersion, kind) -> its encoding as a cache keeps it.
Encode = Callable[[Obj, str, str], bytes]


class EncodedCache:
    """Encodings of stored objects, one entry per storage key for the revision last
    asked for: a lookup is one dict probe, which keeps a LIST of a thousand objects
    close to the JSON one.

    An entry matches the revision and type (the apiVersion, by its branded group name,
    and kind): a custom resource's served versions, an autoscaler's v1 and v2, and
    both Event APIs are views of one stored revision.  An object no
    write stored (a dry run's answer, revision ``UNSTORED``) is encoded but never cached:
    its revision's stored state is another."""

    def __init__(self, encode: Encode, max_bytes: int = CACHE_BYTES):
        self.encode = encode
        self.max_bytes = max_bytes
        self.size = 0
        self._entries: dict[bytes, tuple[int, str, bytes]] = {}

    def many(self, items: list[Stored], api_version: str, kind: str) -> list[bytes]:
        """The encodings of a list's items (the lookup inlined: it is the hot loop)."""
        entries, out = self._entries, []
        tag = _tag(api_version, kind)
        for item in items:
            found = entries.get(item.key)
            if found is not None and found[0] == item.revision and found[1] == tag:
                out.append(found[2])
            else:
                out.append(self.one(item, api_version, kind))
        return out

    def one(self, stored: Stored, api_version: str, kind: str) -> bytes:
        tag = _tag(api_version, kind)
        found = self._entries.get(stored.key)
        if found is not None and found[0] == stored.revision and found[1] == tag:
            return found[2]
        data = self.encode(stored.object, api_version, kind)
        if stored.revision == UNSTORED:
            return data
        if found is not None:
            del self._entries[stored.key]
            self.size -= len(found[2])
        self._entries[stored.key] = (stored.revision, tag, data)
        self.size += len(data)
        while self.size > self.max_bytes and self._entries:
            old = self._entries.pop(next(iter(self._entries)))
            self.size -= len(old[2])
        return data


def _tag(api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/")
    return f"{rebrand_group(group)}/{version}/{kind}"


# -- Protobuf ----------------------------------------------------------------------------


def encode_message(obj: Obj, api_version: str, kind: str) -> bytes:
    """An object's message; an object Protobuf cannot carry is a 500, as in kube."""
    try:
        return protobuf.encode_message(api_version, kind, obj)
    except protobuf.ProtobufError as e:
        raise errors.internal_error(e) from None


def _framed_message(obj: Obj, api_version: str, kind: str) -> bytes:
    """What the Protobuf cache keeps: the message framed as field 2 (``as_field_two``),
    which goes into an envelope or a list unchanged."""
    return protobuf.as_field_two(encode_message(obj, api_version, kind))


def message_cache() -> EncodedCache:
    return EncodedCache(_framed_message)


def object_body(cache: EncodedCache, stored: Stored | Obj, api_version: str) -> bytes:
    """One object as a whole Protobuf body, typed ``api_version`` (the name asked in)."""
    if isinstance(stored, Stored):
        kind = stored.object.get("kind", "")
        framed = cache.one(stored, api_version, kind)
    else:
        kind = stored.get("kind", "")
        framed = _framed_message(stored, api_version, kind)
    return protobuf.framed_envelope(api_version, kind, framed)


def list_body(
    cache: EncodedCache,
    items: list[Stored],
    api_version: str,
    list_kind: str,
    list_meta: Obj,
) -> bytes:
    """A list as a whole Protobuf body from its items' cached messages."""
    framed = cache.many(items, api_version, list_kind.removesuffix("List"))
    try:
        return protobuf.encode_list(api_version, list_kind, list_meta, framed)
    except protobuf.ProtobufError as e:
        raise errors.internal_error(e) from None


def status_body(status: Obj) -> bytes:
    """A Status (errors, deletions) as a whole Protobuf body."""
    return protobuf.encode({**status, "apiVersion": "v1", "kind": "Status"})


# -- CBOR --------------------------------------------------------------------------------


def _cbor_item(obj: Obj, api_version: str, kind: str) -> bytes:
    return cbor.encode_item(obj, bytefields.for_kind(api_version, kind))


def cbor_cache() -> EncodedCache:
    return EncodedCache(_cbor_item)


def cbor_object_body(cache: EncodedCache, stored: Stored) -> bytes:
    """A stored object as a whole CBOR body (branded names only: the object names them)."""
    obj = stored.object
    return cbor.SELF_DESCRIBED + cache.one(stored, obj.get("apiVersion", ""), obj.get("kind", ""))


def cbor_list_body(
    cache: EncodedCache, items: list[Stored], api_version: str, list_kind: str, list_meta: Obj
) -> bytes:
    """A list as a whole CBOR body from its items' cached encodings."""
    encoded = cache.many(items, api_version, list_kind.removesuffix("List"))
    return cbor.encode_list(api_version, list_kind, list_meta, encoded)
