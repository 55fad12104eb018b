"""API Priority and Fairness (``--enable-priority-and-fairness``, on by default).

``limiter`` gives the filter that stands in front of authorization: the priority and
fairness filter, or kube's plain max-in-flight limiter when APF is off.

The in-flight flags budget the server, not one process: with ``--workers N`` each worker
limits itself to its share (rounded up), so the N of them together hold what one
kube-apiserver given the same flags would.  With priority and fairness the shares follow
the workers' demand, period by period (workershare.py).
"""

from __future__ import annotations

import os
from typing import Any

from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall

from platform_api.apiserver.flowcontrol.borrowing import PERIOD
from platform_api.apiserver.flowcontrol.config import FlowControlConfig
from platform_api.apiserver.flowcontrol.estimate import ObjectStats, WatchCounts, WorkEstimator
from platform_api.apiserver.flowcontrol.filter import UPSTREAM_HEADERS, PriorityAndFairness
from platform_api.apiserver.flowcontrol.workershare import WorkerShare
from platform_api.apiserver.inflight import InflightLimiter
from platform_api.apiserver.workerslot import WorkerSlot
from platform_api.controllers.informer import Informer
from platform_api.registry.flowcontrol_bootstrap import GROUP
from platform_api.registry.store import Store
from platform_api.storage.interface import Storage
from platform_api.storage.watch import WatchHub
from platform_api.timers import TimerTime


def limiter(
    cfg: Any,
    stores: dict[tuple[str, str, str], Store],
    storage: Storage,
    hub: WatchHub,
    reactor: IReactorTime,
    loops: list[Any],
    slot: WorkerSlot | None = None,
) -> InflightLimiter:
    """The filter for ``cfg`` (a ServerConfig); started here, its timer joins ``loops``.
    ``slot``: this worker's (workerslot.py), under ``--workers``."""
    readonly, mutating = worker_share(cfg)
    schemas = stores.get((GROUP, "v1", "flowschemas"))
    levels = stores.get((GROUP, "v1", "prioritylevelconfigurations"))
    if not cfg.enable_priority_and_fairness or schemas is None or levels is None:
        return InflightLimiter(readonly, mutating)
    informer = Informer(storage, hub, (schemas.prefix, levels.prefix))
    clock = TimerTime(reactor)  # queues, seats and waits: on the timers' clock
    config = FlowControlConfig(schemas, levels, informer, clock, readonly + mutating)
    if slot is not None and slot.count > 1:
        total = cfg.max_requests_inflight + cfg.max_mutating_requests_inflight
        folder = os.path.join(cfg.data_dir, "run", "apf")
        share = WorkerShare(folder, slot.index, slot.count, total, reactor.seconds, PERIOD)
        config.share = share.seats
    config.start()
    loops.extend(loop for loop in (config.ensurer, config.borrower) if loop is not None)
    stats = _counted(storage, stores, reactor, loops, cfg.count_poll_period)
    estimator = WorkEstimator(stats, WatchCounts())
    headers = UPSTREAM_HEADERS if cfg.serve_upstream_groups else None
    return PriorityAndFairness(config, clock, cfg.request_timeout, estimator, headers)


def _counted(
    storage: Storage,
    stores: dict[tuple[str, str, str], Store],
    reactor: IReactorTime,
    loops: list[Any],
    period: float,
) -> ObjectStats:
    """The object counts the estimator reads, refreshed every ``period`` from the first
    reactor turn on (counting every resource does not hold up the server's start); none
    with ``period`` 0, as kube's (lists then take one seat)."""
    stats = ObjectStats(storage, stores.values, reactor.seconds)  # a live view: CRDs come and go
    if period <= 0:
        return stats
    loop = LoopingCall(stats.refresh)
    loop.clock = reactor
    loop.start(period, now=False)
    reactor.callLater(0, stats.refresh)
    loops.append(loop)
    return stats


def worker_share(cfg: Any) -> tuple[int, int]:
    """This worker's (read-only, mutating) seats of the flags' server-wide budget; 0
    (no limit, without APF) stays 0."""
    workers = max(1, cfg.workers)
    return (
        -(-cfg.max_requests_inflight // workers),
        -(-cfg.max_mutating_requests_inflight // workers),
    )
