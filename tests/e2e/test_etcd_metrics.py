"""/metrics of servers on etcd: what each replica reports of its etcd, its etcd client
and its watch cache, under kube's names."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.e2e.conftest import E2E_WORKERS, Server
from tests.e2e.etcd_replicas import admin, etcdctl
from tests.storage.etcd_server import EtcdServer

pytestmark = pytest.mark.slow


def test_the_storage_size_is_etcds_database_size(replicas: list[Server], etcd: EtcdServer) -> None:
    reported = []
    for server in replicas:
        body = admin(replicas).get(f"{server.base_url}/metrics").text
        [line] = [x for x in body.splitlines() if x.startswith("apiserver_storage_size_bytes")]
        series, _, value = line.rpartition(" ")
        # kube's label for its (first) etcd cluster
        assert series == 'apiserver_storage_size_bytes{storage_cluster_id="etcd-0"}'
        reported.append(float(value))
    # etcd's Status read at start or since: its database file only grows (no defrag here)
    [status] = json.loads(etcdctl(etcd, "endpoint", "status", "-w", "json"))
    assert all(0 < size <= status["Status"]["dbSize"] for size in reported)


def test_each_replica_reports_its_watch_cache_histories(replicas: list[Server]) -> None:
    """kube's ``watch_cache_capacity``: every served resource's history size,
    100 until a burst of fresh events doubles it."""
    session = admin(replicas)
    namespace = {"metadata": {"name": "histories"}}
    assert session.post(replicas[0].base_url + "/api/v1/namespaces", json=namespace).ok
    path = "/api/v1/namespaces/histories/configmaps"
    for i in range(101):
        made = session.post(replicas[0].base_url + path, json={"metadata": {"name": f"h-{i}"}})
        assert made.status_code == 201
    cm = 'watch_cache_capacity{group="",resource="configmaps"}'
    grew = 'watch_cache_capacity_increase_total{group="",resource="configmaps"}'
    for server in replicas:
        deadline = time.monotonic() + 5  # the other replica takes the creates in from etcd
        while True:
            lines = session.get(f"{server.base_url}/metrics").text.splitlines()
            samples = dict(line.rsplit(" ", 1) for line in lines if not line.startswith("#"))
            if float(samples.get(grew, 0)) >= 1 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert float(samples[cm]) >= 200 and float(samples[grew]) >= 1
        assert float(samples['watch_cache_capacity{group="",resource="pods"}']) >= 100


def _samples(session: Any, server: Server) -> dict[str, float]:
    lines = session.get(f"{server.base_url}/metrics").text.splitlines()
    return {
        series: float(value)
        for series, _, value in (line.rpartition(" ") for line in lines)
        if series and not series.startswith("#")
    }


def test_each_replica_reports_its_etcd_calls_and_watch_events(replicas: list[Server]) -> None:
    """kube's etcd client families (go-grpc-prometheus): each call started, its messages
    and how it ended; and the events each replica's etcd watch brought (under
    ``--workers`` each worker watches: their counts add up)."""
    session = admin(replicas)
    workers = int(E2E_WORKERS or "1")
    seen = 3 * workers
    namespace = {"metadata": {"name": "etcd-calls"}}
    assert session.post(replicas[0].base_url + "/api/v1/namespaces", json=namespace).ok
    txn = 'grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"'
    watch = 'grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"'
    events = 'apiserver_storage_events_received_total{group="",resource="configmaps"}'
    before = [_samples(session, server) for server in replicas]
    path = "/api/v1/namespaces/etcd-calls/configmaps"
    for i in range(3):
        made = session.post(replicas[0].base_url + path, json={"metadata": {"name": f"c-{i}"}})
        assert made.status_code == 201
    for server, earlier in zip(replicas, before, strict=True):
        deadline = time.monotonic() + 5  # the other replica takes the creates in from etcd
        while True:
            now = _samples(session, server)
            if now.get(events, 0) - earlier.get(events, 0) >= seen or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert now.get(events, 0) - earlier.get(events, 0) == seen
        assert now[f"grpc_client_started_total{{{watch}}}"] >= 1  # the cache's watch
        assert now[f"grpc_client_msg_received_total{{{watch}}}"] >= 3
    # Every create is one transaction: a message each way, ended OK.  (A lease renewal
    # may be on its way as a scrape is made: answered and ended after it.)
    now, earlier = _samples(session, replicas[0]), before[0]

    def count(family: str, labels: str = txn) -> float:
        return now[f"grpc_client_{family}_total{{{labels}}}"]

    ok = f'grpc_code="OK",{txn}'
    assert count("handled", ok) - earlier[f"grpc_client_handled_total{{{ok}}}"] >= 3
    assert count("msg_sent") == count("started")  # sent as the call starts
    for answered in (count("msg_received"), count("handled", ok)):
        assert 0 <= count("started") - answered <= workers  # one call a worker at most
