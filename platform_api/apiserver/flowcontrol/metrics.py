"""The ``apiserver_flowcontrol_*`` families kube's priority and fairness filter keeps.

Counters, histograms and the timing ratio series (timingratio.py) are updated on the
reactor thread (no locks); the gauges are read from the live counts and the levels'
fair-queuing clocks when scraped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from platform_api.apiserver.metrics import REGISTRY, ReactorCounter, ReactorHistogram
from platform_api.apiserver.timingratio import Clock, TimingRatios

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


QUEUE_LENGTH = ReactorHistogram(
    _PREFIX + "request_queue_length_after_enqueue",
    "[ALPHA] Length of queue in the API Priority and Fairness subsystem, as seen by each "
    "request after it is enqueued",
    ["flow_schema", "priority_level"],
    (0, 10, 25, 50, 100, 250, 500, 1000),
    registry=REGISTRY,
)
NO_ACCOMMODATION = ReactorCounter(
    _PREFIX + "request_dispatch_no_accommodation_total",
    "[ALPHA] Number of times a dispatch attempt resulted in a non accommodation due to lack "
    "of available seats",
    ["flow_schema", "priority_level"],
    registry=REGISTRY,
)
# kube winds its fixed-point progress meter back near overflow; this server's is a float
# that never needs to, so the family has no series (as kube's until its first epoch).
EPOCHS = ReactorCounter(
    _PREFIX + "epoch_advance_total",
    "[ALPHA] Number of times the queueset's progress meter jumped backward",
    ["priority_level", "success"],
    registry=REGISTRY,
)
SEAT_UTILIZATION = TimingRatios(
    _PREFIX + "priority_level_seat_utilization",
    "[ALPHA] Observations, at the end of every nanosecond, of utilization of seats for any "
    "stage of execution (but only initial stage for WATCHes)",
    ["phase", "priority_level"],
    (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1),
    registry=REGISTRY,
)
REQUEST_UTILIZATION = TimingRatios(
    _PREFIX + "priority_level_request_utilization",
    "[ALPHA] Observations, at the end of every nanosecond, of number of requests (as a "
    "fraction of the relevant limit) waiting or in any stage of execution (but only initial "
    "stage for WATCHes)",
    ["phase", "priority_level"],
    (0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 1),
    registry=REGISTRY,
)
DEMAND = TimingRatios(
    _PREFIX + "demand_seats",
    "[ALPHA] Observations, at the end of every nanosecond, of (the number of seats each "
    "priority level could use) / (nominal number of seats for that level)",
    ["priority_level"],
    (0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6),
    registry=REGISTRY,
)


class LevelTimings:
    """A level's timing ratio series: requests waiting over its queues' room, requests
    and seats executing over its seats, and seat demand over its seats (kube's
    reqsGaugePair, execSeatsObs and seat demand gauge)."""

    __slots__ = ("clock", "demand", "executing", "seats", "waiting")

    def __init__(self, level: str, clock: Clock) -> None:
        self.clock = clock
        self.waiting = REQUEST_UTILIZATION.child("waiting", level, clock=clock)
        self.executing = REQUEST_UTILIZATION.child("executing", level, clock=clock)
        self.seats = SEAT_UTILIZATION.child("executing", level, clock=clock)
        self.demand = DEMAND.child(level, clock=clock)

    def observe(self, waiting: int, executing: int, seats: int, seats_waiting: int) -> None:
        """The level's counts now (one clock reading for the series that moved)."""
        now = self.clock()
        demand = seats + seats_waiting
        # (a request moves one or two of them: the others cost a comparison)
        if waiting != self.waiting.numerator:
            self.waiting.set(waiting, now)
        if executing != self.executing.numerator:
            self.executing.set(executing, now)
        if seats != self.seats.numerator:
            self.seats.set(seats, now)
        if demand != self.demand.numerator:
            self.demand.set(demand, now)

    def limits(self, room: int, seats: int) -> None:
        """The denominators: the requests the queues hold, the seats to run them."""
        self.waiting.set_denominator(room)
        for series in (self.executing, self.seats, self.demand):
            series.set_denominator(seats)


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
        self.fair_frac = 0.0
        # the levels' fair-queuing clocks, read when scraped: level -> its QueueSet, or
        # None for an exempt level (whose clock stands still)
        self.clocks: Callable[[], dict[str, Any]] = dict

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
        yield GaugeMetricFamily(_PREFIX + "seat_fair_frac", FAIR_FRAC_HELP, value=self.fair_frac)
        yield from self._virtual_time()

    def _virtual_time(self) -> Iterator[Metric]:
        """R now, and R and the S values of each level's last dispatch from a queue
        (kube's SetCurrentR and SetDispatchMetrics)."""
        queuesets = sorted(self.clocks().items())
        current = GaugeMetricFamily(
            _PREFIX + "current_r", "[ALPHA] R(time of last change)", labels=["priority_level"]
        )
        for level, qs in queuesets:
            current.add_metric([level], qs.virtual if qs is not None else 0.0)
        yield current
        dispatched = [(level, qs.dispatched) for level, qs in queuesets if qs and qs.dispatched]
        for name, doc, pick in DISPATCH_GAUGES:
            family = GaugeMetricFamily(_PREFIX + name, doc, labels=["priority_level"])
            for level, values in dispatched:
                family.add_metric([level], pick(values))
            yield family
        for name, doc, first in BOUNDS_GAUGES:
            family = GaugeMetricFamily(_PREFIX + name, doc, labels=["bound", "priority_level"])
            for bound, index in (("max", first + 1), ("min", first)):
                for level, values in dispatched:
                    family.add_metric([bound, level], values[index])
            yield family


FAIR_FRAC_HELP = (
    "[ALPHA] Fair fraction of server's concurrency to allocate to each priority level that "
    "can use it"
)
# A dispatch's (R, S, min S, max S, min discounted S, max discounted S): queueset.py
DISPATCH_GAUGES: tuple[tuple[str, str, Callable[[tuple[float, ...]], float]], ...] = (
    ("dispatch_r", "[ALPHA] R(time of last dispatch)", lambda v: v[0]),
    ("latest_s", "[ALPHA] S(most recently dispatched request)", lambda v: v[1]),
)
BOUNDS_GAUGES = (
    (
        "next_s_bounds",
        "[ALPHA] min and max, over queues, of S(oldest waiting request in queue)",
        2,
    ),
    (
        "next_discounted_s_bounds",
        "[ALPHA] min and max, over queues, of S(oldest waiting request in queue) - estimated "
        "work in progress",
        4,
    ),
)


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
TARGET = ("target_seats", "[ALPHA] Seat allocation targets")
GAUGES = Gauges()
REGISTRY.register(GAUGES)
