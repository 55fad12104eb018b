"""watch: a chunked stream of JSON events, one per line.

A stream starts with the current state (synthetic ADDED events) or replays the change
log from the client's resourceVersion, then follows the hub.  Each event is encoded
once per output format and shared by every watcher.  A watcher whose client reads
too slowly is ended (it re-watches from its last revision) so it never holds up the
hub, the writers or other watchers.
"""

from __future__ import annotations

import random
from collections import deque

from twisted.internet.defer import Deferred, ensureDeferred, succeed
from twisted.internet.interfaces import IDelayedCall, IPushProducer
from twisted.python.failure import Failure
from zope.interface import implementer

from platform_api import errors
from platform_api.endpoints import cachespans
from platform_api.endpoints.get import storage_revision
from platform_api.endpoints.list import (
    ListParams,
    narrowed,
    parse_params,
    parse_revision,
    predicate,
)
from platform_api.endpoints.negotiation import CBOR_SEQ, Output, stream_types
from platform_api.endpoints.options import arg
from platform_api.endpoints.responses import write_warnings
from platform_api.endpoints.scope import Scope
from platform_api.endpoints.tables import check_include
from platform_api.endpoints.watchencoding import EventEncoder
from platform_api.endpoints.watchmetrics import initial_events, terminated
from platform_api.endpoints.watchmetrics import sent as record_sent
from platform_api.goduration import seconds_duration
from platform_api.storage import spans
from platform_api.storage.interface import (
    ADDED,
    DELETED,
    EXPIRED,
    MODIFIED,
    Event,
    ListOptions,
    StorageError,
    Stored,
    delivered,
)
from platform_api.storage.triggers import Trigger
from platform_api.storage.view import AsyncStorageView, StorageView

BOOKMARK_INTERVAL = 60.0
# Events queued for a client that is not reading before its stream is ended.
MAX_QUEUED = 10000
REPLAY_SLICE = 500  # events per write when replaying the change log
# kube's watch-cache triggers (registry/core/pod/storage: ``spec.nodeName``): a watch
# selecting one value of such a field is sent only the events of objects that have it.
TRIGGERS = {("", "pods"): "spec.nodeName"}


