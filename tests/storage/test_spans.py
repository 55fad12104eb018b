"""storage/spans.py: a traced request's storage spans, nested as kube's are, and nothing
made for a request that is not traced."""

from __future__ import annotations

import contextvars
from typing import Any

from platform_api.storage import spans


class Span:
    def __init__(self, name: str, attributes: dict[str, Any], parent: Span | None) -> None:
        self.name, self.attributes, self.parent = name, attributes, parent
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.ended = False

    def add_event(self, name: str, attributes: dict[str, Any]) -> None:
        self.events.append((name, attributes))

    def set_attribute(self, name: str, value: Any) -> None:
        self.attributes[name] = value

    def end(self) -> None:
        self.ended = True


class Trace:
    audit_id = "1234"

    def __init__(self) -> None:
        self.made: list[Span] = []

    def child(self, name: str, attributes: dict[str, Any], parent: Any = None) -> Span:
        self.made.append(Span(name, attributes, parent))
        return self.made[-1]


def _traced(trace: Trace) -> None:
    spans.TRACE.set(trace)
    with spans.opened("cacher.Watch", lambda audit_id: {"audit-id": audit_id}):
        with spans.opened("List(recursive=false) etcd3", lambda _: {"limit": 1}):
            spans.event("inner")
        spans.event("watchCache locked acquired")
        spans.attribute("type", "configmaps")
    spans.event("after")  # no span open: dropped


def test_a_span_opened_inside_another_is_its_child() -> None:
    trace = Trace()
    contextvars.copy_context().run(_traced, trace)
    outer, inner = trace.made
    assert (outer.name, outer.parent, outer.attributes) == (
        "cacher.Watch",
        None,  # under the request's current span
        {"audit-id": "1234", "type": "configmaps"},
    )
    assert (inner.name, inner.parent, inner.attributes) == (
        "List(recursive=false) etcd3",
        outer,
        {"limit": 1},
    )
    assert inner.events == [("inner", {})]
    assert outer.events == [("watchCache locked acquired", {})]
    assert outer.ended and inner.ended


def test_an_untraced_request_makes_nothing() -> None:
    def untraced() -> None:
        def attributes(_: str) -> dict[str, Any]:
            raise AssertionError("attributes built for an untraced request")

        with spans.opened("cacher.Get", attributes) as opened:
            spans.event("About to Get from underlying storage")
            assert opened is None

    contextvars.copy_context().run(untraced)
    assert spans.TRACE.get() is None
