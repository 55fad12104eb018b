"""The watch hub's two feeds (own commits, the shared change log) under several processes."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from twisted.internet.task import Clock

from platform_api.storage.interface import (
    ADDED,
    DELETED,
    MODIFIED,
    UNREADABLE,
    Event,
    StorageError,
    Stored,
    Unreadable,
)
from platform_api.storage.watch import (
    CHEAP_ROUND,
    FLUSH_DELAY,
    MAX_FLUSH_DELAY,
    POLL_INTERVAL,
    WatchHub,
    resource_of,
    round_delay,
)


class Log:
    """A change log other processes also write: revisions 1..n, every one an ADDED."""

    def __init__(self) -> None:
        self.revision = 0

    def commit(self) -> Event:
        self.revision += 1
        key = f"/core/configmaps/ns/c{self.revision}".encode()
        return Event(ADDED, self.revision, key, Stored(key, self.revision, b"{}"))

    def current_revision(self) -> int:
        return self.revision

    def events_since(self, revision: int, prefix: bytes = b"") -> list[Event]:
        return [self._event(r) for r in range(revision + 1, self.revision + 1)]

    @staticmethod
    def _event(r: int) -> Event:
        key = f"/core/configmaps/ns/c{r}".encode()
        return Event(ADDED, r, key, Stored(key, r, b"{}"))


class Watcher:
    prefix = b"/core/configmaps/"

    def __init__(self) -> None:
        self.revisions: list[int] = []

    def deliver(self, events: list[Event]) -> None:
        self.revisions += [e.revision for e in events]


def hub_with(log: Log, clock: Clock) -> tuple[WatchHub, Watcher]:
    storage: Any = log
    hub = WatchHub(storage, clock)
    watcher = Watcher()
    hub.subscribe(watcher)
    return hub, watcher


def test_another_process_between_two_of_our_batches_is_not_skipped() -> None:
    log, clock = Log(), Clock()
    hub, watcher = hub_with(log, clock)
    ours_first = [log.commit() for _ in range(4)]  # 1-4
    theirs = [log.commit() for _ in range(3)]  # 5-7, another worker's
    ours_next = [log.commit() for _ in range(4)]  # 8-11
    hub.committed(ours_first)
    hub.committed(ours_next)  # both of our batches wait for the same round
    clock.advance(FLUSH_DELAY)
    assert watcher.revisions == list(range(1, 12))
    assert len(theirs) == 3


def test_our_batches_alone_are_delivered_from_memory() -> None:
    log, clock = Log(), Clock()
    hub, watcher = hub_with(log, clock)
    batch = [log.commit() for _ in range(3)]
    log.events_since = None  # type: ignore[assignment, method-assign]  # not read
    hub.committed(batch)
    clock.advance(FLUSH_DELAY)
    assert watcher.revisions == [1, 2, 3]


def test_a_gap_before_our_batch_is_filled_from_the_log() -> None:
    log, clock = Log(), Clock()
    hub, watcher = hub_with(log, clock)
    log.commit(), log.commit()  # another process: 1-2
    hub.committed([log.commit()])  # ours: 3
    clock.advance(FLUSH_DELAY)
    assert watcher.revisions == [1, 2, 3]


def test_watchers_never_get_a_value_that_does_not_decode() -> None:
    """Written around the server (``etcdctl put``): its read reports it, but no watcher,
    live or replaying history, gets it, nor its deletion; the hub still moves past it."""
    log, clock = Log(), Clock()
    hub, watcher = hub_with(log, clock)
    key = b"/core/configmaps/ns/garbage"
    error = StorageError(UNREADABLE, key, "not a map")
    garbage = Unreadable(key, 2, b"words", error, "/registry/configmaps/ns/garbage")
    events = [log.commit(), Event(ADDED, 2, key, garbage), Event(DELETED, 3, key, garbage)]
    log.revision = 3
    log.events_since = lambda after, prefix=b"": events[after:]  # type: ignore[method-assign]
    hub.committed(events)
    clock.advance(FLUSH_DELAY)
    assert watcher.revisions == [1]
    assert hub.revision == 3 and hub.wait_for(3).called
    assert [e.revision for e in hub.history(0, b"")] == [1]


def test_few_subscribers_get_a_commit_on_the_next_turn() -> None:
    log, clock = Log(), Clock()
    hub, watcher = hub_with(log, clock)
    hub.committed([log.commit()])
    clock.advance(0)
    assert watcher.revisions == [1]


def test_many_streams_get_commits_gathered_for_a_delay() -> None:
    log, clock = Log(), Clock()
    hub, informer = hub_with(log, clock)
    streams = [Watcher() for _ in range(CHEAP_ROUND + 1)]
    for stream in streams:
        hub.subscribe(stream, streamed=True)
    delay = round_delay(CHEAP_ROUND + 1)
    hub.committed([log.commit()])
    clock.advance(0)
    assert informer.revisions == [1]  # in process: the next turn
    clock.advance(delay / 2)
    hub.committed([log.commit()])
    clock.advance(0)
    assert informer.revisions == [1, 2]
    assert streams[0].revisions == [] and hub.streamed_revision == 0
    clock.advance(delay / 2)
    assert all(s.revisions == [1, 2] for s in streams)  # one round for both
    assert hub.streamed_revision == 2


def test_other_processes_revisions_reach_streams_in_rounds_too() -> None:
    """Workers: a sibling's commits arrive on every wake; each is not a round of writes."""
    log, clock = Log(), Clock()
    hub, informer = hub_with(log, clock)
    streams = [Watcher() for _ in range(CHEAP_ROUND + 1)]
    for stream in streams:
        hub.subscribe(stream, streamed=True)
    for _ in range(3):
        log.commit()
        hub.catch_up()  # a wake, or a request's catch-up
    assert informer.revisions == [1, 2, 3]  # read-your-writes for in-process state
    assert streams[0].revisions == [] and hub.streamed_revision == 0
    clock.advance(round_delay(CHEAP_ROUND + 1))
    assert streams[0].revisions == [1, 2, 3] and hub.streamed_revision == 3


