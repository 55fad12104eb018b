"""``/metrics/slis``: component-base's health-check SLIs, and what each metrics path lists.

kube records a check's result each time ``/healthz``, ``/livez`` or ``/readyz`` runs it
(one check's own path, ``/livez/ping``, records nothing): ``kubernetes_healthcheck``, the
last result (1 success, 0 error), and ``kubernetes_healthchecks_total`` by result.  Its
SLI registry is its own: ``/metrics`` does not list these families, and ``/metrics/slis``
lists only them and the process start time (with component-base's ``[ALPHA]`` help).
Here they live in the one registry, so ``--workers`` merges them with the rest
(workermetrics.py), and each path takes its part of it (``for_path``).  ``DELETE
/metrics`` leaves them; ``DELETE /metrics/slis`` resets only them, as kube's two
registries reset apart.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from platform_api.apiserver.metrics import REGISTRY

GAUGE = "kubernetes_healthcheck"
COUNTER = "kubernetes_healthchecks_total"
START = "process_start_time_seconds"
START_HELP = "[ALPHA] Start time of the process since unix epoch in seconds."


class HealthCheckSLIs(Collector):
    """The two families, by check name and endpoint (``type``); updated on the reactor."""

    def __init__(self) -> None:
        self.last: dict[tuple[str, str], float] = {}
        self.counts: dict[tuple[str, str, str], float] = {}

    def observe(self, name: str, endpoint: str, healthy: bool) -> None:
        self.last[(name, endpoint)] = 1.0 if healthy else 0.0
        key = (name, "success" if healthy else "error", endpoint)
        self.counts[key] = self.counts.get(key, 0.0) + 1.0

    def reset(self) -> None:
        self.last.clear()
        self.counts.clear()

    def describe(self) -> Iterator[Metric]:
        return self.collect()

    def collect(self) -> Iterator[Metric]:
        gauge = GaugeMetricFamily(
            GAUGE,
            "[STABLE] This metric records the result of a single healthcheck.",
            labels=["name", "type"],
        )
        for labels, value in sorted(self.last.items()):
            gauge.add_metric(labels, value)
        yield gauge
        counter = CounterMetricFamily(
            "kubernetes_healthchecks",
            "[STABLE] This metric records the results of all healthcheck.",
            labels=["name", "status", "type"],
        )
        for labels3, value in sorted(self.counts.items()):
            counter.add_metric(labels3, value)
        yield counter


SLIS = HealthCheckSLIs()
REGISTRY.register(SLIS)
_OWN = frozenset({GAUGE, "kubernetes_healthchecks"})  # (a counter family's name: no _total)


class _Part(Collector):
    """The families of ``source`` one metrics path lists."""

    def __init__(self, source: Collector, slis: bool) -> None:
        self.source, self.slis = source, slis

    def collect(self) -> Iterator[Metric]:
        for family in self.source.collect():
            if not self.slis:
                if family.name not in _OWN:
                    yield family
            elif family.name in _OWN:
                yield family
            elif family.name == START:
                start = Metric(START, START_HELP, family.type, family.unit)
                start.samples = family.samples
                yield start


def for_path(source: Collector, slis: bool) -> Collector:
    """What ``/metrics/slis`` (``slis``) or ``/metrics`` lists of ``source``."""
    return _Part(source, slis)
