"""client-go's EventCorrelator, before an event is written: similar events combined, and
a source's events about one object rate-limited.

- Aggregation: events alike but for their message (same source, object, type, reason)
  are counted per ten-minute window; from the tenth distinct message on, each is written
  as one combined event, "(combined from similar events): <message>", whose count rises
  instead of a new Event per message.
- Spam filter: each source may write 25 events about one object (and type) at once, then
  one per five minutes; the rest are dropped, as kube's controllers drop them.

Both keep at most 4096 keys, least recently used first out.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

Obj = dict[str, Any]
Key = tuple[str, ...]
V = TypeVar("V")
CACHE_SIZE = 4096  # client-go's maxLruCacheEntries
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
COMBINED = "(combined from similar events): "
_OBJECT = ("kind", "namespace", "name", "uid", "apiVersion")


class _Lru(Generic[V]):
    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._items: OrderedDict[Key, V] = OrderedDict()
        self._size = size

    def get(self, key: Key) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: Key, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def pop(self, key: Key) -> None:
        self._items.pop(key, None)


def _source(event: Obj) -> Key:
    source, involved = event.get("source") or {}, event.get("involvedObject") or {}
    return (
        source.get("component", ""),
        source.get("host", ""),
        *(str(involved.get(k, "")) for k in _OBJECT),
        event.get("type", ""),
    )


def event_key(event: Obj) -> Key:
    """client-go's getEventKey: what makes two events the same one."""
    field_path = (event.get("involvedObject") or {}).get("fieldPath", "")
    return (*_source(event), field_path, event.get("reason", ""), event.get("message", ""))


class _Bucket:
    """A passive token bucket (client-go's TokenBucketPassiveRateLimiter)."""

    def __init__(self, now: float) -> None:
        self.tokens, self.at = float(SPAM_BURST), now

    def take(self, now: float) -> bool:
        self.tokens = min(float(SPAM_BURST), self.tokens + (now - self.at) * SPAM_QPS)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class Correlator:
    def __init__(self, seconds: Callable[[], float]) -> None:
        self._seconds = seconds
        self._similar: _Lru[tuple[set[str], float]] = _Lru()
        self._buckets: _Lru[_Bucket] = _Lru()

    def aggregate(self, event: Obj) -> tuple[Obj, Key]:
        """The event to record, and the key of the Event its repeats update: the event
        itself, or once similar ones pile up, the combined one."""
        now = self._seconds()
        similar = (
            *_source(event),
            event.get("reason", ""),
            event.get("reportingComponent", ""),
            event.get("reportingInstance", ""),
        )
        found = self._similar.get(similar)
        messages, last = found if found is not None else (set(), float("-inf"))
        if now - last > AGGREGATE_INTERVAL:
            messages = set()
        messages.add(event.get("message", ""))
        self._similar.put(similar, (messages, now))
        if len(messages) < AGGREGATE_MAX_EVENTS:
            return event, event_key(event)
        messages.pop()  # the set stays at the threshold
        # kube's combined event is a fresh one: no reporting controller of its own
        combined = {k: v for k, v in event.items() if k != "reportingComponent"}
        combined["message"] = COMBINED + event.get("message", "")
        return combined, ("combined", *similar)

    def allowed(self, event: Obj) -> bool:
        """The spam filter: whether this source may write about this object now."""
        now = self._seconds()
        key = _source(event)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(now)
            self._buckets.put(key, bucket)
        return bucket.take(now)
