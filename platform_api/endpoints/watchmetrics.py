"""``apiserver_watch_events_total`` / ``_sizes``: every frame a watch stream writes.

As kube's watch event recorder wraps the stream's writer, bookmarks and ERROR events
count too; the label children are cached per served resource (one dict lookup a frame).
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter, Histogram

from platform_api.apiserver.metrics import REGISTRY
from platform_api.scheme.types import ResourceType

WATCH_EVENTS = Counter(
    "apiserver_watch_events_total",
    "[ALPHA] Number of events sent in watch clients",
    ["group", "resource", "version"],
    registry=REGISTRY,
)
WATCH_EVENT_SIZES = Histogram(
    "apiserver_watch_events_sizes",
    "[ALPHA] Watch event size distribution in bytes",
    ["group", "resource", "version"],
    buckets=tuple(1024.0 * 2**i for i in range(8)),
    registry=REGISTRY,
)
_children: dict[tuple[str, str, str], tuple[Any, Any]] = {}


def sent(resource: ResourceType, frame: bytes) -> None:
    """Count one frame written to a watcher of ``resource``."""
    key = (resource.group, resource.plural, resource.version)
    pair = _children.get(key)
    if pair is None:
        labels = {"group": key[0], "resource": key[1], "version": key[2]}
        pair = _children[key] = (WATCH_EVENTS.labels(**labels), WATCH_EVENT_SIZES.labels(**labels))
    pair[0].inc()
    pair[1].observe(len(frame))
