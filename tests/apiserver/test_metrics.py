"""The text exposition (client_golang's layout) and the storage families."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram
from twisted.internet.defer import ensureDeferred, fail, succeed
from twisted.internet.task import Clock
from twisted.python.failure import Failure

from platform_api.apiserver import metrics
from platform_api.apiserver.metrics import REGISTRY, RawCounter, render, text
from platform_api.apiserver.storagemetrics import StorageCollector, instrument
from platform_api.apiserver.watchcachemetrics import (
    EtcdCacheCollector,
    EventCounter,
    RevisionCollector,
)
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.etcd.cache import WatchCache
from platform_api.storage.interface import (
    ADDED,
    UNREACHABLE,
    Event,
    ListOptions,
    ListResult,
    StorageError,
    Stored,
)
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.watch import WatchHub


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
    storage.create(b"/core/configmaps/default/a", obj)
    assert REGISTRY.get_sample_value("etcd_requests_total", labels) == created + 1
    ensureDeferred(storage.delete(b"/core/configmaps/default/a"))
    deleted = {"group": "", "operation": "delete", "resource": "configmaps"}
    assert (REGISTRY.get_sample_value("etcd_requests_total", deleted) or 0) >= 1
    storage.create(b"/core/configmaps/default/b", obj)
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


def test_only_the_databases_failures_count_as_failed_requests(tmp_path: Path) -> None:
    """kube's ``etcd_request_errors_total``: its etcd3 store records a request before it
    makes an absent key or a lost compare its error, so those count as requests only;
    an error of the database itself (unreachable, a compacted revision) as failed."""
    storage: Any = _storage(tmp_path)
    storage.get_list_through = lambda prefix, options: fail(StorageError(UNREACHABLE, prefix))
    instrument(storage)

    def counts() -> list[tuple[float, float]]:
        return [
            (
                _sample("etcd_requests_total", **labels),
                _sample("etcd_request_errors_total", **labels),
            )
            for labels in (
                {"group": "", "operation": operation, "resource": "configmaps"}
                for operation in ("get", "list")
            )
        ]

    before = counts()
    with pytest.raises(StorageError):
        storage.get(b"/core/configmaps/default/absent")
    errors: list[Failure] = []
    storage.get_list_through(b"/core/configmaps/", ListOptions()).addErrback(errors.append)
    assert [e.value.code for e in errors] == [UNREACHABLE]
    after = counts()
    assert [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before, strict=True)] == [
        (1, 0),  # the get of an absent key
        (1, 1),  # the list etcd could not answer
    ]


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _list_counts(family: str, **labels: str) -> tuple[float, ...]:
    """A list family's total, fetched, evaluated and returned counts (0 where kube has none)."""
    by_object = {k: v for k, v in labels.items() if k != "index"}
    return (
        _sample(f"apiserver_{family}_list_total", **labels),
        _sample(f"apiserver_{family}_list_fetched_objects_total", **labels),
        _sample(f"apiserver_{family}_list_evaluated_objects_total", **by_object),
        _sample(f"apiserver_{family}_list_returned_objects_total", **by_object),
    )


def test_lists_from_storage_count_fetched_tested_and_returned(tmp_path: Path) -> None:
    storage = _storage(tmp_path)
    instrument(storage)
    for name in ("a", "b", "c"):
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        storage.create(f"/core/configmaps/default/{name}".encode(), obj)
    before = _list_counts("storage", group="", resource="configmaps")
    prefix = b"/core/configmaps/"
    storage.get_list(prefix, ListOptions())
    picked = ListOptions(predicate=lambda obj: obj["metadata"]["name"] == "b")
    assert len(storage.get_list(prefix, picked).items) == 1
    after = _list_counts("storage", group="", resource="configmaps")
    assert tuple(a - b for a, b in zip(after, before, strict=True)) == (2, 6, 6, 4)


