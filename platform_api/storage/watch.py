"""The watch hub: every committed change, in revision order, fanned out to watchers.

Events come from two feeds that can interleave: this process's commits (delivered from
memory at once) and the LMDB change log, polled for revisions written by other
processes sharing the data directory.  The hub delivers each revision exactly once,
in order, whichever feed brings it first.  A watcher registers with the revision it
has seen; anything older than the hub's position is replayed from the change log.

Subscribers are routed by resource (a key's ``/<group>/<plural>/``): a commit calls only
the subscribers that watch its resource, plus the few that watch everything.  With
every in-process controller called for every commit, the calls that returned at once
were an eighth of a create's CPU.

In-process subscribers (informers, controllers, the RBAC index) get each revision on the
next reactor turn, whichever feed brought it.  Watch streams get revisions in rounds
(``round_delay``) from an outbox: with workers, revisions other processes commit arrive
on every wake and request, and sending each to every stream at once cost a round's
writes per revision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.storage.interface import Event, Storage, Unreadable, delivered
from platform_api.storage.triggers import Trigger, TriggerIndex

log = Logger()
# How often the change log is checked for revisions other processes committed.  Sibling
# workers announce their commits (a wake datagram) and each request looks first, so this
# only backs up a lost wake.  A timer wake of an idle process costs ~0.1 ms of CPU here
# (schedstat): at 10 ms an idle worker spent ~1% of a core polling.
POLL_INTERVAL = 0.1
# Commits are handed to watchers in rounds.  With few watch streams a round is cheap and
# goes out on the next reactor turn.  With many, a round costs each stream a write, a TLS
# record and a send (~40 us) however few events it holds, so it waits for more commits:
# FLUSH_DELAY, growing with the number of streams (PER_SUBSCRIBER each) up to
# MAX_FLUSH_DELAY, which bounds that fixed cost to about a fifth of the reactor's time.
# In-process subscribers (informers, controllers: a function call each) do not count:
# with them counted, a server running more controllers delayed every watch event.
# Measured with 1000 creates to 100 watchers: delivering at once was 25% slower than
# 5 ms rounds, and 20 ms rounds 10-25% faster.
FLUSH_DELAY = 0.005
PER_SUBSCRIBER = 0.0002
MAX_FLUSH_DELAY = 0.02
CHEAP_ROUND = 16  # watch streams
FLUSH_AT = 500  # events waiting for the streams that trigger a round at once


def round_delay(streams: int) -> float:
    """How long a round gathers commits before it goes out to ``streams`` watch streams."""
    if streams <= CHEAP_ROUND:
        return 0.0
    return min(MAX_FLUSH_DELAY, max(FLUSH_DELAY, streams * PER_SUBSCRIBER))


class Subscriber(Protocol):
    """A watcher as the hub sees it: a key prefix and somewhere to put events."""

    prefix: bytes

    def deliver(self, events: list[Event]) -> None:
        """Events of one commit batch under ``prefix``, in revision order."""
        ...


def resource_of(key: bytes) -> bytes:
    """A key's (or prefix's) resource part, ``/<group>/<plural>/``; b"" when it has none
    (a prefix that spans resources)."""
    end = key.find(b"/", key.find(b"/", 1) + 1)
    return key[: end + 1] if end > 0 else b""


@dataclass(frozen=True, eq=False)  # compared and hashed by identity
class _Subscription:
    order: int  # subscribers are called in the order they subscribed
    subscriber: Subscriber
    prefixes: tuple[bytes, ...]
    streamed: bool  # writes to a client: gets events in rounds
    trigger: Trigger | None = None  # sent only events whose field has its value


class WatchHub:
    def __init__(self, storage: Storage, reactor: IReactorTime) -> None:
        self._storage = storage
        self._reactor = reactor
        self._subscribers: dict[int, _Subscription] = {}  # by id(subscriber)
        self._by_resource: dict[bytes, list[_Subscription]] = {}
        self._everywhere: list[_Subscription] = []  # a prefix spanning resources
        # By resource, while the subscriptions are unchanged.
        self._audiences: dict[bytes, tuple[list[_Subscription], TriggerIndex]] = {}
        self._order = 0
        self._streams = 0  # subscribers that write to a client (see round_delay)
        self._streamed: set[int] = set()
        self.revision = storage.current_revision()
        self._waiters: list[tuple[int, Deferred[None]]] = []
        self._pending: list[Event] = []  # own commits, published on the next turn
        self._flush_call: IDelayedCall | None = None
        self._outbox: list[Event] = []  # published, not yet sent to the watch streams
        self._round_call: IDelayedCall | None = None
        self._poller = LoopingCall(self.catch_up)
        self._poller.clock = reactor

    def start(self, shared: bool = True) -> None:
        """``shared``: other processes commit to the same storage (workers); their
        revisions are polled for, as well as announced.  A process alone has only its own
        commits, delivered from memory: polling would cost it ~2% of its CPU for nothing."""
        if shared and not self._poller.running:
            self._poller.start(POLL_INTERVAL, now=False)

    def stop(self) -> None:
        if self._poller.running:
            self._poller.stop()
        self._flush_call = _cancelled(self._flush_call)
        self._round_call = _cancelled(self._round_call)

    # -- feeds ------------------------------------------------------------------------

    def committed(self, events: list[Event]) -> None:
        """Own commits, straight from the writer; published on the next turn, so the
        commits of one turn are one batch."""
        if not events:
            return
        self._pending.extend(events)
        if self._flush_call is None:
            self._flush_call = self._reactor.callLater(0, self.flush)

    def flush(self) -> None:
        """Deliver pending commits in revision order, filling gaps from the log first."""
        self._flush_call = _cancelled(self._flush_call)
        pending, self._pending = self._pending, []
        if pending and not _follows(self.revision, pending):
            # Other processes committed before or between our batches: the change log has
            # every revision in order, ours included.
            self.catch_up()
        self._publish([e for e in pending if e.revision > self.revision])

    def catch_up(self) -> None:
        """Deliver revisions other processes committed since the last delivered one."""
        if self._pending and self._flush_call is not None:
            return  # a flush is due: it fills any gap itself
        if self._storage.current_revision() <= self.revision:
            return
        try:
            events = self._storage.events_since(self.revision)
        except Exception:
            # Compacted past our position (a long stall): skip ahead; watchers that
            # needed the gap end with 410 and re-list, as kube's do.
            log.failure("watch hub fell behind the change log")
            self.revision = self._storage.current_revision()
            self._wake()
            return
        self._publish(events)

    def take_in(self) -> None:
        """Deliver now whatever the storage holds that subscribers have not had: own
        commits waiting for the next turn, other processes' not yet announced.  For a
        reader that must not act on an older state than the storage's (a request for
        a kind another worker defined a moment ago)."""
        if self._flush_call is not None:
            self.flush()
        else:
            self.catch_up()

    def _publish(self, events: list[Event]) -> None:
        """In-process subscribers now; watch streams now when few, else in a round."""
        if not events:
            return
        self.revision = events[-1].revision
        events = _watchable(events)
        if not events:
            self._wake()
            return
        delay = round_delay(self._streams)
        held = bool(delay or self._outbox)  # streams get revisions in order: after the outbox
        self._deliver(events, streamed=False if held else None)
        if held:
            self._outbox.extend(events)
            if not delay or len(self._outbox) >= FLUSH_AT:
                self.send_round()
            elif self._round_call is None:
                self._round_call = self._reactor.callLater(delay, self.send_round)
        else:
            delivered(events)
        self._wake()

    @property
    def streamed_revision(self) -> int:
        """The revision watch streams have been sent up to: a bookmark may not pass it."""
        return self._outbox[0].revision - 1 if self._outbox else self.revision

    def send_round(self) -> None:
        """The outbox to the watch streams, one call each: a stream writes a round at once."""
        self._round_call = _cancelled(self._round_call)
        events, self._outbox = self._outbox, []
        if events:
            # A stream that subscribed after some of these has them already (its replay
            # or list went up to the hub's position); it skips what it has seen.
            self._deliver(events, streamed=True)
            delivered(events)

    def _deliver(self, events: list[Event], streamed: bool | None) -> None:
        """To the watch streams (``streamed``), the in-process subscribers (not), or all."""
        by_prefixes: dict[tuple[bytes, ...], list[Event]] = {}
        audience, index = self._audience(events)
        picked = index.pick(events) if index else {}
        for sub in audience:
            if streamed is not None and sub.streamed is not streamed:
                continue
            mine = by_prefixes.get(sub.prefixes)
            if sub.trigger is not None:
                mine = picked.get(id(sub))
            elif mine is None:
                mine = [e for e in events if e.key.startswith(sub.prefixes)]
                by_prefixes[sub.prefixes] = mine
            if mine:
                try:
                    sub.subscriber.deliver(mine)
                except Exception:
                    log.failure("delivering watch events")

    def _audience(self, events: list[Event]) -> tuple[list[_Subscription], TriggerIndex]:
        """The subscriptions that may want some of ``events``, in subscription order, and
        those of them indexed by a trigger."""
        resources = {resource_of(e.key) for e in events}
        if len(resources) == 1:
            (resource,) = resources
            found = self._audiences.get(resource)
            if found is None:
                found = self._audiences[resource] = self._gather(resources)
            return found
        return self._gather(resources)

    def _gather(self, resources: set[bytes]) -> tuple[list[_Subscription], TriggerIndex]:
        found = set(self._everywhere)
        for resource in resources:
            found.update(self._by_resource.get(resource, ()))
        ordered = sorted(found, key=lambda sub: sub.order)
        return ordered, TriggerIndex(ordered)

    # -- subscribers ----------------------------------------------------------------------

    def subscribe(
        self, subscriber: Subscriber, streamed: bool = False, under: tuple[bytes, ...] = ()
    ) -> None:
        """``streamed``: the subscriber writes its events to a client (a watch request).
        ``under``: the key prefixes it wants events of (default: its ``prefix``)."""
        self.unsubscribe(subscriber)
        self._audiences.clear()
        self._order += 1
        prefixes = under or (subscriber.prefix,)
        trigger = getattr(subscriber, "trigger", None)
        sub = _Subscription(self._order, subscriber, prefixes, streamed, trigger)
        self._subscribers[id(subscriber)] = sub
        for resource in {resource_of(p) for p in sub.prefixes}:
            if resource:
                self._by_resource.setdefault(resource, []).append(sub)
            elif sub not in self._everywhere:
                self._everywhere.append(sub)
        if streamed:
            self._streamed.add(id(subscriber))
            self._streams = len(self._streamed)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        sub = self._subscribers.pop(id(subscriber), None)
        if sub is None:
            return
        self._audiences.clear()
        for resource in {resource_of(p) for p in sub.prefixes}:
            routed = self._by_resource.get(resource, [])
            if sub in routed:
                routed.remove(sub)
                if not routed:
                    del self._by_resource[resource]
        if sub in self._everywhere:
            self._everywhere.remove(sub)
        self._streamed.discard(id(subscriber))
        self._streams = len(self._streamed)

    def subscribers_under(self, prefix: bytes) -> list[Subscriber]:
        """Subscribers that watch ``prefix`` or part of it."""
        return [
            sub.subscriber
            for sub in self._subscribers.values()
            if any(p.startswith(prefix) for p in sub.prefixes)
        ]

    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def history(self, after: int, prefix: bytes) -> list[Event]:
        """Events after ``after`` up to the hub's position (raises EXPIRED if compacted)."""
        if after >= self.revision:  # a future revision (up to 2**64-1) has no history yet
            return []
        events = self._storage.events_since(after, prefix)
        return _watchable([e for e in events if e.revision <= self.revision])

    # -- waiting for a revision ---------------------------------------------------------------

    def wait_for(self, revision: int) -> Deferred[None]:
        """Fires once the hub has delivered ``revision`` (cancel it to give up)."""
        d: Deferred[None] = Deferred(self._cancel_wait)
        if self.revision >= revision:
            d.callback(None)
        else:
            self._waiters.append((revision, d))
        return d

    def _cancel_wait(self, d: Deferred[None]) -> None:
        self._waiters = [(r, w) for r, w in self._waiters if w is not d]

    def _wake(self) -> None:
        if not self._waiters:
            return
        ready = [w for r, w in self._waiters if r <= self.revision]
        self._waiters = [(r, w) for r, w in self._waiters if r > self.revision]
        for d in ready:
            d.callback(None)


def _watchable(events: list[Event]) -> list[Event]:
    """Watchers never see a value that does not decode (written around the server), nor
    the deletion of one; a read of it reports it instead."""
    return [e for e in events if not isinstance(e.stored, Unreadable)]


def _follows(revision: int, events: list[Event]) -> bool:
    """Whether ``events`` are exactly the revisions after ``revision``, none missing."""
    return all(e.revision == revision + 1 + i for i, e in enumerate(events))


def _cancelled(call: IDelayedCall | None) -> IDelayedCall | None:
    """Cancel ``call`` if it is still due (it may be the one running); None to store."""
    if call is not None and call.active():
        call.cancel()
    return None
