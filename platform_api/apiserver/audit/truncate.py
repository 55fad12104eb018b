"""``--audit-{log,webhook}-truncate-*``: kube's truncating audit backend.

An event whose JSON passes ``max-event-size`` bytes loses its request and response
objects and gains the annotation ``audit.k8s.io/truncated: "true"`` (only events at level
Request or RequestResponse carry objects to lose); one still too large is dropped and
counted in ``apiserver_audit_error_total{plugin="truncate"}``.  ``max-batch-size`` bounds
the bytes of the events one webhook request carries (the webhook backend splits its
batches by it); kube checks it is at least ``max-event-size``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from twisted.logger import Logger

from platform_api.apiserver.audit.event import legacy_line
from platform_api.apiserver.auditmetrics import AUDIT_ERRORS

log = Logger()
PLUGIN = "truncate"
ANNOTATION = "audit.k8s.io/truncated"
_WITH_OBJECTS = ("Request", "RequestResponse")


@dataclass
class TruncateConfig:
    """kube's AuditTruncateOptions and their defaults."""

    enabled: bool = False
    max_batch_size: int = 10 * 1024 * 1024
    max_event_size: int = 100 * 1024


class Backend(Protocol):
    def process(self, event: dict[str, Any]) -> None: ...

    def shutdown(self) -> Any: ...


def event_size(event: dict[str, Any]) -> int:
    """The bytes kube's JSON encoder writes for the event (its newline included)."""
    return len(orjson.dumps(event)) + 1


def truncated(event: dict[str, Any]) -> dict[str, Any]:
    """The event without its request and response objects, marked as truncated."""
    out = {k: v for k, v in event.items() if k not in ("requestObject", "responseObject")}
    out["annotations"] = {**(event.get("annotations") or {}), ANNOTATION: "true"}
    return out


class TruncatingBackend:
    """Wraps a backend: events reach it whole, truncated, or not at all."""

    def __init__(self, delegate: Backend, config: TruncateConfig) -> None:
        self.delegate = delegate
        self.config = config

    def process(self, event: dict[str, Any]) -> None:
        limit = self.config.max_event_size
        size = event_size(event)
        if size > limit and event.get("level") in _WITH_OBJECTS:
            event = truncated(event)
            size = event_size(event)
        if size <= limit:
            self.delegate.process(event)
            return
        AUDIT_ERRORS.labels(plugin=PLUGIN).inc()
        log.error(
            "Error in audit plugin '{plugin}' affecting 1 audit events: event is too large "
            "even after truncating\nImpacted events:\n{line}",
            plugin=PLUGIN,
            line=legacy_line(event),
        )

    def shutdown(self) -> Any:
        return self.delegate.shutdown()


def wrap(delegate: Backend, config: TruncateConfig) -> Backend:
    """The backend as kube builds it: truncating only when enabled."""
    return TruncatingBackend(delegate, config) if config.enabled else delegate
