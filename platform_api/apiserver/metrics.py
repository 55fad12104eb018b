"""``/metrics``: kube-apiserver's metric families, kept by prometheus-client.

One registry per process, as kube's ``legacyregistry``: modules declare their families
at import with ``registry=REGISTRY`` and kube's names, labels and help texts (with
component-base's ``[ALPHA]``/``[STABLE]`` prefix), so the dashboards written for
kube-apiserver read this server unchanged.  ``render`` answers in Prometheus' text
format as client_golang writes it (labels sorted, ``le`` last, no ``_created``
series, families without samples left out), or OpenMetrics when the scraper asks.
"""

from __future__ import annotations

import bisect
import itertools
import os
import platform
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, ProcessCollector
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics import disable_created_metrics
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as OPENMETRICS
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString


class _Registry(CollectorRegistry):
    """The registry, knowing its collectors: ``DELETE /metrics`` resets them."""

    def __init__(self) -> None:
        super().__init__(auto_describe=True)
        self.collectors: list[Collector] = []

    def register(self, collector: Collector) -> None:
        super().register(collector)
        self.collectors.append(collector)

    def unregister(self, collector: Collector) -> None:
        super().unregister(collector)
        self.collectors.remove(collector)


REGISTRY = _Registry()
# kube's buckets for request and storage latencies (apiserver_request_duration_seconds,
# etcd_request_duration_seconds).
LATENCY_BUCKETS: tuple[float, ...] = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25)
LATENCY_BUCKETS += (1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60)
TEXT_CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
# Go's client has no per-series creation time; prometheus-client adds one unless told not to.
disable_created_metrics()
PROCESS = ProcessCollector(registry=REGISTRY)


_STARTED: dict[int, float] = {}  # by process id: a forked worker started anew


def start_time() -> float:
    """This process's start, as ``process_start_time_seconds`` says (kube's metrics
    handlers also send it as the ``Process-Start-Time-Unix`` header), read once: the
    collector reads four files of /proc each time."""
    pid = os.getpid()
    if pid not in _STARTED:
        samples = [f for f in PROCESS.collect() if f.name == "process_start_time_seconds"]
        _STARTED[pid] = float(samples[0].samples[0].value) if samples else 0.0
    return _STARTED[pid]


