"""A streaming etcd watch (gRPC ``Watch/Watch``), consumed as an async iterator of
``WatchResponse`` on the reactor.

The watch is one HTTP/2 stream on the transport's connection (transport.py), read on the
reactor; requests (create, progress) are messages on it, cancelling resets it.  A reader that
falls behind pauses the stream (HTTP/2 flow control then stops etcd) instead of piling
responses up in memory.
The stream ends by raising: ``Compacted`` (the start revision is gone: the store's Expired,
re-list), ``WatchCanceled`` (etcd's reason), ``Unavailable`` (the connection dropped:
re-watch from the last revision + 1). ``cancel()`` ends it quietly (StopAsyncIteration).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from twisted.internet import defer
from twisted.python.failure import Failure

from platform_api.storage.etcd import proto
from platform_api.storage.etcd.channel import GrpcChannel, Stream
from platform_api.storage.etcd.errors import Compacted, Unavailable, WatchCanceled, from_status
from platform_api.storage.etcd.grpcwire import CANCELLED, OK, UNAVAILABLE, Message
from platform_api.storage.etcd.kv import KeyValue

_HIGH_WATER, _LOW_WATER = 64, 8
COMPACTED = "etcdserver: mvcc: required revision has been compacted"


@dataclass(frozen=True)
class WatchEvent:
    type: Literal["PUT", "DELETE"]
    kv: KeyValue
    prev_kv: KeyValue | None = None

    @classmethod
    def decode(cls, e: Any) -> WatchEvent:
        prev = KeyValue.decode(e.prev_kv) if e.HasField("prev_kv") else None
        return cls("DELETE" if e.type == 1 else "PUT", KeyValue.decode(e.kv), prev)


@dataclass(frozen=True)
class WatchResponse:
    """``revision`` is etcd's at send time; a response with no events is a progress
    notification: every change up to ``revision`` has been delivered."""

    revision: int
    events: list[WatchEvent] = field(default_factory=list)

    @property
    def is_progress(self) -> bool:
        return not self.events


class Watch:
    """One etcd watch; iterate with ``async for response in watch``."""

    def __init__(self, reactor: Any) -> None:
        self.reactor = reactor
        self.watch_id = 0
        self.created: defer.Deferred[None] = defer.Deferred()
        self._queue: deque[WatchResponse | BaseException] = deque()
        self._waiting: defer.Deferred[None] | None = None
        self._stream: Stream | None = None
        self._paused = False
        self._canceled = self._ended = False

    def start(self, channel: GrpcChannel, create: Any) -> None:
        """Open the stream on ``channel`` with ``create``."""
        self._stream = channel.open(proto.WATCH, self)
        self._send(proto.WatchRequest(create_request=create))

    def _send(self, request: Any) -> None:
        if self._stream is not None and not self._ended:
            self._stream.send(request.SerializeToString())

    def request_progress(self) -> None:
        """Ask etcd for a progress notification now (WatchProgressRequest): it answers with
        a response with no events once everything up to its current revision was sent."""
        self._send(proto.WatchRequest(progress_request=proto.WatchProgressRequest()))

    def cancel(self) -> None:
        """Stop the watch (resets its stream); the iterator then ends."""
        self._canceled = True
        if self._stream is not None:
            self._stream.cancel()
        self._end(StopAsyncIteration())

    def __aiter__(self) -> Watch:
        return self

    async def __anext__(self) -> WatchResponse:
        while not self._queue:
            self._waiting = defer.Deferred()
            await self._waiting
        item = self._queue[0]
        if isinstance(item, BaseException):
            raise item  # stays queued: the watch is over for every later call too
        self._queue.popleft()
        if self._paused and len(self._queue) <= _LOW_WATER and self._stream is not None:
            self._paused = False
            self._stream.resume()
        return item

    # -- the stream's handler (transport.CallHandler) ---------------------------------------

    def message(self, message: Message) -> None:
        self._message(proto.WatchResponse.FromString(message.data))

    def ended(self, code: int, detail: str) -> None:
        if self._canceled or self._ended:
            return
        if code in (OK, UNAVAILABLE, CANCELLED):
            self._end(Unavailable(f"etcd watch stream ended: {detail or 'by etcd'}", 14))
        else:
            self._end(from_status(code, detail))

    def _push(self, item: WatchResponse | BaseException) -> None:
        self._queue.append(item)
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            waiting.callback(None)
        if len(self._queue) >= _HIGH_WATER and not self._paused and self._stream is not None:
            self._paused = True
            self._stream.pause()

    def _end(self, error: BaseException) -> None:
        if not self._ended:
            self._ended = True
            self._push(error)
        if not self.created.called:
            self.created.errback(Failure(error))

    def _message(self, response: Any) -> None:
        if self._ended:
            return
        if response.created:
            self.watch_id = response.watch_id
            if not self.created.called:
                self.created.callback(None)
        if response.canceled:
            if response.compact_revision:
                self._end(Compacted(COMPACTED, response.compact_revision))
            else:
                self._end(WatchCanceled(response.cancel_reason or "watch canceled by etcd"))
            return
        events = [WatchEvent.decode(e) for e in response.events]
        if events or not response.created:
            self._push(WatchResponse(response.header.revision, events))


PROGRESS_RETRY = 0.1  # seconds between progress requests while a reader still waits


class ProgressRequester:
    """Asks etcd for progress notifications while a consistent read waits (kube's
    ConditionalProgressRequester).  A read waits until the cache reaches etcd's current
    revision; when that revision was made by a write outside the watched prefix (the
    compaction mark, another cluster sharing etcd) no event will ever bring the cache
    there, but a progress notification does.  etcd drops a request while the stream is
    catching up, so one is sent again every PROGRESS_RETRY while ``waiting()`` holds."""

    def __init__(self, reactor: Any, waiting: Callable[[], bool]) -> None:
        self.reactor = reactor
        self.waiting = waiting
        self.watch: Watch | None = None  # the store's current watch, when it has one
        self._retry: Any = None

    def request(self) -> None:
        if self._retry is not None:
            return
        if self.watch is not None:  # none while the watch is (re)made: asked again then
            self.watch.request_progress()
        self._retry = self.reactor.callLater(PROGRESS_RETRY, self._again)

    def _again(self) -> None:
        self._retry = None
        if self.waiting():
            self.request()

    def stop(self) -> None:
        if self._retry is not None and self._retry.active():
            self._retry.cancel()
        self._retry = None
