"""API Priority and Fairness (``--enable-priority-and-fairness``, on by default).

``limiter`` gives the filter that stands in front of authorization: the priority and
fairness filter, or kube's plain max-in-flight limiter when APF is off.

The in-flight flags budget the server, not one process: with ``--workers N`` each worker
limits itself to its share (rounded up), so the N of them together hold what one
kube-apiserver given the same flags would.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.interfaces import IReactorTime

from platform_api.apiserver.flowcontrol.config import FlowControlConfig
from platform_api.apiserver.flowcontrol.filter import UPSTREAM_HEADERS, PriorityAndFairness
from platform_api.apiserver.inflight import InflightLimiter
from platform_api.controllers.informer import Informer
from platform_api.registry.flowcontrol_bootstrap import GROUP
from platform_api.registry.store import Store
from platform_api.storage.interface import Storage
from platform_api.storage.watch import WatchHub


def limiter(
    cfg: Any,
    stores: dict[tuple[str, str, str], Store],
    storage: Storage,
    hub: WatchHub,
    reactor: IReactorTime,
    loops: list[Any],
) -> InflightLimiter:
    """The filter for ``cfg`` (a ServerConfig); started here, its timer joins ``loops``."""
    readonly, mutating = worker_share(cfg)
    schemas = stores.get((GROUP, "v1", "flowschemas"))
    levels = stores.get((GROUP, "v1", "prioritylevelconfigurations"))
    if not cfg.enable_priority_and_fairness or schemas is None or levels is None:
        return InflightLimiter(readonly, mutating)
    informer = Informer(storage, hub, (schemas.prefix, levels.prefix))
    config = FlowControlConfig(schemas, levels, informer, reactor, readonly + mutating)
    config.start()
    loops.extend(loop for loop in (config.ensurer, config.borrower) if loop is not None)
    if cfg.serve_upstream_groups:
        return PriorityAndFairness(config, reactor, cfg.request_timeout, UPSTREAM_HEADERS)
    return PriorityAndFairness(config, reactor, cfg.request_timeout)


def worker_share(cfg: Any) -> tuple[int, int]:
    """This worker's (read-only, mutating) seats of the flags' server-wide budget; 0
    (no limit, without APF) stays 0."""
    workers = max(1, cfg.workers)
    return (
        -(-cfg.max_requests_inflight // workers),
        -(-cfg.max_mutating_requests_inflight // workers),
    )
