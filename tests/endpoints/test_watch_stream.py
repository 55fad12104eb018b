"""WatchStream and WatchHub with fakes: transitions, back-pressure, cleanup."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import orjson
from twisted.internet.defer import ensureDeferred
from twisted.internet.task import Clock

from platform_api.apiserver.metrics import REGISTRY
from platform_api.authentication.user import UserInfo
from platform_api.context import Context
from platform_api.endpoints.list import ListParams
from platform_api.endpoints.negotiation import Output
from platform_api.endpoints.watch import MAX_QUEUED, WatchStream, _initial_state
from platform_api.fieldselectors import parse_field_selector
from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.selectors import parse_label_selector
from platform_api.storage.interface import ADDED, DELETED, MODIFIED, Event, ListResult, Stored
from platform_api.storage.watch import CHEAP_ROUND, FLUSH_DELAY, MAX_FLUSH_DELAY, WatchHub


class FakeRequest:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.args: dict[bytes, list[bytes]] = {}

    def write(self, data: bytes) -> None:
        self.written.append(data)


class FakeStorage:
    def __init__(self) -> None:
        self.revision = 0
        self.log: list[Event] = []

    def current_revision(self) -> int:
        return self.revision

    def events_since(self, revision: int, prefix: bytes = b"") -> list[Event]:
        return [e for e in self.log if e.revision > revision and e.key.startswith(prefix)]


def stored(name: str, revision: int, labels: dict[str, str] | None = None) -> Stored:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "labels": labels or {},
            "resourceVersion": str(revision),
        },
    }
    return Stored(b"/core/configmaps/ns/" + name.encode(), revision, orjson.dumps(obj))


def params(labels: str = "") -> ListParams:
    return ListParams(
        "",
        "",
        0,
        "",
        parse_label_selector(labels),
        parse_field_selector(""),
        None,
        True,
        False,
        None,
    )


def make_stream(labels: str = "") -> tuple[WatchStream, FakeRequest, WatchHub]:
    request = FakeRequest()
    hub = WatchHub(FakeStorage(), Clock())  # type: ignore[arg-type]
    rt = builtin_scheme().lookup("", "v1", "configmaps")
    store = SimpleNamespace(
        list_prefix=lambda ns: b"/core/configmaps/ns/",
        storage=FakeStorage(),
        strategy=strategy_for(rt),
    )
    handlers = SimpleNamespace(hub=hub, reactor=Clock(), tables=None)
    scope: Any = SimpleNamespace(
        request=request,
        store=store,
        resource=rt,
        handlers=handlers,
        namespace="ns",
        ctx=Context(UserInfo("tester")),
        outgoing=lambda obj: obj,
    )
    stream = WatchStream(scope, params(labels), Output("json"))
    hub.subscribe(stream)
    return stream, request, hub


def publish(hub: WatchHub, events: list[Event]) -> None:
    hub.committed(events)
    hub.flush()  # rather than waiting out the hub's FLUSH_DELAY


def types(request: FakeRequest) -> list[str]:
    return [orjson.loads(line)["type"] for line in request.written]


def test_selector_transitions_become_added_and_deleted() -> None:
    _stream, request, hub = make_stream("tier=db")
    web, db = {"tier": "web"}, {"tier": "db"}
    publish(hub, [Event(ADDED, 1, stored("x", 1).key, stored("x", 1, web))])
    publish(hub, [Event(MODIFIED, 2, stored("x", 2).key, stored("x", 2, db), stored("x", 1, web))])
    publish(hub, [Event(MODIFIED, 3, stored("x", 3).key, stored("x", 3, db), stored("x", 2, db))])
    publish(hub, [Event(MODIFIED, 4, stored("x", 4).key, stored("x", 4, web), stored("x", 3, db))])
    assert types(request) == ["ADDED", "MODIFIED", "DELETED"]
    deleted = orjson.loads(request.written[-1])["object"]
    assert deleted["metadata"]["labels"] == db and deleted["metadata"]["resourceVersion"] == "4"


def test_deleted_objects_are_stamped_with_the_deletion_revision() -> None:
    _stream, request, hub = make_stream()
    last = stored("x", 5)
    publish(hub, [Event(DELETED, 9, last.key, last, last)])
    assert orjson.loads(request.written[0])["object"]["metadata"]["resourceVersion"] == "9"


def test_events_are_encoded_once_for_every_watcher() -> None:
    one, first, hub = make_stream()
    two = WatchStream(one.scope, one.params, one.out)
    second = FakeRequest()
    two.scope = SimpleNamespace(**{**vars(one.scope), "request": second})
    hub.subscribe(two)
    event = Event(ADDED, 1, stored("x", 1).key, stored("x", 1))
    publish(hub, [event])
    assert first.written[0] is second.written[0]  # the same bytes object, encoded once


def test_slow_watcher_is_ended_not_buffered_forever() -> None:
    stream, request, hub = make_stream()
    rt = stream.scope.resource
    labels = {"group": rt.group, "resource": rt.plural}
    ended = REGISTRY.get_sample_value("apiserver_terminated_watchers_total", labels) or 0.0
    stream.pauseProducing()
    for revision in range(1, MAX_QUEUED + 3):
        s = stored(f"o{revision}", revision)
        publish(hub, [Event(ADDED, revision, s.key, s)])
    assert stream.done.called and not stream.queue
    assert hub.subscriber_count() == 0
    assert request.written == []
    assert REGISTRY.get_sample_value("apiserver_terminated_watchers_total", labels) == ended + 1


def test_a_batch_is_one_write() -> None:
    _stream, request, hub = make_stream()
    batch = [Event(ADDED, r, stored(f"o{r}", r).key, stored(f"o{r}", r)) for r in (1, 2, 3)]
    publish(hub, batch)
    assert len(request.written) == 1 and request.written[0].count(b"\n") == 3


def test_paused_watcher_catches_up_in_order_when_resumed() -> None:
    stream, request, hub = make_stream()
    stream.pauseProducing()
    for revision in (1, 2, 3):
        s = stored(f"o{revision}", revision)
        publish(hub, [Event(ADDED, revision, s.key, s)])
    assert request.written == []
    stream.resumeProducing()
    lines = b"".join(request.written).splitlines()
    names = [orjson.loads(line)["object"]["metadata"]["name"] for line in lines]
    assert names == ["o1", "o2", "o3"]


def test_disconnect_unsubscribes_and_cancels_timers() -> None:
    stream, _request, hub = make_stream()
    stream.start(60)
    assert hub.subscriber_count() == 1
    stream.stopProducing()
    assert hub.subscriber_count() == 0 and stream.done.called
    assert all(not t.active() for t in stream._timers)


def test_hub_fills_gaps_from_the_log_in_order() -> None:
    storage = FakeStorage()
    hub = WatchHub(storage, Clock())  # type: ignore[arg-type]
    seen: list[int] = []
    sub = SimpleNamespace(
        prefix=b"", deliver=lambda events: seen.extend(e.revision for e in events)
    )
    hub.subscribe(sub)  # type: ignore[arg-type]
    other = stored("from-other-process", 1)
    storage.log.append(Event(ADDED, 1, other.key, other))
    storage.revision = 2
    mine = stored("mine", 2)
    publish(hub, [Event(ADDED, 2, mine.key, mine)])
    hub.catch_up()
    assert seen == [1, 2]


def test_commits_are_delivered_in_rounds() -> None:
    _stream, request, hub = make_stream()
    clock = hub._reactor
    for r in (1, 2):
        hub.committed([Event(ADDED, r, stored(f"o{r}", r).key, stored(f"o{r}", r))])
    assert request.written == []
    clock.advance(FLUSH_DELAY)  # type: ignore[attr-defined]
    assert len(request.written) == 1 and request.written[0].count(b"\n") == 2


def test_wait_for_revision() -> None:
    storage = FakeStorage()
    hub = WatchHub(storage, Clock())  # type: ignore[arg-type]
    d = hub.wait_for(1)
    assert not d.called
    s = stored("x", 1)
    publish(hub, [Event(ADDED, 1, s.key, s)])
    assert d.called


def _initial(send_initial_events: bool | None, version: str) -> tuple[list[str], list[str]]:
    """Which reads ``_initial_state`` made, and the event types it sent."""
    stream, request, _hub = make_stream()
    reads: list[str] = []

    async def consistent_read(prefix: bytes) -> bool:
        reads.append("consistent")
        return True

    async def read_list(namespace: str, options: Any, prefix: bytes | None = None) -> ListResult:
        reads.append("list")
        return ListResult([stored("a", 3)], 7, None, None)

    stream.scope.handlers.consistent_read = consistent_read
    stream.scope.store.read_list = read_list
    stream.scope.store.prefix = b"/core/configmaps/"
    asked = replace(
        params(),
        resource_version=version,
        send_initial_events=send_initial_events,
        allow_bookmarks=True,
    )
    ensureDeferred(_initial_state(stream, stream.scope, asked))
    return reads, types(request)


def test_a_watch_list_with_no_resource_version_starts_from_a_consistent_read() -> None:
    """As kube's cacher: sendInitialEvents with no resourceVersion asks storage for its
    current revision first; the legacy watch (no sendInitialEvents) and a given
    resourceVersion take the cache as it is."""
    assert _initial(True, "") == (["consistent", "list"], ["ADDED", "BOOKMARK"])
    assert _initial(None, "") == (["list"], ["ADDED"])
    assert _initial(True, "0") == (["list"], ["ADDED", "BOOKMARK"])


def test_a_bookmark_never_passes_revisions_still_waiting_for_the_streams() -> None:
    """With many streams the hub holds revisions for a round; a bookmark sent meanwhile
    names the last revision the streams were sent, or a client resuming from it would
    miss the held ones."""
    stream, request, hub = make_stream()
    hub.subscribe(stream, streamed=True)
    for _ in range(CHEAP_ROUND):
        hub.subscribe(SimpleNamespace(prefix=b"/core/", deliver=lambda _: None), streamed=True)
    s = stored("held", 1)
    publish(hub, [Event(ADDED, 1, s.key, s)])
    assert hub.revision == 1 and request.written == []
    assert orjson.loads(stream._progress())["object"]["metadata"]["resourceVersion"] == "0"
    hub._reactor.advance(MAX_FLUSH_DELAY)  # type: ignore[attr-defined]
    assert types(request) == ["ADDED"]
    assert orjson.loads(stream._progress())["object"]["metadata"]["resourceVersion"] == "1"
