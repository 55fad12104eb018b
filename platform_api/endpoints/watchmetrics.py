"""``apiserver_watch_events_total`` / ``_sizes``: every frame a watch stream writes;
``apiserver_init_events_total``, the synthetic ADDED events of the state a watch starts
from; ``apiserver_terminated_watchers_total``, watches ended for reading too slowly.

As kube's watch event recorder wraps the stream's writer, bookmarks and ERROR events
count too; the label children are cached per served resource (one dict lookup a frame).
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter, Histogram

from platform_api.apiserver.metrics import REGISTRY, ReactorCounter
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
INIT_EVENTS = ReactorCounter(
    "apiserver_init_events_total",
    "[ALPHA] Counter of init events processed in watch cache broken by resource type.",
    ["group", "resource"],
    REGISTRY,
)
TERMINATED_WATCHERS = ReactorCounter(
    "apiserver_terminated_watchers_total",
    "[ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type.",
    ["group", "resource"],
    REGISTRY,
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


def initial_events(resource: ResourceType, count: int) -> None:
    """A watch was sent ``count`` synthetic ADDED events of the state it starts from."""
    if count:
        INIT_EVENTS.add(count, resource.group, resource.plural)


def terminated(resource: ResourceType) -> None:
    """A watch was ended because its client read too slowly (it re-watches)."""
    TERMINATED_WATCHERS.inc(resource.group, resource.plural)
