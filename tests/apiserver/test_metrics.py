"""The text exposition (client_golang's layout) and the storage families."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from twisted.internet.defer import ensureDeferred, succeed

from platform_api.apiserver import metrics
from platform_api.apiserver.metrics import REGISTRY, RawCounter, render, text
from platform_api.apiserver.storagemetrics import StorageCollector, instrument
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.lmdb_store import LMDBStorage, open_environment


def test_text_is_client_golang_layout() -> None:
    registry = CollectorRegistry()
    h = Histogram(
        "x_seconds", "[ALPHA] X.", ["verb", "code"], buckets=(0.005, 1, 1e6), registry=registry
    )
    h.labels(verb="GET", code="200").observe(2)
    Counter("y_total", "[ALPHA] Y.", ["result"], registry=registry)  # no children: left out
    RawCounter("z_attempts", "[ALPHA] Z.", registry=registry).inc()
    assert text(registry).decode() == (
        "# HELP x_seconds [ALPHA] X.\n"
        "# TYPE x_seconds histogram\n"
        'x_seconds_bucket{code="200",verb="GET",le="0.005"} 0\n'
        'x_seconds_bucket{code="200",verb="GET",le="1"} 0\n'
        'x_seconds_bucket{code="200",verb="GET",le="1e+06"} 1\n'
        'x_seconds_bucket{code="200",verb="GET",le="+Inf"} 1\n'
        'x_seconds_sum{code="200",verb="GET"} 2\n'
        'x_seconds_count{code="200",verb="GET"} 1\n'
        "# HELP z_attempts [ALPHA] Z.\n"
        "# TYPE z_attempts counter\n"
        "z_attempts 1\n"
    )


def test_label_values_are_escaped() -> None:
    registry = CollectorRegistry()
    Counter("e_total", "h", ["v"], registry=registry).labels(v='a"b\\c\nd').inc()
    assert 'e_total{v="a\\"b\\\\c\\nd"} 1\n' in text(registry).decode()


def test_render_negotiates_openmetrics() -> None:
    body, content_type = render("application/openmetrics-text;version=1.0.0")
    assert content_type.startswith(b"application/openmetrics-text; version=1.0.0")
    assert body.endswith(b"# EOF\n")
    body, content_type = render("*/*")
    assert content_type == metrics.TEXT_CONTENT_TYPE
    assert b"process_resident_memory_bytes " in body
    assert b"_created" not in body


def _storage(tmp_path: Path) -> LMDBStorage:
    env = open_environment(str(tmp_path / "db"), 64 * 2**20)
    return LMDBStorage(env, lambda work: succeed(work()))


def test_storage_counts_and_times_operations(tmp_path: Path) -> None:
    storage = _storage(tmp_path)
    rt = builtin_scheme().lookup("", "v1", "configmaps")
    assert rt is not None
    sizes: list[tuple[str, int] | None] = [("etcd-0", 20480)]
    collector = StorageCollector(storage, [Store(rt, storage)], lambda: sizes[-1])
    labels = {"group": "", "operation": "create", "resource": "configmaps"}
    created = REGISTRY.get_sample_value("etcd_requests_total", labels) or 0.0
    instrument(storage)
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
    storage.create(b"/core/configmaps/default\x00a", obj)
    assert REGISTRY.get_sample_value("etcd_requests_total", labels) == created + 1
    ensureDeferred(storage.delete(b"/core/configmaps/default\x00a"))
    deleted = {"group": "", "operation": "delete", "resource": "configmaps"}
    assert (REGISTRY.get_sample_value("etcd_requests_total", deleted) or 0) >= 1
    storage.create(b"/core/configmaps/default\x00b", obj)
    families = {f.name: f for f in collector.collect()}
    [legacy] = families["apiserver_storage_objects"].samples
    assert legacy.labels == {"resource": "configmaps"} and legacy.value == 1
    [current] = families["apiserver_resource_objects"].samples
    assert current.labels == {"group": "", "resource": "configmaps"} and current.value == 1
    [size] = families["apiserver_storage_size_bytes"].samples
    assert size.labels == {"storage_cluster_id": "etcd-0"} and size.value == 20480
    sizes.append(None)  # the backend cannot tell now: kube leaves the sample out
    families = {f.name: f for f in collector.collect()}
    assert families["apiserver_storage_size_bytes"].samples == []


def test_reset_drops_labelled_series_and_keeps_the_rest(monkeypatch: Any) -> None:
    """DELETE /metrics: labelled families lose their series (cached children too, so
    the next count lands in a rendered series); a family without labels keeps its value."""
    registry = metrics._Registry()
    monkeypatch.setattr(metrics, "REGISTRY", registry)
    monkeypatch.setattr(metrics, "_CHILDREN", [])
    fast = metrics.ReactorCounter("fast", "doc", ["a"], registry)
    timing = metrics.ReactorHistogram("timing", "doc", ["a"], (1.0,), registry)
    labelled = Counter("labelled", "doc", ["a"], registry=registry)
    plain = Counter("plain", "doc", registry=registry)
    children = metrics.Children(labelled)
    fast.inc("x")
    timing.observe(0.5, "x")
    children("x").inc()
    plain.inc()
    metrics.reset()
    assert text(registry) == b"# HELP plain_total doc\n# TYPE plain_total counter\nplain_total 1\n"
    children("x").inc()
    assert b'labelled_total{a="x"} 1\n' in text(registry)