BUILD_INFO = Gauge(
    "kubernetes_build_info",
    "[BETA] A metric with a constant '1' value labeled by major, minor, git version, git "
    "commit, git tree state, build date, Go version, and compiler from which Kubernetes was "
    "built, and platform on which it is running.",
    [
        "build_date",
        "compiler",
        "git_commit",
        "git_tree_state",
        "git_version",
        "go_version",
        "major",
        "minor",
        "platform",
    ],
    registry=REGISTRY,
)


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """Go's ``ExponentialBuckets``, multiplied as Go multiplies: its bounds print as
    kube's (``9.999999999999999e-06``, where ``1e-08 * 10**3`` would be ``1e-05``)."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return buckets


class ReactorCounter(Collector):
    """A counter family for the request path: plain floats by label values, no locks.

    prometheus-client's values take a lock per increment and its children cost a lookup
    each; the server updates its hot families (requests, latencies, storage operations)
    and is scraped on one thread, the reactor's, so a dict does (~1 µs a request, not ~20).
    """

    def __init__(
        self,
        name: str,
        doc: str,
        labels: Iterable[str],
        registry: Any,
        raw: bool = False,
        same_as: ReactorCounter | None = None,
    ) -> None:
        self.name, self.doc, self.labels = name, doc, list(labels)
        self.raw = raw  # kube's name has no _total (authentication_attempts): keep it bare
        # ``same_as``: a second name for another family's counts, which always agree.
        self.values: dict[tuple[str, ...], float] = same_as.values if same_as else {}
        registry.register(self)

    def inc(self, *values: str) -> None:
        self.values[values] = self.values.get(values, 0.0) + 1.0

    def add(self, amount: float, *values: str) -> None:
        self.values[values] = self.values.get(values, 0.0) + amount

    def clear(self) -> None:
        self.values.clear()

    def _family(self) -> Metric:
        if self.raw:
            return Metric(self.name, self.doc, "counter")
        return CounterMetricFamily(self.name, self.doc, labels=self.labels)

    def describe(self) -> Iterator[Metric]:
        yield self._family()

    def collect(self) -> Iterator[Metric]:
        family = self._family()
        for values, value in list(self.values.items()):
            if self.raw:
                family.add_sample(self.name, dict(zip(self.labels, values, strict=True)), value)
            else:
                assert isinstance(family, CounterMetricFamily)
                family.add_metric(values, value)
        yield family


def _nothing() -> None:
    return None


class ReactorHistogram(Collector):
    """A histogram family updated from the reactor thread only (see ReactorCounter)."""

    def __init__(
        self,
        name: str,
        doc: str,
        labels: Iterable[str],
        buckets: Iterable[float],
        registry: Any,
    ) -> None:
        self.name, self.doc, self.labels = name, doc, list(labels)
        self.bounds = [float(b) for b in buckets]
        self._le = [floatToGoString(b) for b in self.bounds] + ["+Inf"]
        # label values -> per-bucket counts (the last one +Inf), then the sum
        self.values: dict[tuple[str, ...], list[float]] = {}
        # Counts kept elsewhere until the family is read (or reset): admission's idle
        # plugins (admission/plugintimes.py).
        self.before_collect: Callable[[], None] = _nothing
        self.on_clear: Callable[[], None] = _nothing
        registry.register(self)

    def observe(self, amount: float, *values: str) -> None:
        row = self.row(*values)
        row[bisect.bisect_left(self.bounds, amount)] += 1
        row[-1] += amount

    def row(self, *values: str) -> list[float]:
        """The series' bucket counts (then its sum), made on first use: an observation
        below the first bound is ``row(...)[0] += 1``."""
        row = self.values.get(values)
        if row is None:
            row = self.values[values] = [0.0] * (len(self.bounds) + 2)
        return row

    def clear(self) -> None:
        self.on_clear()
        self.values.clear()

    def describe(self) -> Iterator[Metric]:
        yield HistogramMetricFamily(self.name, self.doc, labels=self.labels)

    def collect(self) -> Iterator[Metric]:
        self.before_collect()
        family = HistogramMetricFamily(self.name, self.doc, labels=self.labels)
        for values, row in list(self.values.items()):
            counts = list(itertools.accumulate(row[:-1]))
            family.add_metric(list(values), list(zip(self._le, counts, strict=True)), row[-1])
        yield family


class VecGauge(Collector):
    """A gauge kube declares as a GaugeVec without labels: no sample until first set,
    and cleared by a reset (``DELETE /metrics``) as a vector's series are."""

    def __init__(self, name: str, doc: str, registry: Any) -> None:
        self.name, self.doc = name, doc
        self.value: float | None = None
        registry.register(self)

    def set(self, value: float) -> None:
        self.value = value

    def clear(self) -> None:
        self.value = None

    def describe(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(self.name, self.doc)

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(self.name, self.doc)
        if self.value is not None:
            family.add_metric([], self.value)
        yield family


class RawCounter(Counter):
    """A counter whose kube name has no ``_total`` (``authentication_attempts``):
    prometheus-client would append one; kube's dashboards query the bare name."""

    def _child_samples(self) -> Iterable[Sample]:
        return (Sample("", {}, self._value.get(), None, None),)


class Children:
    """A family's label children by value tuple (declared label order).

    prometheus-client's ``labels()`` costs ~5 µs a call, a dozen calls a request; a dict
    lookup costs ~0.1 µs.  Only for families whose children are never removed.
    """

    def __init__(self, family: Any) -> None:
        self.family = family
        self.cache: dict[tuple[str, ...], Any] = {}
        _CHILDREN.append(self)

    def __call__(self, *values: str) -> Any:
        child = self.cache.get(values)
        if child is None:
            child = self.cache[values] = self.family.labels(*values)
        return child


_CHILDREN: list[Children] = []


def reset() -> None:
    """kube's ``legacyregistry.Reset`` (``DELETE /metrics``): every family with labels
    loses its series, which come back when next counted; families without labels and
    those computed when scraped (process, storage objects) stay."""
    for children in _CHILDREN:
        children.cache.clear()
    for collector in REGISTRY.collectors:
        clear = getattr(collector, "clear", None)
        if clear is not None:
            clear()


def record_build_info(info: dict[str, str]) -> None:
    """``kubernetes_build_info`` from the server's /version document."""
    machine = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    BUILD_INFO.labels(
        build_date=info["buildDate"],
        compiler=info["compiler"],
        git_commit=info["gitCommit"],
        git_tree_state=info["gitTreeState"],
        git_version=info["gitVersion"],
        go_version=info["goVersion"],
        major=info["major"],
        minor=info["minor"],
        platform=info.get("platform") or f"{sys.platform}/{machine}",
    ).set(1)


def render(accept: str, source: Collector = REGISTRY) -> tuple[bytes, bytes]:
    """The samples of ``source`` (this process's registry, or every worker's merged:
    workermetrics.py) and their content type, per the scraper's Accept header."""
    encoder, content_type = choose_encoder(accept)
    if content_type.startswith(OPENMETRICS.split(";")[0]):
        return encoder(_OpenMetricsView(source)), content_type.encode()
    return text(source), TEXT_CONTENT_TYPE


def text(registry: Collector) -> bytes:
    """Prometheus text format 0.0.4 with client_golang's layout: families sorted by
    name, as its Gather sorts them."""
    named = []
    for family in registry.collect():
        if family.samples:  # a counter's name is ``x_total``, or a RawCounter's bare name
            kind = family.type
            named.append((family.samples[0].name if kind == "counter" else family.name, family))
    out: list[str] = []
    for name, family in sorted(named, key=lambda pair: pair[0]):
        samples = family.samples
        kind = "untyped" if family.type == "unknown" else family.type
        doc = family.documentation.replace("\\", r"\\").replace("\n", r"\n")
        out.append(f"# HELP {name} {doc}\n# TYPE {name} {kind}\n")
        if kind == "histogram":
            samples = _sum_before_count(samples)
        out.extend(_line(s) for s in samples)
    return "".join(out).encode()


def _sum_before_count(samples: list[Sample]) -> list[Sample]:
    """Go writes a histogram's ``_sum`` before its ``_count``; prometheus-client after."""
    ordered = list(samples)
    for i in range(len(ordered) - 1):
        if ordered[i].name.endswith("_count") and ordered[i + 1].name.endswith("_sum"):
            ordered[i], ordered[i + 1] = ordered[i + 1], ordered[i]
    return ordered


def _line(sample: Sample) -> str:
    labels = sample.labels
    if not labels:
        return f"{sample.name} {_go_float(sample.value)}\n"
    keys = sorted(k for k in labels if k not in ("le", "quantile"))
    pairs = [f'{k}="{_escape(labels[k])}"' for k in keys]
    pairs += [f'{k}="{_go_float(labels[k])}"' for k in ("le", "quantile") if k in labels]
    return f"{sample.name}{{{','.join(pairs)}}} {_go_float(sample.value)}\n"


def _go_float(value: float | str) -> str:
    """Go's ``FormatFloat(v, 'g', -1, 64)``: ``1``, ``0.005``, ``1e+06``, ``+Inf``."""
    text = floatToGoString(value)
    return text[:-2] if text.endswith(".0") else text


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


class _OpenMetricsView(Collector):
    """A source for the OpenMetrics encoder, whose counters must end in ``_total``."""

    def __init__(self, source: Collector) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        for family in self.source.collect():
            if family.type == "counter":
                family.samples = [
                    s if s.name.endswith("_total") else s._replace(name=s.name + "_total")
                    for s in family.samples
                ]
            yield family
