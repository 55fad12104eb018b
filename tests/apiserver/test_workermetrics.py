"""Merging the workers' samples for one /metrics answer, and the exchange that gathers
them (two exchanges wired to each other, a fake clock)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from twisted.internet.defer import ensureDeferred
from twisted.internet.task import Clock

from platform_api.apiserver.metrics import text
from platform_api.apiserver.workermetrics import (
    ANSWER_WITHIN,
    MergedMetrics,
    MetricsExchange,
    snapshot,
)


def _registry(requests: int, inflight: int, objects: int, latency: float) -> CollectorRegistry:
    registry = CollectorRegistry()
    counter = Counter("demo_requests", "Requests.", ["verb"], registry=registry)
    counter.labels("GET").inc(requests)
    Gauge("demo_inflight", "In flight.", registry=registry).set(inflight)
    shared = Gauge("apiserver_storage_objects", "Objects.", ["resource"], registry=registry)
    shared.labels("pods").set(objects)
    histogram = Histogram("demo_seconds", "Latency.", buckets=(0.1, 1.0), registry=registry)
    histogram.observe(latency)
    return registry


def test_counters_histograms_and_work_in_progress_add_up_shared_gauges_count_once() -> None:
    local = _registry(requests=3, inflight=1, objects=7, latency=0.05)
    sibling = snapshot(_registry(requests=4, inflight=2, objects=7, latency=0.5))
    merged = text(MergedMetrics([sibling], local=local)).decode()
    assert merged == (
        "# HELP apiserver_storage_objects Objects.\n"
        "# TYPE apiserver_storage_objects gauge\n"
        'apiserver_storage_objects{resource="pods"} 7\n'
        "# HELP demo_inflight In flight.\n"
        "# TYPE demo_inflight gauge\n"
        "demo_inflight 3\n"
        "# HELP demo_requests_total Requests.\n"
        "# TYPE demo_requests_total counter\n"
        'demo_requests_total{verb="GET"} 7\n'
        "# HELP demo_seconds Latency.\n"
        "# TYPE demo_seconds histogram\n"
        'demo_seconds_bucket{le="0.1"} 1\n'
        'demo_seconds_bucket{le="1"} 2\n'
        'demo_seconds_bucket{le="+Inf"} 2\n'
        "demo_seconds_sum 0.55\n"
        "demo_seconds_count 2\n"
    )


def _clocks(fair: float, r: float) -> CollectorRegistry:
    registry = CollectorRegistry()
    Gauge("apiserver_flowcontrol_seat_fair_frac", "Fair.", registry=registry).set(fair)
    level = Gauge("apiserver_flowcontrol_current_r", "R.", ["priority_level"], registry=registry)
    level.labels("tiny").set(r)
    return registry


def test_each_workers_fair_proportion_and_clocks_are_not_added_the_largest_stands() -> None:
    merged = text(MergedMetrics([snapshot(_clocks(2.5, 7.0))], local=_clocks(2.25, 9.5)))
    assert "apiserver_flowcontrol_seat_fair_frac 2.5\n" in merged.decode()
    assert 'apiserver_flowcontrol_current_r{priority_level="tiny"} 9.5\n' in merged.decode()


def test_the_replicas_watch_cache_capacity_is_the_largest() -> None:
    """Under --workers on etcd each worker is a replica with its own history of each
    resource: its size is reported as kube's one cacher reports it, not added up."""

    def capacity(events: int) -> CollectorRegistry:
        registry = CollectorRegistry()
        labels = ["group", "resource"]
        gauge = Gauge("watch_cache_capacity", "Cap.", labels, registry=registry)
        gauge.labels("", "configmaps").set(events)
        return registry

    merged = text(MergedMetrics([snapshot(capacity(200))], local=capacity(100))).decode()
    assert 'watch_cache_capacity{group="",resource="configmaps"} 200\n' in merged


def test_series_only_a_sibling_has_are_kept() -> None:
    local = CollectorRegistry()
    Counter("demo_requests", "Requests.", ["verb"], registry=local).labels("GET").inc()
    other = CollectorRegistry()
    Counter("demo_requests", "Requests.", ["verb"], registry=other).labels("PUT").inc(2)
    merged = text(MergedMetrics([snapshot(other)], local=local)).decode()
    assert 'demo_requests_total{verb="GET"} 1\ndemo_requests_total{verb="PUT"} 2\n' in merged


class Pair:
    """Worker 0 and worker 1, their datagrams delivered at once unless cut."""

    def __init__(self, data_dir: Path) -> None:
        self.clock = Clock()
        self.cut = False
        self.sent: list[bytes] = []
        self.zero = MetricsExchange(0, 2, str(data_dir), self.clock, self._sender(0))
        self.one = MetricsExchange(1, 2, str(data_dir), self.clock, self._sender(1))

    def _sender(self, source: int) -> Any:
        def send(data: bytes, address: Any) -> None:
            self.sent.append(data)
            if not self.cut:
                target = self.one if source == 0 else self.zero
                target.received(data, f"worker-{source}")

        return send


def test_a_scrape_asks_its_sibling_and_merges_its_snapshot(tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    d = ensureDeferred(pair.zero.gather())
    merged = d.result  # answered at once: no waiting on the clock
    assert isinstance(merged, MergedMetrics) and len(merged.siblings) == 1
    assert pair.sent[0].startswith(b"?") and pair.sent[1].startswith(b"=1:")
    assert (tmp_path / "run" / "metrics" / "worker-1.json").exists()
    assert pair.clock.getDelayedCalls() == []  # the deadline was cancelled


def test_a_silent_sibling_contributes_its_last_snapshot_after_the_deadline(
    tmp_path: Path,
) -> None:
    pair = Pair(tmp_path)
    d = ensureDeferred(pair.zero.gather())
    first = d.result
    pair.cut = True  # worker 1 restarting: no answer this time
    d = ensureDeferred(pair.zero.gather())
    assert not d.called
    pair.clock.advance(ANSWER_WITHIN)
    assert d.result.siblings == first.siblings  # the snapshot it wrote before


def test_a_sibling_that_never_answered_adds_nothing(tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    pair.cut = True
    d = ensureDeferred(pair.zero.gather())
    pair.clock.advance(ANSWER_WITHIN)
    assert d.result.siblings == []


@pytest.mark.parametrize("datagram", [b"=x:token", b"=1:unknown-token", b"?", b"\x00junk"])
def test_stray_datagrams_change_nothing(tmp_path: Path, datagram: bytes) -> None:
    pair = Pair(tmp_path)
    pair.zero.received(datagram, "somewhere")  # no exception, no pending scrape disturbed
    assert pair.clock.getDelayedCalls() == []


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b'{"a": 1}',
        b'[["x", "help", "counter", "", [["x_total", {}, "seven"]]]]',
        b'[["x", "help", "nonsense", "", []]]',
        b'[["x", "help", "gauge", "", [["x", {"label": 1}, 1]]]]',
        b"[[1, 2]]",
    ],
)
def test_a_malformed_sibling_snapshot_is_left_out(tmp_path: Path, content: bytes) -> None:
    pair = Pair(tmp_path)
    pair.cut = True  # the sibling does not answer: its file is what there is
    folder = tmp_path / "run" / "metrics"
    (folder / "worker-1.json").write_bytes(content)
    d = ensureDeferred(pair.zero.gather())
    pair.clock.advance(ANSWER_WITHIN)
    assert d.result.siblings == []
    text(d.result)  # the scrape is answered with this worker's own samples