def test_streams_keep_revision_order_when_the_round_is_no_longer_needed() -> None:
    log, clock = Log(), Clock()
    hub, _ = hub_with(log, clock)
    streams = [Watcher() for _ in range(CHEAP_ROUND + 1)]
    for stream in streams:
        hub.subscribe(stream, streamed=True)
    log.commit()
    hub.catch_up()  # revision 1 waits in the outbox
    for stream in streams[1:]:
        hub.unsubscribe(stream)  # few streams now: the next revision goes out at once
    log.commit()
    hub.catch_up()
    assert streams[0].revisions == [1, 2]


def test_in_process_subscribers_do_not_delay_rounds() -> None:
    """Informers and controllers cost a call each: however many, the next turn."""
    log, clock = Log(), Clock()
    hub, watcher = hub_with(log, clock)
    for _ in range(CHEAP_ROUND * 3):
        hub.subscribe(Watcher())
    hub.committed([log.commit()])
    clock.advance(0)
    assert watcher.revisions == [1]


def test_the_gathering_grows_with_the_streams_up_to_a_bound() -> None:
    assert round_delay(CHEAP_ROUND) == 0.0  # few: the next turn
    assert round_delay(CHEAP_ROUND + 1) == pytest.approx(0.005)
    assert round_delay(50) == pytest.approx(0.01)
    assert round_delay(100) == MAX_FLUSH_DELAY == 0.02
    assert round_delay(10_000) == MAX_FLUSH_DELAY


class Recorder:
    """A subscriber that notes each call it gets: (its name, the keys delivered)."""

    def __init__(self, calls: list[tuple[str, list[bytes]]], name: str, prefix: bytes) -> None:
        self.calls, self.name, self.prefix = calls, name, prefix

    def deliver(self, events: list[Event]) -> None:
        self.calls.append((self.name, [e.key for e in events]))


def _event(revision: int, key: bytes) -> Event:
    return Event(ADDED, revision, key, Stored(key, revision, b"{}"))