@implementer(IPushProducer)
class WatchStream:
    """One client's watch: a hub subscriber and a push producer for its transport."""

    def __init__(self, scope: Scope, params: ListParams, out: Output) -> None:
        self.scope = scope
        self.params = params
        self.out = out
        self.prefix = scope.store.list_prefix(scope.namespace)
        self.match = predicate(scope, params)
        self.trigger = _trigger(scope, params)
        self.revision = 0
        self.queue: deque[bytes] = deque()
        self.paused = False
        self.done: Deferred[None] = Deferred()
        self._timers: list[IDelayedCall] = []
        include = arg(scope.request, b"includeObject") or "Metadata"
        self.encoder = EventEncoder(scope, out, include)
        storage = scope.store.storage
        self.view = storage if isinstance(storage, StorageView) else None
        # Conversions that call out (webhooks): batches convert one after the other.
        self.async_view = storage if isinstance(storage, AsyncStorageView) else None
        self._converting: Deferred[None] = succeed(None)

    def line(self, event_type: str, stored: Stored, revision: int, event: Event | None) -> bytes:
        if self._cannot_render():
            return b""
        return self.encoder.event(event_type, stored, revision, event)

    def _bookmark(self, revision: int, initial_end: bool = False) -> bytes:
        if self._cannot_render():
            return b""
        return self.encoder.bookmark(revision, initial_end)

    def _cannot_render(self) -> bool:
        """Asked for a list kind (``as=PartialObjectMetadataList``), kube's watch fails to
        transform its first event and ends the stream having written nothing: so here."""
        if self.out.refused:
            self.end()
            return True
        return False

    # -- the hub's side -------------------------------------------------------------------

    def _present(self, event: Event) -> Event:
        """The event as this version shows it, converted once for all its watchers."""
        assert self.view is not None
        served = self.scope.resource.api_version
        views: dict[str, Event] | None = getattr(event, "views", None)
        if views is None:
            views = {}
            event.views = views  # type: ignore[attr-defined]
        seen = views.get(served)
        if seen is None:
            seen = views[served] = self.view.present_event(event)
        return seen

    def deliver(self, events: list[Event]) -> None:
        if self.done.called or not events:
            return
        if self.async_view is not None:
            self._convert_then_deliver(events)
            return
        if self.view is not None:
            events = [self._present(event) for event in events]
        self._deliver_now(events)

    def _convert_then_deliver(self, events: list[Event]) -> None:
        view = self.async_view
        assert view is not None

        async def convert(_: object) -> None:
            if not self.done.called:
                self._deliver_now(await view.present_events(events))

        self._converting.addCallback(lambda r: ensureDeferred(convert(r)))
        self._converting.addErrback(self._conversion_failed)

    def _conversion_failed(self, failure: Failure) -> None:
        error = failure.value
        if not isinstance(error, errors.StatusError):
            error = errors.internal_error(error)
        if not self.done.called:
            self.send(self.encoder.error(error.status()))
            self.end()

    def _deliver_now(self, events: list[Event]) -> None:
        if self.done.called or self._cannot_render():
            return
        if self.match is None and events[0].revision > self.revision:
            # No selector and nothing seen yet from this batch: every such watcher of the
            # same prefix and format writes the same bytes, so the batch is encoded once.
            self.send(self._shared_batch(events))
            self.revision = events[-1].revision
            return
        lines = [line for event in events if (line := self._translate(event)) is not None]
        if lines:
            self.send(lines[0] if len(lines) == 1 else b"".join(lines))

    def _shared_batch(self, events: list[Event]) -> bytes:
        first = events[0]
        key = (len(events), events[-1].revision, self.encoder.key)
        cache = first.batches
        if cache is None:
            cache = first.batches = {}
        data = cache.get(key)
        if data is None:
            lines = []
            for event in events:
                if event.type == DELETED:
                    assert event.prev is not None
                    lines.append(self.line(DELETED, event.prev, event.revision, event))
                else:
                    assert event.stored is not None
                    lines.append(self.line(event.type, event.stored, event.revision, event))
            data = b"".join(lines)
            cache[key] = data
        return data

    def _translate(self, event: Event) -> bytes | None:
        """The line this watcher gets for ``event``: selector transitions become ADDED/DELETED."""
        if event.revision <= self.revision or self.done.called:
            return None
        self.revision = event.revision
        current = event.stored if event.type != DELETED else None
        cur_match = current is not None and (self.match is None or self.match(current.object))
        prev = event.prev
        prev_match = prev is not None and (self.match is None or self.match(prev.object))
        if event.type == ADDED or (event.type == MODIFIED and not prev_match):
            if cur_match and current is not None:
                return self.line(ADDED, current, event.revision, event)
        elif cur_match and current is not None:
            return self.line(MODIFIED, current, event.revision, event)
        elif prev_match and prev is not None:
            return self.line(DELETED, prev, event.revision, event)
        return None

    def send(self, data: bytes) -> None:
        if self.done.called:
            return
        record_sent(self.scope.resource, data)
        if self.paused or self.queue:
            self.queue.append(data)
            if len(self.queue) > MAX_QUEUED:
                terminated(self.scope.resource)
                self.end()  # too slow: the client re-watches from its last revision
            return
        self.scope.request.write(data)

    # -- IPushProducer --------------------------------------------------------------------

    def pauseProducing(self) -> None:
        self.paused = True

    def resumeProducing(self) -> None:
        self.paused = False
        while self.queue and not self.paused and not self.done.called:
            self.scope.request.write(self.queue.popleft())

    def stopProducing(self) -> None:
        self.end()

    # -- lifetime ---------------------------------------------------------------------------

    def start(self, timeout: float) -> None:
        reactor = self.scope.handlers.reactor
        self._timers.append(reactor.callLater(timeout, self.finish_cleanly))
        if self.params.allow_bookmarks:
            self._timers.append(reactor.callLater(BOOKMARK_INTERVAL, self._periodic_bookmark))

    def _periodic_bookmark(self) -> None:
        if self.done.called:
            return
        self.send(self._progress())
        reactor = self.scope.handlers.reactor
        self._timers.append(reactor.callLater(BOOKMARK_INTERVAL, self._periodic_bookmark))

    def _progress(self) -> bytes:
        """A bookmark at the newest revision this stream has been sent (or skipped)."""
        return self._bookmark(max(self.revision, self.scope.handlers.hub.streamed_revision))

    def finish_cleanly(self) -> None:
        if self.params.allow_bookmarks and not self.queue:
            self.send(self._progress())
        self.end()

    def end(self) -> None:
        if self.done.called:
            return
        self.scope.handlers.hub.unsubscribe(self)
        for timer in self._timers:
            if timer.active():
                timer.cancel()
        self.queue.clear()
        self.done.callback(None)


def _trigger(scope: Scope, params: ListParams) -> Trigger | None:
    rt = scope.resource
    field = TRIGGERS.get((rt.group, rt.plural))
    value = params.fields.exact(field) if field else None
    if field is None or value is None:
        return None
    return field, scope.store.strategy.field_getters()[field], value


def _timeout_ns(params: ListParams) -> int:
    """kube's watch timer in nanoseconds, Go's arithmetic and all: 0 means the default."""
    if params.timeout_seconds is None:
        return 0
    return seconds_duration(params.timeout_seconds)


def _timeout(params: ListParams, least: float) -> float:
    """The watch's lifetime: ``timeoutSeconds``, else kube's [min-request-timeout, 2x)."""
    nanos = _timeout_ns(params)
    if nanos:  # kube's timer fires at once for a negative timeout
        return max(nanos / 1e9, 0.0)
    return least * (1.0 + random.random())


