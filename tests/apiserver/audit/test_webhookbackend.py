"""The audit webhook backend: batches, max wait, buffer limit, throttle, retries (Clock).

The sink is an in-memory stand-in for the treq client (the e2e test uses a real one)."""

from __future__ import annotations

from typing import Any

import orjson
from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import Clock

from platform_api.apiserver.audit.webhookbackend import BatchConfig, Throttle, WebhookBackend
from platform_api.apiserver.auditmetrics import AUDIT_ERRORS
from platform_api.client.kubeconfig import Connection

CONN = Connection(server="https://sink.example:8443/audit", token="t0k")


class Reply:
    def __init__(self, code: int) -> None:
        self.code = code

    def content(self) -> Deferred[bytes]:
        return succeed(b"")


class Sink:
    """Answers each POST with the next code of ``codes`` (200 after them); "down" raises."""

    def __init__(self, *codes: Any) -> None:
        self.codes = list(codes)
        self.posts: list[tuple[str, dict[str, Any], dict[str, str]]] = []

    def post(self, url: str, data: bytes, headers: dict[str, str], timeout: float) -> Any:
        self.posts.append((url, orjson.loads(data), headers))
        code = self.codes.pop(0) if self.codes else 200
        if code == "down":
            raise ConnectionRefusedError("Connection was refused by other side")
        return succeed(Reply(code))

    def batch_sizes(self) -> list[int]:
        return [len(body["items"]) for _, body, _ in self.posts]


def backend(sink: Sink, clock: Clock, **config: Any) -> WebhookBackend:
    return WebhookBackend(CONN, clock, BatchConfig(**config), client=sink, jitter=lambda: 0.0)


def event(i: int) -> dict[str, Any]:
    return {"kind": "Event", "apiVersion": "audit.platform.io/v1", "auditID": str(i)}


def test_a_full_batch_leaves_at_once_as_an_event_list() -> None:
    clock, sink = Clock(), Sink()
    hook = backend(sink, clock, max_batch_size=3)
    for i in range(7):
        hook.process(event(i))
    assert sink.batch_sizes() == [3, 3]
    url, body, headers = sink.posts[0]
    assert url == CONN.server and headers["Authorization"] == "Bearer t0k"
    assert body["kind"] == "EventList" and body["apiVersion"] == "audit.platform.io/v1"
    assert [e["auditID"] for e in body["items"]] == ["0", "1", "2"]
    clock.advance(29.9)
    assert sink.batch_sizes() == [3, 3]
    clock.advance(0.1)  # --audit-webhook-batch-max-wait: the rest goes
    assert sink.batch_sizes() == [3, 3, 1]


def test_batches_split_by_the_truncate_byte_limit() -> None:
    clock, sink = Clock(), Sink()
    one = len(orjson.dumps(event(0))) + 1
    hook = backend(sink, clock, max_batch_size=10, max_batch_bytes=3 * one)
    for i in range(7):
        hook.process(event(i))
    clock.advance(30)
    assert sink.batch_sizes() == [3, 3, 1]
    assert [e["auditID"] for _, body, _ in sink.posts for e in body["items"]] == [
        str(i) for i in range(7)
    ]
    big = {**event(9), "pad": "x" * 4 * one}  # larger than the limit alone: sent alone
    hook.process(event(7)), hook.process(big), hook.process(event(8))
    clock.advance(30)
    assert sink.batch_sizes()[3:] == [1, 1, 1]


def test_retries_with_exponential_backoff_then_gives_up() -> None:
    clock, sink = Clock(), Sink("down", 503, 500, "down", 500)
    hook = backend(sink, clock, max_batch_size=1, initial_backoff=10.0)
    errors = AUDIT_ERRORS.labels(plugin="webhook")._value.get()
    hook.process(event(1))
    assert len(sink.posts) == 1
    for wait, tries in ((10.0, 2), (15.0, 3), (22.5, 4), (33.75, 5)):
        clock.advance(wait - 0.01)
        assert len(sink.posts) == tries - 1
        clock.advance(0.01)
        assert len(sink.posts) == tries
    clock.advance(1000)
    assert len(sink.posts) == 5  # five tries, then the batch is dropped and counted
    assert AUDIT_ERRORS.labels(plugin="webhook")._value.get() == errors + 1
    assert hook.sent_batches == 0


def test_a_retry_that_succeeds() -> None:
    clock, sink = Clock(), Sink(500)
    hook = backend(sink, clock, max_batch_size=1, initial_backoff=2.0)
    hook.process(event(1))
    clock.advance(2.0)
    assert len(sink.posts) == 2 and hook.sent_batches == 1


def test_full_buffer_drops_events_and_counts_them() -> None:
    clock, sink = Clock(), Sink()
    hook = backend(sink, clock, buffer_size=2, max_batch_size=10)
    dropped = AUDIT_ERRORS.labels(plugin="buffered")._value.get()
    for i in range(5):
        hook.process(event(i))
    assert AUDIT_ERRORS.labels(plugin="buffered")._value.get() == dropped + 3
    hook.shutdown()  # sends what is buffered
    assert sink.batch_sizes() == [2]


def test_throttle_spaces_batches() -> None:
    clock, sink = Clock(), Sink()
    hook = backend(sink, clock, max_batch_size=1, throttle_qps=2.0, throttle_burst=2)
    for i in range(4):
        hook.process(event(i))
    assert len(sink.posts) == 2  # the burst
    clock.advance(0.5)
    assert len(sink.posts) == 3
    clock.advance(0.5)
    assert len(sink.posts) == 4


def test_token_bucket_refills() -> None:
    clock = Clock()
    bucket = Throttle(10.0, 1, clock)
    assert bucket.delay() == 0.0
    assert abs(bucket.delay() - 0.1) < 1e-9
    clock.advance(10)
    assert bucket.delay() == 0.0
