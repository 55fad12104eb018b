"""The ``apiserver_flowcontrol_*`` families kube's priority and fairness filter keeps.

Counters and the wait histogram are updated on the reactor thread (no locks); the
gauges are read from the live counts when scraped.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from platform_api.apiserver.metrics import REGISTRY, ReactorCounter, ReactorHistogram

_PREFIX = "apiserver_flowcontrol_"
WAIT_BUCKETS = (0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30)

DISPATCHED = ReactorCounter(
    _PREFIX + "dispatched_requests_total",
    "[BETA] Number of requests executed by API Priority and Fairness subsystem",
    ["flow_schema", "priority_level"],
    registry=REGISTRY,
)
REJECTED = ReactorCounter(
    _PREFIX + "rejected_requests_total",
    "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
    ["flow_schema", "priority_level", "reason"],
    registry=REGISTRY,
)
WAIT = ReactorHistogram(
    _PREFIX + "request_wait_duration_seconds",
    "[BETA] Length of time a request spent waiting in its queue",
    ["execute", "flow_schema", "priority_level"],
    WAIT_BUCKETS,
    registry=REGISTRY,
)
EXECUTION = ReactorHistogram(
    _PREFIX + "request_execution_seconds",
    "[ALPHA] Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of "
    "request execution in the API Priority and Fairness subsystem",
    ["flow_schema", "priority_level", "type"],
    WAIT_BUCKETS,  # kube's requestDurationSecondsBuckets, the same as the wait's
    registry=REGISTRY,
)
WORK_SEATS = ReactorHistogram(
    _PREFIX + "work_estimated_seats",
    "[ALPHA] Number of estimated seats (maximum of initial and final seats) associated with "
    "requests in API Priority and Fairness",
    ["flow_schema", "priority_level"],
    (1, 2, 4, 8, 16, 32, 64, 100),
    registry=REGISTRY,
)
WATCH_COUNT = ReactorHistogram(
    _PREFIX + "watch_count_samples",
    "[ALPHA] count of watchers for mutating requests in API Priority and Fairness",
    ["flow_schema", "priority_level"],
    (0, 1, 10, 100, 1000, 10000),
    registry=REGISTRY,
)


class Gauges(Collector):
    """Executing and queued requests and executing seats per (flow schema, priority
    level); seats per level."""

    def __init__(self) -> None:
        self.executing: dict[tuple[str, str], int] = {}
        self.seats: dict[tuple[str, str], int] = {}
        self.inqueue: dict[tuple[str, str], int] = {}
        self.inqueue_seats: dict[tuple[str, str], int] = {}
        self.nominal: dict[str, int] = {}
        self.current: dict[str, int] = {}
        # per level, set every borrowing period: (name, help) -> level -> value
        self.levels: dict[tuple[str, str], dict[str, float]] = {}

    def describe(self) -> Iterator[Metric]:
        return iter(())

    def collect(self) -> Iterator[Metric]:
        for name, doc, table in (
            (
                "current_executing_requests",
                "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) "
                "execution stage in the API Priority and Fairness subsystem",
                self.executing,
            ),
            (
                "current_executing_seats",
                "[BETA] Concurrency (number of seats) occupied by the currently executing "
                "(initial stage for a WATCH, any stage otherwise) requests in the API Priority "
                "and Fairness subsystem",
                self.seats,
            ),
            (
                "current_inqueue_requests",
                "[BETA] Number of requests currently pending in queues of the API Priority "
                "and Fairness subsystem",
                self.inqueue,
            ),
            (
                "current_inqueue_seats",
                "[ALPHA] Number of seats currently pending in queues of the API Priority "
                "and Fairness subsystem",
                self.inqueue_seats,
            ),
        ):
            family = GaugeMetricFamily(
                _PREFIX + name, doc, labels=["flow_schema", "priority_level"]
            )
            for (schema, level), value in sorted(table.items()):
                family.add_metric([schema, level], value)
            yield family
        for name, doc, seats in (
            (
                "nominal_limit_seats",
                "[BETA] Nominal number of execution seats configured for each priority level",
                self.nominal,
            ),
            (
                "current_limit_seats",
                "[ALPHA] current derived number of execution seats available to each "
                "priority level",
                self.current,
            ),
        ):
            family = GaugeMetricFamily(_PREFIX + name, doc, labels=["priority_level"])
            for level, value in sorted(seats.items()):
                family.add_metric([level], value)
            yield family
        for (name, doc), values in sorted(self.levels.items()):
            family = GaugeMetricFamily(_PREFIX + name, doc, labels=["priority_level"])
            for level, amount in sorted(values.items()):
                family.add_metric([level], amount)
            yield family


LOWER = (
    "lower_limit_seats",
    "[ALPHA] Configured lower bound on number of execution seats available to each priority level",
)
UPPER = (
    "upper_limit_seats",
    "[ALPHA] Configured upper bound on number of execution seats available to each priority level",
)
HIGH_WATERMARK = (
    "demand_seats_high_watermark",
    "[ALPHA] High watermark, over last adjustment period, of demand_seats",
)
AVERAGE = (
    "demand_seats_average",
    "[ALPHA] Time-weighted average, over last adjustment period, of demand_seats",
)
STDEV = (
    "demand_seats_stdev",
    "[ALPHA] Time-weighted standard deviation, over last adjustment period, of demand_seats",
)
SMOOTHED = ("demand_seats_smoothed", "[ALPHA] Smoothed seat demands")
GAUGES = Gauges()
REGISTRY.register(GAUGES)
