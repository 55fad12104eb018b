"""``/metrics`` under ``--workers N``: one scrape answers for the whole server.

A scrape reaches whichever worker took the connection, and each worker counts only its
own requests; served as they are, a counter would jump between two workers' values from
one scrape to the next, and every ``rate()`` over it would be wrong.  So the scraped
worker asks its siblings (a datagram on the wake sockets, workerslot.py) to write their
samples to ``<data-dir>/run/metrics/worker-<i>.json``; each answers once it has, and the
scraped worker merges them with its own:

- counters and histograms add up, and so do gauges of work in progress (in-flight
  requests, watchers, seats, memory);
- gauges every worker reports alike (object counts, database size, build and feature
  info, reload times) are taken once, and the process start time is the earliest;
- gauges of each worker's own priority and fairness arithmetic (the fair proportion of
  seats, the fair-queuing clocks R and S), which mean nothing added up, and each etcd
  replica's history size per resource (kube's one cacher has one): the largest.

A sibling that has not answered within half a second (restarting, say) contributes the
snapshot it wrote last, so counters do not drop for a scrape and come back.
``DELETE /metrics`` resets the worker it reached and, by datagram, every sibling
(``DELETE /metrics/slis`` their health-check SLIs); a check's last result, taken from
every worker, is the worst of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import orjson
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from platform_api.apiserver import slis
from platform_api.apiserver.metrics import REGISTRY, reset
from platform_api.privatefiles import private_dir

log = Logger()
SNAPSHOT_DIR = os.path.join("run", "metrics")
ANSWER_WITHIN = 0.5  # seconds a scrape waits for its siblings
ASK, ANSWER = b"?", b"="  # first byte of a request and of its answer; then the token
RESET = b"~"  # DELETE /metrics on a sibling: reset this worker's too
SLIS = b"s"  # after RESET: DELETE /metrics/slis, the health-check SLIs only
# Gauges each worker reads from what they share, or that are flags: counted once.
SHARED_GAUGES = frozenset(
    {
        "apiserver_storage_objects",
        "apiserver_resource_objects",
        "apiserver_storage_size_bytes",
        "apiserver_storage_db_total_size_in_bytes",
        "apiserver_watch_cache_resource_version",
        "apiserver_requested_deprecated_apis",
        "apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds",
        "apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds",
        "kubernetes_build_info",
        "kubernetes_feature_enabled",
        "process_max_fds",
    }
)
EARLIEST = frozenset({"process_start_time_seconds"})
WORST = frozenset({"kubernetes_healthcheck"})  # a check failing on any worker reads 0
LARGEST = frozenset(
    "apiserver_flowcontrol_" + name
    for name in (
        "seat_fair_frac",
        "current_r",
        "dispatch_r",
        "latest_s",
        "next_s_bounds",
        "next_discounted_s_bounds",
    )
) | {"watch_cache_capacity"}  # each replica's own history of the resource

Snapshot = list[list[Any]]  # [name, help, type, unit, [[sample name, labels, value], ...]]


def snapshot(source: Collector = REGISTRY) -> Snapshot:
    """This process's samples in a form orjson writes and the merge reads back."""
    return [
        [f.name, f.documentation, f.type, f.unit, [[s.name, s.labels, s.value] for s in f.samples]]
        for f in source.collect()
    ]


class MergedMetrics(Collector):
    """The local registry's families with the siblings' snapshots folded in."""

    def __init__(self, siblings: list[Snapshot], local: Collector = REGISTRY) -> None:
        self.local, self.siblings = local, siblings

    def collect(self) -> Iterator[Metric]:
        families: dict[str, tuple[Metric, dict[Any, int]]] = {}
        for snap in [snapshot(self.local), *self.siblings]:
            for name, doc, kind, unit, samples in snap:
                entry = families.get(name)
                if entry is None:
                    entry = families[name] = (Metric(name, doc, kind, unit), {})
                _fold(entry[0], entry[1], samples, _combiner(name, kind))
        for family, _ in families.values():
            yield family


def _combiner(name: str, kind: str) -> Callable[[float, float], float]:
    if kind == "gauge" and (name in SHARED_GAUGES or name in LARGEST):
        return max
    if name in EARLIEST or name in WORST:
        return min
    return _add


def _add(a: float, b: float) -> float:
    return a + b


