"""The truncating audit backend: kube's truncate plugin, event by event."""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.apiserver.audit.truncate import (
    TruncateConfig,
    event_size,
    truncated,
    wrap,
)
from platform_api.apiserver.auditmetrics import AUDIT_ERRORS


class Recorder:
    plugin = "log"

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def process(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def shutdown(self) -> str:
        return "done"


def event(level: str, body: int, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    ev: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "audit.platform.io/v1",
        "level": level,
        "auditID": "a1",
        "stage": "ResponseComplete",
        "requestURI": "/api/v1/namespaces/default/configmaps",
        "verb": "create",
        "user": {"username": "admin"},
        "requestObject": {"data": {"k": "x" * body}},
        "responseObject": {"data": {"k": "y" * body}},
    }
    if annotations:
        ev["annotations"] = annotations
    return ev


def dropped() -> float:
    return AUDIT_ERRORS.labels(plugin="truncate")._value.get()


def test_size_is_the_json_line() -> None:
    ev = event("Metadata", 1)
    assert event_size(ev) == len(orjson.dumps(ev)) + 1


def test_disabled_is_the_backend_itself() -> None:
    inner = Recorder()
    assert wrap(inner, TruncateConfig()) is inner


def test_small_events_pass_whole() -> None:
    inner = Recorder()
    backend = wrap(inner, TruncateConfig(True, 10_000, 1000))
    ev = event("RequestResponse", 10)
    backend.process(ev)
    assert inner.events == [ev]
    assert backend.shutdown() == "done"


def test_large_events_lose_their_objects_and_are_marked() -> None:
    inner = Recorder()
    backend = wrap(inner, TruncateConfig(True, 10_000, 1000))
    ev = event("Request", 2000, {"authorization.k8s.io/decision": "allow"})
    backend.process(ev)
    (out,) = inner.events
    assert "requestObject" not in out and "responseObject" not in out
    assert out["annotations"] == {
        "authorization.k8s.io/decision": "allow",
        "audit.k8s.io/truncated": "true",
    }
    assert out == truncated(ev) and "requestObject" in ev  # the original is untouched
    assert list(out)[:4] == ["kind", "apiVersion", "level", "auditID"]


def test_too_large_even_truncated_is_dropped_and_counted() -> None:
    inner = Recorder()
    backend = wrap(inner, TruncateConfig(True, 10_000, 100))
    before = dropped()
    backend.process(event("RequestResponse", 10))  # the metadata alone passes 100 bytes
    ev = event("Metadata", 0)
    ev.pop("requestObject"), ev.pop("responseObject")
    ev["requestURI"] = "/" + "p" * 200  # Metadata events have nothing to lose
    backend.process(ev)
    assert inner.events == []
    assert dropped() == before + 2
