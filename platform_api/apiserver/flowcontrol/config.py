"""The live priority and fairness configuration (kube's apf_controller).

An ``Informer`` keeps the FlowSchemas and PriorityLevelConfigurations; any change
rebuilds the classifier and the levels on the next reactor turn.  A level keeps its
QueueSet (and the requests in it) across rebuilds.  The server's concurrency limit
(``--max-requests-inflight`` + ``--max-mutating-requests-inflight``) is divided among
the levels by ``nominalConcurrencyShares``: nominal limit = ceil(limit * shares / sum of
shares); every 10 s idle levels lend seats to busy ones (``borrowing``).  FlowSchemas get
kube's ``Dangling`` condition.  The bootstrap objects are ensured at start and every
minute (kube's config producer).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import ensureDeferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.apiserver.flowcontrol import borrowing
from platform_api.apiserver.flowcontrol.borrowing import Bounds, DemandStats, SeatUse
from platform_api.apiserver.flowcontrol.classify import Classifier, Schema
from platform_api.apiserver.flowcontrol.estimate import level_max_seats
from platform_api.apiserver.flowcontrol.metrics import (
    AVERAGE,
    GAUGES,
    HIGH_WATERMARK,
    LOWER,
    SMOOTHED,
    STDEV,
    TARGET,
    UPPER,
    LevelTimings,
)
from platform_api.apiserver.flowcontrol.queueset import QueueSet
from platform_api.controllers.informer import Informer
from platform_api.registry import flowcontrol_bootstrap as bootstrap
from platform_api.registry.store import Store

log = Logger()
Obj = dict[str, Any]
DEFAULT_SHARES = 30  # v1's default nominalConcurrencyShares
DEMAND_GAUGES: tuple[tuple[tuple[str, str], Callable[[DemandStats], float]], ...] = (
    (HIGH_WATERMARK, lambda d: d.high_watermark),
    (AVERAGE, lambda d: d.average),
    (STDEV, lambda d: d.deviation),
    (SMOOTHED, lambda d: d.smoothed),
)
ENSURE_INTERVAL = 60.0  # kube re-ensures the bootstrap objects every minute
CONSUMER = "api-priority-and-fairness-config-consumer-v1"  # the field manager of statuses


@dataclass
class Level:
    name: str
    uid: str
    exempt: bool
    queues: QueueSet | None  # None: exempt
    nominal: int
    bounds: Bounds
    demand: DemandStats = field(default_factory=DemandStats)
    max_seats: int = 0  # the work estimator's cap for a queuing level (0: none of its own)
    use: SeatUse | None = None  # an exempt level's seats in use
    current: int = 0  # an exempt level's seats held back from lending, this period
    target: float = 0.0  # its seat allocation target, the last period

    @property
    def limit(self) -> int:
        """The seats it may use now."""
        return self.queues.limit if self.queues is not None else self.current

    @property
    def room(self) -> int:
        """How many requests its queues hold (at least 1: kube's denominator)."""
        if self.queues is None:
            return 1
        return max(1, self.queues.queue_length_limit) * max(1, len(self.queues.queues))

    @property
    def uid_header(self) -> bytes:
        return self.uid.encode()


def _shares(spec: Obj) -> int:
    if spec.get("type") == "Exempt":
        value = (spec.get("exempt") or {}).get("nominalConcurrencyShares")
        return int(value or 0)
    value = (spec.get("limited") or {}).get("nominalConcurrencyShares")
    return DEFAULT_SHARES if value is None else int(value)


def _bounds(spec: Obj, nominal: int, server: int) -> Bounds:
    body = spec.get("exempt" if spec.get("type") == "Exempt" else "limited") or {}
    lendable = int(body.get("lendablePercent") or 0)
    return borrowing.bounds(nominal, lendable, body.get("borrowingLimitPercent"), server)


def _queuing(spec: Obj) -> tuple[int, int, int]:
    """(queues, handSize, queueLengthLimit); queues 0 for a level that rejects."""
    response = (spec.get("limited") or {}).get("limitResponse") or {}
    if response.get("type") != "Queue":
        return 0, 0, 0
    q = response.get("queuing") or {}
    return (
        int(q.get("queues") or 64),
        int(q.get("handSize") or 8),
        int(q.get("queueLengthLimit") or 50),
    )


class FlowControlConfig:
    """Schemas, levels and their seats, kept current from storage."""

    def __init__(
        self,
        schemas: Store,
        levels: Store,
        informer: Informer,
        reactor: IReactorTime,
        server_limit: int,
    ) -> None:
        self.schema_store, self.level_store = schemas, levels
        self.informer = informer
        self.reactor = reactor
        self.server_limit = server_limit
        self._borrowed = False  # no borrowing period has ended yet
        self.levels: dict[str, Level] = {}
        self.classifier = Classifier([], set())
        self._pending: IDelayedCall | None = None
        self.borrower: LoopingCall | None = None
        self.ensurer: LoopingCall | None = None
        self.on_rebuild: list[Callable[[], None]] = []
        # Under --workers: this worker's seats of the server's, each period (workershare.py)
        self.share: Callable[[float], int] | None = None
        informer.add_listener(self._changed)

    def start(self, ensure: bool = True) -> None:
        self.informer.start()
        self.rebuild()
        self.borrower = LoopingCall(self.borrow)
        self.borrower.clock = self.reactor
        self.borrower.start(borrowing.PERIOD, now=False).addErrback(
            lambda f: log.failure("priority and fairness seat borrowing", f)
        )
        if ensure:
            self.ensurer = LoopingCall(self.ensure)
            self.ensurer.clock = self.reactor
            self.ensurer.start(ENSURE_INTERVAL, now=True).addErrback(
                lambda f: log.failure("priority and fairness config producer", f)
            )

    def stop(self) -> None:
        self.informer.stop()
        if self.borrower is not None and self.borrower.running:
            self.borrower.stop()
        if self.ensurer is not None and self.ensurer.running:
            self.ensurer.stop()
        if self._pending is not None and self._pending.active():
            self._pending.cancel()

    def ensure(self) -> Any:
        return ensureDeferred(bootstrap.ensure(self.schema_store, self.level_store))

    def _changed(self, key: bytes, old: Obj | None, new: Obj | None) -> None:
        if self._pending is None or not self._pending.active():
            self._pending = self.reactor.callLater(0, self.rebuild)

    def _objects(self, store: Store) -> list[Obj]:
        return list(self.informer.under(store.prefix))

    def rebuild(self) -> None:
        """Levels and classifier from the stored objects."""
        plcs = [o for o in self._objects(self.level_store) if o.get("spec")]
        total = sum(_shares(o["spec"]) for o in plcs) or 1
        levels: dict[str, Level] = {}
        for obj in plcs:
            meta, spec = obj.get("metadata") or {}, obj["spec"]
            name, uid = meta.get("name", ""), meta.get("uid", "")
            nominal = math.ceil(self.server_limit * _shares(spec) / total)
            limits = _bounds(spec, nominal, self.server_limit)
            level = self.levels.get(name)
            queues, hand, length = _queuing(spec)
            if spec.get("type") == "Exempt":
                old = level if level is not None and level.use is not None else None
                level = Level(name, uid, True, None, nominal, limits)
                level.use = old.use if old is not None else SeatUse(self.reactor.seconds)
                level.current = max(limits.min_cl, old.current if old is not None else 0)
            elif level is None or level.queues is None:
                qs = QueueSet(self.reactor, limits.initial, queues, hand, length)
                level = Level(name, uid, False, qs, nominal, limits)
            else:
                level.uid, level.nominal, level.bounds = uid, nominal, limits
                current = min(max(level.queues.limit, limits.min_cl), limits.max_cl)
                level.queues.reconfigure(current, queues, hand, length)
            level.max_seats = level_max_seats(nominal, hand) if queues and not level.exempt else 0
            levels[name] = level
        self.levels = levels
        for level in levels.values():
            timings = LevelTimings(level.name, self.reactor.seconds)
            if level.queues is not None:
                level.queues.timings = timings
            elif level.use is not None:
                level.use.timings = timings
        self._denominators()
        objects = self._objects(self.schema_store)
        self.classifier = Classifier([Schema.from_object(o) for o in objects], set(levels))
        for obj in objects:
            self._sync_dangling(obj, set(levels))
        self._report()
        for listener in self.on_rebuild:
            listener()

    def capacity(self) -> tuple[int, int]:
        """(seats of every level, requests every queuing level's queues hold)."""
        levels = self.levels.values()
        waiting = sum(
            len(lv.queues.queues) * lv.queues.queue_length_limit
            for lv in levels
            if lv.queues is not None
        )
        return sum(lv.nominal for lv in levels), waiting

    def borrow(self) -> None:
        """Every period: the limited levels' seats from their recent demand."""
        for level in self.levels.values():
            if level.queues is not None:
                level.demand.update(*level.queues.demand())
            elif level.use is not None:
                level.demand.update(*level.use.demand())
                level.current = max(level.bounds.min_cl, level.demand.high_watermark)
        limited: dict[str, tuple[Bounds, DemandStats]] = {
            name: (level.bounds, level.demand)
            for name, level in self.levels.items()
            if level.queues is not None
        }
        if self.share is not None:
            self._lend(sum(demand.high_watermark for _, demand in limited.values()))
            # the rebuild moved the levels' bounds to the new share
            limited = {
                name: (self.levels[name].bounds, demand) for name, (_, demand) in limited.items()
            }
        nominal_sum = sum(level.nominal for level in self.levels.values())
        exempt = sum(lv.current for lv in self.levels.values() if lv.queues is None)
        self._borrowed = True
        shares = borrowing.current_limits(nominal_sum, limited, exempt)
        for name, seats in shares.limits.items():
            queues = self.levels[name].queues
            assert queues is not None
            queues.set_limit(seats)
        # kube reports an exempt level's target as the first limited level's (an index
        # it leaves at 0)
        first = next(iter(shares.targets.values()), 0.0)
        for name, level in self.levels.items():
            level.target = shares.targets.get(name, first)
        GAUGES.fair_frac = shares.fair_frac
        self._denominators()
        self._report()

    def _lend(self, demand: float) -> None:
        """This worker's seats for the next period, from its demand and its siblings'."""
        assert self.share is not None
        seats = self.share(demand)
        if seats != self.server_limit:
            self.server_limit = seats
            self.rebuild()  # the levels' nominal seats, then this period's borrowing

    def _denominators(self) -> None:
        """Each level's timing ratio series over its seats now (a level without seats:
        a tenth of the server's, as kube's concurrency denominator)."""
        idle = max(1, borrowing.go_round(self.server_limit / 10))
        for level in self.levels.values():
            timings = level.queues.timings if level.queues is not None else None
            if timings is None and level.use is not None:
                timings = level.use.timings
            if timings is not None:
                timings.limits(level.room, level.limit if level.limit > 0 else idle)

    def _report(self) -> None:
        levels = self.levels
        GAUGES.nominal = {name: lv.nominal for name, lv in levels.items()}
        GAUGES.levels[LOWER] = {name: lv.bounds.min_cl for name, lv in levels.items()}
        GAUGES.levels[UPPER] = {name: lv.bounds.max_cl for name, lv in levels.items()}
        if self._borrowed:  # kube reports demand once it has adjusted the limits
            for key, of in DEMAND_GAUGES:
                GAUGES.levels[key] = {name: of(lv.demand) for name, lv in levels.items()}
            GAUGES.levels[TARGET] = {name: lv.target for name, lv in levels.items()}
        GAUGES.current = {name: lv.limit for name, lv in self.levels.items()}
        GAUGES.clocks = lambda: {name: lv.queues for name, lv in self.levels.items()}

    def _sync_dangling(self, schema: Obj, levels: set[str]) -> None:
        """kube's ``Dangling`` condition: does the referenced level exist?"""
        level = ((schema.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name", "")
        found = level in levels
        want = {
            "type": "Dangling",
            "status": "False" if found else "True",
            "reason": "Found" if found else "NotFound",
            "message": f'This FlowSchema references the PriorityLevelConfiguration object named "{level}" '
            + ("and it exists" if found else "but there is no such object"),
        }
        conditions = (schema.get("status") or {}).get("conditions") or []
        have = next((c for c in conditions if c.get("type") == "Dangling"), None)
        if have is not None and all(have.get(k) == v for k, v in want.items()):
            return
        name = schema["metadata"]["name"]
        # Go's field order: type, status, lastTransitionTime, reason, message.
        want = {
            **dict(list(want.items())[:2]),
            "lastTransitionTime": self.schema_store.now(),
        } | want
        config = {
            "apiVersion": bootstrap.API_VERSION,
            "kind": "FlowSchema",
            "metadata": {"name": name},
            "status": {"conditions": [want]},
        }
        updated = self.schema_store.applier(CONSUMER, config, "status")  # kube's ApplyStatus
        work = ensureDeferred(self.schema_store.update("", name, updated, subresource="status"))
        work.addErrback(lambda f: log.debug("FlowSchema {name} status: {f}", name=name, f=f))
