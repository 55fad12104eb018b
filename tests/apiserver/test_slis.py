"""/metrics/slis: each health check a whole endpoint runs, counted as component-base
counts it, and what /metrics and /metrics/slis each list of one registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge
from twisted.web.test.requesthelper import DummyRequest

from platform_api.apiserver.health import HealthCheck, HealthEndpoint
from platform_api.apiserver.metrics import text
from platform_api.apiserver.slis import SLIS, HealthCheckSLIs, for_path
from platform_api.apiserver.workermetrics import MergedMetrics, snapshot


def _registry(slis: HealthCheckSLIs) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(slis)
    Gauge("process_start_time_seconds", "Start time.", registry=registry).set(1796571209.03)
    Counter("apiserver_requests", "Requests.", registry=registry).inc()
    return registry


def test_each_path_lists_its_own_families() -> None:
    slis = HealthCheckSLIs()
    slis.observe("ping", "readyz", True)
    slis.observe("etcd", "readyz", False)
    slis.observe("etcd", "readyz", True)
    slis.observe("ping", "livez", True)
    registry = _registry(slis)
    assert text(for_path(registry, True)).decode() == (
        "# HELP kubernetes_healthcheck [STABLE] This metric records the result of a single "
        "healthcheck.\n"
        "# TYPE kubernetes_healthcheck gauge\n"
        'kubernetes_healthcheck{name="etcd",type="readyz"} 1\n'
        'kubernetes_healthcheck{name="ping",type="livez"} 1\n'
        'kubernetes_healthcheck{name="ping",type="readyz"} 1\n'
        "# HELP kubernetes_healthchecks_total [STABLE] This metric records the results of all "
        "healthcheck.\n"
        "# TYPE kubernetes_healthchecks_total counter\n"
        'kubernetes_healthchecks_total{name="etcd",status="error",type="readyz"} 1\n'
        'kubernetes_healthchecks_total{name="etcd",status="success",type="readyz"} 1\n'
        'kubernetes_healthchecks_total{name="ping",status="success",type="livez"} 1\n'
        'kubernetes_healthchecks_total{name="ping",status="success",type="readyz"} 1\n'
        "# HELP process_start_time_seconds [ALPHA] Start time of the process since unix epoch "
        "in seconds.\n"
        "# TYPE process_start_time_seconds gauge\n"
        "process_start_time_seconds 1.79657120903e+09\n"
    )
    legacy = text(for_path(registry, False)).decode()
    assert "healthcheck" not in legacy
    assert "# HELP process_start_time_seconds Start time.\n" in legacy
    assert "apiserver_requests_total 1\n" in legacy


def test_a_check_failing_on_any_worker_reads_failed_and_counts_add_up() -> None:
    here, there = HealthCheckSLIs(), HealthCheckSLIs()
    here.observe("lmdb", "readyz", True)
    there.observe("lmdb", "readyz", False)
    merged = text(for_path(MergedMetrics([snapshot(_registry(there))], _registry(here)), True))
    assert b'kubernetes_healthcheck{name="lmdb",type="readyz"} 0\n' in merged
    assert b'kubernetes_healthchecks_total{name="lmdb",status="error",type="readyz"} 1\n' in merged
    assert (
        b'kubernetes_healthchecks_total{name="lmdb",status="success",type="readyz"} 1\n' in merged
    )


def test_an_endpoint_counts_what_it_runs_and_one_checks_path_nothing() -> None:
    SLIS.reset()
    endpoint = HealthEndpoint(
        "readyz", [HealthCheck("ping", lambda: None), HealthCheck("etcd", lambda: "down")], 503
    )
    endpoint.render_all(DummyRequest([b""]))
    excluding = DummyRequest([b""])
    excluding.args = {b"exclude": [b"etcd"]}
    endpoint.render_all(excluding)
    endpoint.render_one(DummyRequest([b""]), "ping")
    assert SLIS.last == {("ping", "readyz"): 1.0, ("etcd", "readyz"): 0.0}
    assert SLIS.counts == {
        ("ping", "success", "readyz"): 2.0,
        ("etcd", "error", "readyz"): 1.0,
    }
    SLIS.reset()
