"""How a watcher's events are written: JSON lines, Protobuf frames or a CBOR sequence, of
objects, tables or partial metadata.

Each event is encoded once per rendering and the bytes are shared by every watcher
that renders it alike (the cache lives on the hub's event).  The plain JSON rendering
writes the stored bytes as they are.
"""

from __future__ import annotations

from typing import Any

from platform_api.codec import cbor, protobuf
from platform_api.endpoints import binary
from platform_api.endpoints.negotiation import Output
from platform_api.endpoints.scope import Scope
from platform_api.endpoints.views import partial_object
from platform_api.gotext import go_escaped, object_json
from platform_api.scheme import bytefields
from platform_api.storage.interface import DELETED, Event, Stored, deleted_at

Obj = dict[str, Any]
INITIAL_EVENTS_END = "platform.io/initial-events-end"
# Stock client-go waits for the upstream key before it reports an informer synced.
UPSTREAM_INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def stamped(stored: Stored, revision: int) -> bytes:
    """The object of a DELETED event: its last state at the deletion's revision."""
    return deleted_at(stored, revision).data


class EventEncoder:
    """One watcher's rendering of events."""

    def __init__(self, scope: Scope, out: Output, include: str) -> None:
        self.scope = scope
        self.out = out
        self.include = include
        self.protobuf = out.encoding == "protobuf"
        self.cbor = out.encoding == "cbor"
        self.plain = out.plain_json and not scope.ctx.render_group
        self.headers_sent = False  # a Table watch's first Table carries the columns
        # Watchers rendering alike share the bytes: the served version and the upstream
        # group name a client asked in are part of the rendering.
        self.key = (
            out.encoding,
            out.view,
            out.group,
            out.version,
            include,
            scope.resource.api_version,
            scope.ctx.render_group,
        )

    def _object(self, event_type: str, stored: Stored, revision: int) -> bytes:
        deleted = event_type == DELETED
        if self.plain:
            return stamped(stored, revision) if deleted else stored.data
        if deleted:
            stored = Stored(stored.key, revision, stamped(stored, revision))
        obj, out = stored.object, self.out
        if out.view == "table":
            return self._table(obj, self.include)
        # A DELETED event's object is synthetic (the last state, stamped with the event's
        # revision; for a selector transition that revision holds another state): it must
        # not enter the per-revision message cache, where a GET would find it.
        target: Stored | Obj = obj if deleted else stored
        if out.view == "partial":
            target = obj = partial_object(obj, out)
        if self.protobuf:
            api_version = self.scope.outgoing_api_version(obj.get("apiVersion", ""))
            return binary.object_body(self.scope.handlers.messages, target, api_version)
        if self.cbor:
            return cbor.encode(self.scope.outgoing(obj), bytefields.for_object(obj))
        return object_json(self.scope.outgoing(obj))

    def _table(self, obj: Obj, include: str) -> bytes:
        """One object as a Table, as kube's watch encoder makes it: the object's
        resourceVersion in the table's metadata, and column definitions in the stream's
        first Table only (``null`` after it)."""
        out = self.out
        meta = {"resourceVersion": (obj.get("metadata") or {}).get("resourceVersion", "")}
        table = self.scope.handlers.tables.table(
            self.scope.resource, [self.scope.outgoing(obj)], out.group, out.version, include, meta
        )
        if self.headers_sent:
            table["columnDefinitions"] = None
        self.headers_sent = True
        return object_json(table)

    def _encode(self, obj: Obj) -> bytes:
        """A bookmark's or an error's object, in the stream's encoding."""
        if self.protobuf:
            return protobuf.encode(obj)
        return cbor.encode(obj) if self.cbor else object_json(obj)

    def _frame(self, event_type: str, body: bytes) -> bytes:
        if self.protobuf:
            return protobuf.encode_watch_event(event_type, body)
        if self.cbor:
            return cbor.watch_event(event_type, body)
        return b'{"type":"' + event_type.encode() + b'","object":' + go_escaped(body) + b"}\n"

    def event(self, event_type: str, stored: Stored, revision: int, event: Event | None) -> bytes:
        """An encoded event, cached on the hub's event for every other watcher."""
        key = (event_type, self.headers_sent, *self.key)
        cache = event.encoded if event else None
        if cache is not None and key in cache:
            return cache[key]
        headers_sent = self.headers_sent
        data = self._frame(event_type, self._object(event_type, stored, revision))
        if event is not None and (headers_sent or self.out.view != "table"):
            if cache is None:
                cache = {}
                event.encoded = cache
            cache[key] = data
        return data

    def bookmark(self, revision: int, initial_end: bool = False) -> bytes:
        rt = self.scope.resource
        meta: Obj = {"resourceVersion": str(revision)}
        if initial_end:  # a map: Go writes its keys sorted
            marks = {INITIAL_EVENTS_END: "true", UPSTREAM_INITIAL_EVENTS_END: "true"}
            meta["annotations"] = dict(sorted(marks.items()))
        obj = {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}
        if rt.custom:  # unstructured, all maps: every key sorted
            obj = {
                "apiVersion": rt.api_version,
                "kind": rt.kind,
                "metadata": dict(sorted(meta.items())),
            }
        if self.out.view == "table":  # a row of metadata, whatever includeObject says
            return self._frame("BOOKMARK", self._table(obj, "Metadata"))
        obj = self.scope.outgoing(obj)
        if self.out.view == "partial":
            obj = partial_object(obj, self.out)
        return self._frame("BOOKMARK", self._encode(obj))

    def error(self, status: Obj) -> bytes:
        """An ERROR event carrying a Status (a watch that cannot go on)."""
        return self._frame("ERROR", self._encode(status))