async def _initial_state(stream: WatchStream, scope: Scope, params: ListParams) -> None:
    """Synthetic ADDED events for the current state, then (if asked) the sync bookmark."""
    version = params.resource_version
    if version and version != "0":
        await scope.handlers.wait_for_revision(parse_revision(version), prefix=scope.store.prefix)
    elif not version and params.send_initial_events:
        # kube's watch-list with no resourceVersion starts from a consistent read (the
        # legacy watch, without sendInitialEvents, from whatever the cache holds).
        await scope.handlers.consistent_read(scope.store.prefix)
    keys, _ = narrowed(scope, params)
    options = ListOptions(predicate=stream.match)
    result = await scope.store.read_list(scope.namespace, options, prefix=keys)
    stream.revision = result.revision
    initial_events(scope.resource, len(result.items))
    for stored in result.items:
        stream.send(stream.line(ADDED, stored, stored.revision, None))
    if params.send_initial_events and params.allow_bookmarks:
        stream.send(stream._bookmark(result.revision, initial_end=True))


async def _from_now(stream: WatchStream, scope: Scope, version: str) -> None:
    """``sendInitialEvents=false``: no synthetic events; the watch starts at the newest
    revision (none given: after a consistent read, as kube asks its storage) or at any
    (``0``: what this server has)."""
    if not version:
        await scope.handlers.consistent_read(scope.store.prefix)
    stream.revision = scope.handlers.hub.revision


def _replay(stream: WatchStream, scope: Scope, since: int) -> bool:
    """Changes after ``since`` from the change log; False (after an ERROR event) if too old.
    Only the log's own pruning ends a watch: kube's watch cache, not etcd's compaction,
    serves watches."""
    hub = scope.handlers.hub
    try:
        history = hub.history(since, stream.prefix)
    except StorageError as e:
        if e.code != EXPIRED:
            raise
        status = errors.expired(f"too old resource version: {since} ({e.revision})").status()
        stream.send(stream.encoder.error(status))
        return False
    stream.revision = since
    for start in range(0, len(history), REPLAY_SLICE):  # the hub's later events follow on
        stream.deliver(history[start : start + REPLAY_SLICE])
    delivered(history)  # the etcd watch cache keeps these events: not their encodings
    return True


async def _begin(stream: WatchStream, scope: Scope, params: ListParams) -> bool:
    """The stream's start: the initial state, or the changes since its revision;
    False if it ended already (too old a revision)."""
    version = params.resource_version
    if params.send_initial_events or (params.send_initial_events is None and version in ("", "0")):
        await _initial_state(stream, scope, params)
    elif version in ("", "0"):
        await _from_now(stream, scope, version)  # sendInitialEvents=false
    else:
        return _replay(stream, scope, parse_revision(version))
    return True


async def handle(scope: Scope) -> bytes:
    out = scope.output(table=True, partial="object")
    if out.encoding == "yaml":  # the client's first choice has no stream framing
        raise errors.not_acceptable(stream_types(scope.handlers.cbor))
    params = parse_params(scope, watch=True)
    if out.view == "table":
        # kube finds out when it renders the first event, and refuses the watch then
        # (before any header is sent): refused at once here, in kube's words.
        include = arg(scope.request, b"includeObject") or ""
        check_include(include)
    stream = WatchStream(scope, params, out)
    if scope.info.verb_via_path and len(scope.info.parts) == 2:
        # Legacy /watch/.../<name>: the watch of one object.
        name = scope.info.parts[1]
        base = stream.match
        stream.match = lambda obj: (
            obj.get("metadata", {}).get("name") == name and (base is None or base(obj))
        )
    if params.resource_version not in ("", "0"):
        storage_revision(params.resource_version)  # a malformed one fails before the stream
    request = scope.request
    request.setResponseCode(200)
    content_type = out.content_type
    if out.encoding == "protobuf":
        content_type += b";stream=watch"
    elif out.encoding == "cbor":
        content_type = CBOR_SEQ.encode()  # kube answers a watch asked in CBOR as a sequence
    request.setHeader(b"content-type", content_type)
    request.setHeader(b"cache-control", b"no-cache, private")
    write_warnings(request, scope.ctx)  # a deprecated version's, say, as kube's recorder
    request.write(b"")  # headers go out now: clients wait for them before reading
    if _timeout_ns(params) < 0:
        return b""  # kube's timer fires before the first event: an empty stream
    try:
        with spans.opened("cacher.Watch", cachespans.cacher_fields(scope)):
            cachespans.watch_started(scope, params)
            live = await _begin(stream, scope, params)
    except errors.StatusError as e:
        # The stream has begun: a watch that cannot start is one ERROR event, as
        # kube's cacher answers one (a revision it did not reach in time, say).
        stream.send(stream.encoder.error(e.status()))
        live = False
    finally:
        scope.ctx.watch_started()
    if live and not stream.done.called:
        request.registerProducer(stream, True)
        scope.handlers.hub.subscribe(stream, streamed=True)
        stream.start(_timeout(params, scope.handlers.min_request_timeout))
        request.notifyFinish().addBoth(lambda _: stream.end())
        try:
            await stream.done
        finally:
            stream.end()
            if request.channel is not None:  # gone when the client hung up first
                request.unregisterProducer()
    return b""