def _fold(
    family: Metric,
    index: dict[Any, int],
    samples: list[list[Any]],
    combine: Callable[[float, float], float],
) -> None:
    for name, labels, value in samples:
        key = (name, tuple(sorted(labels.items())))
        at = index.get(key)
        if at is None:
            index[key] = len(family.samples)
            family.samples.append(Sample(name, labels, value))
        else:
            old = family.samples[at]
            family.samples[at] = old._replace(value=combine(old.value, value))


class MetricsExchange:
    """One worker's part: answer siblings' requests, and gather theirs for a scrape.

    ``send(data, address)`` writes a datagram (to every sibling when ``address`` is
    None); the wake protocol hands this object the datagrams that start with ASK, ANSWER or
    RESET.
    """

    def __init__(
        self,
        index: int,
        count: int,
        data_dir: str,
        reactor: IReactorTime,
        send: Callable[[bytes, Any], None],
    ) -> None:
        self.index, self.count = index, count
        self.folder = os.path.join(data_dir, SNAPSHOT_DIR)
        private_dir(self.folder)
        self.reactor = reactor
        self.send = send
        self._waiting: dict[bytes, tuple[Deferred[None], set[int]]] = {}

    def path(self, index: int) -> str:
        return os.path.join(self.folder, f"worker-{index}.json")

    def received(self, datagram: bytes, address: Any) -> None:
        kind, rest = datagram[:1], datagram[1:]
        if kind == ASK:
            self._write_snapshot()
            self.send(ANSWER + str(self.index).encode() + b":" + rest, address)
        elif kind == RESET:
            (slis.SLIS.reset if rest == SLIS else reset)()
        elif kind == ANSWER:
            sender, _, token = rest.partition(b":")
            waiting = self._waiting.get(token)
            if waiting is not None and sender.isdigit():
                waiting[1].discard(int(sender))
                if not waiting[1]:
                    self._done(token)

    def reset_siblings(self, slis_only: bool = False) -> None:
        """Every sibling resets its metrics (or its SLIs), as the scraped worker did."""
        self.send(RESET + SLIS if slis_only else RESET, None)

    def _write_snapshot(self) -> None:
        path = self.path(self.index)
        temporary = f"{path}.{os.getpid()}.tmp"
        try:
            with open(temporary, "wb") as f:
                f.write(orjson.dumps(snapshot()))
            os.replace(temporary, path)
        except OSError as e:
            log.warn("could not write this worker's metrics for a sibling: {e}", e=e)

    async def gather(self) -> MergedMetrics:
        """Every worker's samples merged, for the scrape this worker is answering."""
        token = os.urandom(8).hex().encode()
        siblings = {i for i in range(self.count) if i != self.index}
        answered: Deferred[None] = Deferred()
        self._waiting[token] = (answered, set(siblings))
        timer = self.reactor.callLater(ANSWER_WITHIN, self._done, token)
        self.send(ASK + token, None)
        await answered
        if timer.active():
            timer.cancel()
        return MergedMetrics([s for s in map(self._read, sorted(siblings)) if s is not None])

    def _done(self, token: bytes) -> None:
        waiting = self._waiting.pop(token, None)
        if waiting is not None:
            waiting[0].callback(None)

    def _read(self, index: int) -> Snapshot | None:
        try:
            with open(self.path(index), "rb") as f:
                value = orjson.loads(f.read())
        except (OSError, orjson.JSONDecodeError):
            return None  # never answered yet: nothing to add
        if not _well_formed(value):
            log.warn("ignoring worker {i}'s malformed metrics snapshot", i=index)
            return None
        return value


_KINDS = frozenset({"counter", "gauge", "histogram", "summary", "untyped", "unknown", "info"})


def _well_formed(snap: Any) -> bool:
    """What ``snapshot`` writes: a file that is anything else is left out of the merge
    rather than failing the scrape."""
    if not isinstance(snap, list):
        return False
    for family in snap:
        if not (isinstance(family, list) and len(family) == 5):
            return False
        name, doc, kind, unit, samples = family
        if not (isinstance(name, str) and isinstance(doc, str) and isinstance(unit, str)):
            return False
        if kind not in _KINDS or not isinstance(samples, list):
            return False
        for sample in samples:
            if not (isinstance(sample, list) and len(sample) == 3):
                return False
            if not (isinstance(sample[0], str) and isinstance(sample[1], dict)):
                return False
            if not isinstance(sample[2], int | float) or isinstance(sample[2], bool):
                return False
            if not all(isinstance(v, str) for v in sample[1].values()):
                return False
    return True