def test_the_resource_of_a_key_or_prefix() -> None:
    assert resource_of(b"/core/configmaps/ns/a") == b"/core/configmaps/"
    assert resource_of(b"/apps/deployments/") == b"/apps/deployments/"
    assert resource_of(b"/core/nodes/n1") == b"/core/nodes/"
    assert resource_of(b"/core/") == resource_of(b"/") == resource_of(b"") == b""


def test_a_commit_calls_only_who_watches_its_resource_and_in_subscription_order() -> None:
    log, clock = Log(), Clock()
    hub = WatchHub(log, clock)  # type: ignore[arg-type]
    calls: list[tuple[str, list[bytes]]] = []
    pods = Recorder(calls, "pods", b"/core/pods/")
    everything = Recorder(calls, "everything", b"/")
    one_namespace = Recorder(calls, "cm in a", b"/core/configmaps/a/")
    both = Recorder(calls, "both", b"/")
    hub.subscribe(pods)
    hub.subscribe(everything)
    hub.subscribe(one_namespace)
    hub.subscribe(both, under=(b"/core/configmaps/", b"/core/pods/"))
    cm_a, cm_b, pod = b"/core/configmaps/a/x", b"/core/configmaps/b/y", b"/core/pods/a/p"
    hub.committed([_event(1, cm_a)])
    clock.advance(0)
    assert calls == [("everything", [cm_a]), ("cm in a", [cm_a]), ("both", [cm_a])]
    calls.clear()
    # One batch over two resources: each subscriber is called once, in revision order.
    hub.committed([_event(2, pod), _event(3, cm_b), _event(4, cm_a)])
    clock.advance(0)
    assert calls == [
        ("pods", [pod]),
        ("everything", [pod, cm_b, cm_a]),
        ("cm in a", [cm_a]),
        ("both", [pod, cm_b, cm_a]),
    ]


def test_unsubscribing_drops_every_route_and_subscribing_again_replaces_them() -> None:
    log, clock = Log(), Clock()
    hub = WatchHub(log, clock)  # type: ignore[arg-type]
    calls: list[tuple[str, list[bytes]]] = []
    sub = Recorder(calls, "sub", b"/")
    hub.subscribe(sub, under=(b"/core/configmaps/", b"/core/pods/"))
    hub.subscribe(sub, under=(b"/core/pods/",))
    assert hub.subscriber_count() == 1
    assert hub.subscribers_under(b"/core/pods/") == [sub]
    assert hub.subscribers_under(b"/core/configmaps/") == []
    hub.committed([_event(1, b"/core/configmaps/a/x"), _event(2, b"/core/pods/a/p")])
    clock.advance(0)
    assert calls == [("sub", [b"/core/pods/a/p"])]
    hub.unsubscribe(sub)
    hub.unsubscribe(sub)  # twice is harmless
    hub.committed([_event(3, b"/core/pods/a/q")])
    clock.advance(0)
    assert len(calls) == 1 and hub.subscriber_count() == 0 and hub.revision == 3


def test_a_process_alone_does_not_poll_the_log_and_workers_do() -> None:
    log, clock = Log(), Clock()
    alone, shared = WatchHub(log, clock), WatchHub(log, clock)  # type: ignore[arg-type]
    alone.start(shared=False)
    assert clock.getDelayedCalls() == []
    shared.start()
    assert len(clock.getDelayedCalls()) == 1
    log.commit()  # another worker's commit whose wake was lost: found by the poll
    clock.advance(POLL_INTERVAL)
    assert (alone.revision, shared.revision) == (0, 1)
    shared.stop()
    assert clock.getDelayedCalls() == []