class _Cached:
    """A backend shaped as etcd's: ``get_list`` is its watch cache's."""

    def __init__(self, items: list[Stored]) -> None:
        self.items = items

    def get_list(self, prefix: bytes, options: ListOptions) -> ListResult:
        return ListResult([s for s in self.items if options.selects(s)], 7, None, None)

    def get_list_through(self, prefix: bytes, options: ListOptions) -> Any:
        return succeed(_Cached.get_list(self, prefix, options))


def test_lists_from_the_watch_cache_are_kubes_cache_families() -> None:
    items = [Stored(f"/apps/deployments/d/{n}".encode(), 1, b"{}") for n in "xyz"]
    storage: Any = _Cached(items)
    instrument(storage)
    cache = {"group": "apps", "index": "", "resource": "deployments"}
    stored = {"group": "apps", "resource": "deployments"}
    before = (_list_counts("cache", **cache), _list_counts("storage", **stored))
    storage.get_list(b"/apps/deployments/", ListOptions(predicate=lambda obj: False))
    storage.get_list_through(b"/apps/deployments/", ListOptions())
    after = (_list_counts("cache", **cache), _list_counts("storage", **stored))
    assert tuple(a - b for a, b in zip(after[0], before[0], strict=True)) == (1, 3, 0, 0)
    assert tuple(a - b for a, b in zip(after[1], before[1], strict=True)) == (1, 3, 3, 3)


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


def test_the_hubs_events_and_revision_are_kubes_watch_cache_families(tmp_path: Path) -> None:
    storage = _storage(tmp_path)
    hub = WatchHub(storage, Clock())
    hub.subscribe(EventCounter())
    labels = {"group": "", "resource": "configmaps"}
    names = (
        "apiserver_watch_cache_events_received_total",
        "apiserver_watch_cache_events_dispatched_total",
    )
    before = [_sample(name, **labels) for name in names]
    obj = {"metadata": {"name": "a"}}
    stored = Stored(b"/core/configmaps/default/a", 5, orjson.dumps(obj))
    hub.committed([Event(ADDED, 5, stored.key, stored, None)])
    hub.flush()
    assert [_sample(name, **labels) - b for name, b in zip(names, before, strict=True)] == [1, 1]
    rt = builtin_scheme().lookup("", "v1", "configmaps")
    assert rt is not None
    stores = {"cm": Store(rt, storage)}
    collector = RevisionCollector(lambda: hub.revision, stores.values())
    [family] = collector.collect()
    assert [(s.labels, s.value) for s in family.samples] == [(labels, 5)]


def test_the_etcd_watch_cache_families(tmp_path: Path) -> None:
    """A resource with no events reports kube's first capacity; one that grew (and
    shrank) reports its size and the count of each change, as kube's cacher does; the
    events etcd's watch brought count by resource, its progress notifications for every
    resource (each of kube's per-resource watches gets one)."""
    cache = WatchCache(lambda: 0.0)
    cache.load([], 1)
    for revision in range(2, 103):  # 101 fresh events: the first history of 100 doubles
        key = b"/core/configmaps/ns/cm-%d" % revision
        cache.apply([Event(ADDED, revision, key, Stored(key, revision, b"{}"), None)], revision)
    cache.apply([Event(ADDED, 102, key, Stored(key, 102, b"{}"), None)], 102)  # seen: not counted
    cache.bookmarks = 2
    scheme, storage = builtin_scheme(), _storage(tmp_path)
    stores = [Store(scheme.lookup("", "v1", r), storage) for r in ("configmaps", "pods")]
    families = {f.name: f for f in EtcdCacheCollector(cache, stores).collect()}
    samples = {
        name: [(s.labels["resource"], s.value) for s in family.samples]
        for name, family in families.items()
    }
    assert samples == {
        "watch_cache_capacity": [("configmaps", 200), ("pods", 100)],
        "watch_cache_capacity_increase": [("configmaps", 1)],
        "watch_cache_capacity_decrease": [],
        "apiserver_storage_events_received": [("configmaps", 101)],
        "etcd_bookmark": [("configmaps", 2), ("pods", 2)],
    }
