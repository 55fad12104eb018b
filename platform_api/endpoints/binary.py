"""Protobuf answers, with each stored revision encoded once.

A JSON GET writes the stored bytes untouched; a Protobuf one must encode.  A stored
revision never changes, so its message is cached by (key, revision) and a list is its
items' cached messages put together, as the JSON list is its items' stored bytes.
The type travels only in the envelope, so one message serves every group name and
every watcher.  The cache is bounded in bytes, least recently used first out.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from platform_api import errors
from platform_api.codec import protobuf
from platform_api.storage.interface import Stored

Obj = dict[str, Any]
CACHE_BYTES = 64 * 1024 * 1024


class MessageCache:
    """Encoded messages of stored revisions: (key, revision, kind) -> message bytes."""

    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._entries: OrderedDict[tuple[bytes, int, str], bytes] = OrderedDict()

    def message(self, stored: Stored, api_version: str, kind: str) -> bytes:
        key = (stored.key, stored.revision, kind)
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            return found
        data = encode_message(stored.object, api_version, kind)
        self._entries[key] = data
        self.size += len(data)
        while self.size > self.max_bytes and self._entries:
            _, old = self._entries.popitem(last=False)
            self.size -= len(old)
        return data


def encode_message(obj: Obj, api_version: str, kind: str) -> bytes:
    """An object's message; an object Protobuf cannot carry is a 500, as in kube."""
    try:
        return protobuf.encode_message(api_version, kind, obj)
    except protobuf.ProtobufError as e:
        raise errors.internal_error(e) from None


def object_body(cache: MessageCache, stored: Stored | Obj, api_version: str) -> bytes:
    """One object as a whole Protobuf body, typed ``api_version`` (the name asked in)."""
    if isinstance(stored, Stored):
        kind = stored.object.get("kind", "")
        message = cache.message(stored, api_version, kind)
    else:
        kind = stored.get("kind", "")
        message = encode_message(stored, api_version, kind)
    return protobuf.envelope(api_version, kind, message)


def list_body(
    cache: MessageCache,
    items: list[Stored],
    api_version: str,
    list_kind: str,
    list_meta: Obj,
) -> bytes:
    """A list as a whole Protobuf body from its items' cached messages."""
    kind = list_kind.removesuffix("List")
    messages = [cache.message(item, api_version, kind) for item in items]
    try:
        return protobuf.encode_list(api_version, list_kind, list_meta, messages)
    except protobuf.ProtobufError as e:
        raise errors.internal_error(e) from None


def status_body(status: Obj) -> bytes:
    """A Status (errors, deletions) as a whole Protobuf body."""
    return protobuf.encode({**status, "apiVersion": "v1", "kind": "Status"})
