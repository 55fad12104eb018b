"""kube's ``workqueue_*`` families for the controllers kube runs inside kube-apiserver.

client-go's work queue reports, per queue name: adds (an item not already waiting),
how long an item waited before a worker took it and how long the work took, how many
items wait (depth), the seconds of work in progress and the longest of it, and retries
(every ``AddAfter``: a delayed re-run or a rate-limited retry).  The Controller base
(base.py) keeps its keys its own way; ``QueueMetrics`` sees the same moments and counts
them as client-go's queue would.  Only queues kube-apiserver has are named (``queue``
on the controller): kube-controller-manager's report on its own endpoint, not here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from platform_api.apiserver.metrics import (
    REGISTRY,
    ReactorCounter,
    ReactorHistogram,
    exponential_buckets,
)

_BUCKETS = exponential_buckets(10e-9, 10, 10)
_LABELS = ["name"]
ADDS = ReactorCounter(
    "workqueue_adds_total", "[BETA] Total number of adds handled by workqueue", _LABELS, REGISTRY
)
RETRIES = ReactorCounter(
    "workqueue_retries_total",
    "[BETA] Total number of retries handled by workqueue",
    _LABELS,
    REGISTRY,
)
QUEUE_DURATION = ReactorHistogram(
    "workqueue_queue_duration_seconds",
    "[BETA] How long in seconds an item stays in workqueue before being requested.",
    _LABELS,
    _BUCKETS,
    REGISTRY,
)
WORK_DURATION = ReactorHistogram(
    "workqueue_work_duration_seconds",
    "[BETA] How long in seconds processing an item from workqueue takes.",
    _LABELS,
    _BUCKETS,
    REGISTRY,
)
_DEPTH_HELP = "[BETA] Current depth of workqueue"
_UNFINISHED_HELP = (
    "[BETA] How many seconds of work has done that is in progress and hasn't been observed "
    "by work_duration. Large values indicate stuck threads. One can deduce the number of "
    "stuck threads by observing the rate at which this increases."
)
_LONGEST_HELP = (
    "[BETA] How many seconds has the longest running processor for workqueue been running."
)


class QueueMetrics:
    """One named queue's moments: ``added`` (ignored while the key already waits, as
    client-go's dirty set ignores it), ``started``, ``finished``, ``retried``."""

    def __init__(self, name: str, clock: Callable[[], float]) -> None:
        self.name, self.clock = name, clock
        self.waiting: dict[Hashable, float] = {}
        self.processing: dict[Hashable, float] = {}
        self.shown = True  # its gauges, until ``DELETE /metrics``; back at its next add
        ADDS.add(0.0, name)  # kube's queues show their series from the start
        RETRIES.add(0.0, name)
        QUEUE_DURATION.row(name)
        WORK_DURATION.row(name)
        _GAUGES.queues[name] = self

    def added(self, key: Hashable) -> None:
        self.shown = True
        if key not in self.waiting:
            ADDS.inc(self.name)
            self.waiting[key] = self.clock()

    def started(self, key: Hashable) -> None:
        now = self.clock()
        added = self.waiting.pop(key, now)
        QUEUE_DURATION.observe(now - added, self.name)
        self.processing[key] = now

    def finished(self, key: Hashable) -> None:
        started = self.processing.pop(key, None)
        if started is not None:
            WORK_DURATION.observe(self.clock() - started, self.name)

    def retried(self) -> None:
        RETRIES.inc(self.name)


class _QueueGauges(Collector):
    """Depth, unfinished work and the longest running work, read when scraped (client-go
    updates the last two every half second)."""

    def __init__(self) -> None:
        self.queues: dict[str, QueueMetrics] = {}
        REGISTRY.register(self)

    def clear(self) -> None:
        """``DELETE /metrics``: the series go, as the other families' do."""
        for queue in self.queues.values():
            queue.shown = False

    def collect(self) -> Iterator[GaugeMetricFamily]:
        depth = GaugeMetricFamily("workqueue_depth", _DEPTH_HELP, labels=_LABELS)
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds", _UNFINISHED_HELP, labels=_LABELS
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds", _LONGEST_HELP, labels=_LABELS
        )
        for name, queue in sorted(self.queues.items()):
            if not queue.shown:
                continue
            now = queue.clock()
            running = [now - started for started in queue.processing.values()]
            depth.add_metric([name], len(queue.waiting))
            unfinished.add_metric([name], sum(running))
            longest.add_metric([name], max(running, default=0.0))
        yield from (depth, unfinished, longest)


_GAUGES = _QueueGauges()