def test_take_in_delivers_what_the_storage_holds_now() -> None:
    """A reader that must not act on an older state than the storage's (a request for
    a kind another worker defined a moment ago) takes in, at once, other processes'
    commits not yet announced and its own waiting for the next turn."""
    log, clock = Log(), Clock()
    hub = WatchHub(log, clock)  # type: ignore[arg-type]
    hub.start()
    calls: list[tuple[str, list[bytes]]] = []
    hub.subscribe(Recorder(calls, "installer", b"/core/configmaps/"))
    log.commit()  # another worker's: its wake has not come, the poll is not due
    hub.take_in()
    assert [name for name, _ in calls] == ["installer"] and hub.revision == 1
    own = log.commit()
    hub.committed([own])  # this process's, due on the next turn
    hub.take_in()
    assert calls[-1] == ("installer", [own.key]) and hub.revision == 2
    hub.take_in()  # nothing new: nothing delivered
    assert len(calls) == 2
    clock.advance(0)
    assert len(calls) == 2
    hub.stop()


def _pod_event(revision: int, name: str, node: str, before: str | None = None) -> Event:
    key = f"/core/pods/a/{name}".encode()
    after = Stored(key, revision, orjson.dumps({"spec": {"nodeName": node}}))
    if before is None:
        return Event(ADDED, revision, key, after)
    prev = Stored(key, revision - 1, orjson.dumps({"spec": {"nodeName": before}}))
    return Event(MODIFIED, revision, key, after, prev)


def test_a_stream_with_a_trigger_gets_the_events_of_objects_with_its_value() -> None:
    """kube's watch-cache triggers: a kubelet's watch (spec.nodeName=<node>) is sent the
    events of pods on its Node, before or after the change, and no others; watchers
    without one get every event, all in subscription order."""
    log, clock = Log(), Clock()
    hub = WatchHub(log, clock)  # type: ignore[arg-type]
    calls: list[tuple[str, list[bytes]]] = []
    node = lambda obj: obj["spec"].get("nodeName", "")  # noqa: E731
    recorders = [Recorder(calls, name, b"/core/pods/") for name in ("n1", "all", "n2", "none")]
    for recorder, value in zip(recorders, ("n1", None, "n2", ""), strict=True):
        recorder.trigger = None if value is None else ("spec.nodeName", node, value)  # type: ignore[attr-defined]
        hub.subscribe(recorder, streamed=True)
    p1, p2, p3 = (f"/core/pods/a/{n}".encode() for n in ("p1", "p2", "p3"))
    hub.committed([_pod_event(1, "p1", "n1"), _pod_event(2, "p2", "n2")])
    hub.committed([_pod_event(3, "p3", "")])
    clock.advance(0)
    assert calls == [("n1", [p1]), ("all", [p1, p2, p3]), ("n2", [p2]), ("none", [p3])]
    calls.clear()
    hub.committed([_pod_event(4, "p1", "n2", before="n1")])  # moved: both Nodes hear it
    clock.advance(0)
    assert calls == [("n1", [p1]), ("all", [p1]), ("n2", [p1])]


class Encoder(Watcher):
    """A watch stream that, as the real ones, caches its encodings on the events, and
    sees them shared: the second stream of a round finds the first one's."""

    def __init__(self) -> None:
        super().__init__()
        self.shared = 0

    def deliver(self, events: list[Event]) -> None:
        super().deliver(events)
        for event in events:
            if event.encoded is not None:
                self.shared += 1
            event.encoded = {"json": b"line"}
        events[0].batches = {"batch": b"lines"}


@pytest.mark.parametrize("streams", [1, CHEAP_ROUND + 1])  # a round at once, or gathered
def test_encodings_are_shared_by_a_rounds_streams_then_dropped(streams: int) -> None:
    """The etcd watch cache keeps its events for the history window; what the streams
    encoded of them would stay with them (~1.7 KB an event) once every stream had it."""
    log, clock = Log(), Clock()
    hub = WatchHub(log, clock)  # type: ignore[arg-type]
    encoders = [Encoder() for _ in range(streams)]
    for encoder in encoders:
        hub.subscribe(encoder, streamed=True)
    events = [log.commit(), log.commit()]
    hub.committed(events)
    clock.advance(0)
    clock.advance(round_delay(streams))
    assert all(e.revisions == [1, 2] for e in encoders)
    assert sum(e.shared for e in encoders) == 2 * (streams - 1)
    assert all(e.encoded is None and e.batches is None for e in events)
