"""On etcd, a traced request's writes carry kube's etcd3 storage spans under its
handler's span, as a real OTLP receiver gets them from a real server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server, session_for
from tests.e2e.test_tracing import Sink, Span, sink, traced_server
from tests.storage.etcd_server import EtcdServer

__all__ = ["sink"]  # the module's OTLP receiver: test_tracing's fixture, one per module
WRITE = ["About to Encode", "Encode succeeded", "TransformToStorage succeeded"]
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
COMMIT = ["Transaction prepared", "Txn call completed", "Transaction committed"]


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, sink: Sink, etcd: EtcdServer
) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("traced-etcd")
    etcd_flags = ("--storage-backend=etcd3", f"--etcd-servers={etcd.endpoint}")
    running = traced_server(root, sink, 1_000_000, *etcd_flags)
    yield running
    running.stop()


def _under(spans: list[Span], handler: Span) -> list[Span]:
    """The storage spans under a handler's (its SerializeObject: test_tracing_responses)."""
    return [
        s
        for s in spans
        if s["parent_span_id"] == handler["span_id"] and s["name"] != "SerializeObject"
    ]


def test_writes_carry_kubes_etcd3_spans(server: Server, sink: Sink) -> None:
    admin = session_for(server, cert=server.admin_cert)
    url = server.url + CONFIGMAPS
    created = admin.post(url, json={"metadata": {"name": "stored"}, "data": {"k": "1"}})
    assert created.status_code == 201
    assert admin.post(url, json={"metadata": {"name": "stored"}}).status_code == 409
    changed = {**created.json(), "data": {"k": "2"}}
    assert admin.put(f"{url}/stored", json=changed).status_code == 200

    def handlers(spans: list[Span]) -> list[Span]:
        return sorted(
            (
                s
                for s in spans
                if s["name"] in ("Create", "Update")
                and s["attributes"].get("url", "").startswith(CONFIGMAPS)
            ),
            key=lambda s: s["start"],
        )

    spans = sink.wait(lambda spans: len(handlers(spans)) >= 3)
    create, refused, update = handlers(spans)
    audit_id = create["attributes"]["audit-id"]
    [stored] = _under(spans, create)
    assert (stored["name"], stored["scope"], stored["trace_id"]) == (
        "Create etcd3",
        "k8s.io/component-base/tracing",
        create["trace_id"],
    )
    assert stored["attributes"] == {
        "audit-id": audit_id,
        "key": "/configmaps/default/stored",
        "type": "*core.ConfigMap",
        "group": "",
        "resource": "configmaps",
    }
    steps: list[Any] = [e[0] for e in stored["events"]]
    assert steps == [*WRITE, "Txn call succeeded", "decode succeeded"]
    encoded = stored["events"][1][1]["len"]
    assert encoded > 0 and stored["events"][-1][1] == {"len": encoded}
    # The handler marks the storage call around the storage's own span.
    assert stored["start"] >= create["start"] and stored["end"] <= create["end"]

    [exists] = _under(spans, refused)
    assert [e[0] for e in exists["events"]] == [*WRITE, "Txn call succeeded"]

    [guaranteed] = _under(spans, update)
    assert guaranteed["name"] == "GuaranteedUpdate etcd3"
    assert guaranteed["attributes"]["type"] == "*core.ConfigMap"
    assert [e[0] for e in guaranteed["events"]] == [
        "initial value restored",
        *WRITE,
        *COMMIT,
        "decode succeeded",
    ]


def test_a_get_carries_kubes_cacher_span(server: Server, sink: Sink) -> None:
    """With no resourceVersion kube's cache hands the get to the database; with one it
    answers from the cache once the cache is that new."""
    admin = session_for(server, cert=server.admin_cert)
    url = server.url + CONFIGMAPS
    made = admin.post(url, json={"metadata": {"name": "read"}})
    assert made.status_code == 201
    version = made.json()["metadata"]["resourceVersion"]
    for params in ({}, {"resourceVersion": "0"}, {"resourceVersion": version}):
        assert admin.get(f"{url}/read", params=params).status_code == 200

    def gets(spans: list[Span]) -> list[Span]:
        return sorted(
            (s for s in spans if s["name"] == "Get" and s["attributes"]["name"] == "read"),
            key=lambda s: s["start"],
        )

    spans = sink.wait(lambda spans: len(gets(spans)) >= 3)
    cached = ["About to fetch object from cache", "watchCache locked acquired"]
    expected = [
        ("", ["About to Get from underlying storage"]),
        ("0", [*cached, "watchCache fresh enough"]),
        (version, [*cached, "watchCache fresh enough"]),
    ]
    for handler, (asked, steps) in zip(gets(spans), expected, strict=True):
        assert handler["events"][0][0] == "About to Get from storage"
        [cacher] = _under(spans, handler)
        assert (cacher["name"], cacher["attributes"], [e[0] for e in cacher["events"]]) == (
            "cacher.Get",
            {
                "audit-id": handler["attributes"]["audit-id"],
                "key": "/configmaps/default/read",
                "resource-version": asked,
            },
            steps,
        )


def _grpc(span: Span) -> tuple[str, str, dict[str, Any]]:
    return span["name"], span["kind"], span["attributes"]


def test_the_etcd_calls_of_a_traced_request_carry_otelgrpc_spans(
    server: Server, sink: Sink, etcd: EtcdServer
) -> None:
    """kube's etcd client is instrumented: each call a traced request's storage makes is
    a client span under the storage span it is made in."""
    admin = session_for(server, cert=server.admin_cert)
    url = server.url + CONFIGMAPS
    made = admin.post(url, json={"metadata": {"name": "called"}, "data": {"k": "v"}})
    assert made.status_code == 201
    assert admin.get(f"{url}/called").status_code == 200  # a consistent read: etcd's revision
    audit_ids = {made.headers["Audit-Id"], admin.get(f"{url}/called").headers["Audit-Id"]}

    def calls(spans: list[Span]) -> list[Span]:
        return [s for s in spans if s["scope"].endswith("/grpc/otelgrpc")]

    def mine(spans: list[Span]) -> dict[str, Span]:
        return {s["span_id"]: s for s in spans if s["attributes"].get("audit-id") in audit_ids}

    spans = sink.wait(
        lambda spans: len([c for c in calls(spans) if c["parent_span_id"] in mine(spans)]) >= 2
    )
    by_id = mine(spans)
    under = [
        (by_id[c["parent_span_id"]]["name"], c)
        for c in calls(spans)
        if c["parent_span_id"] in by_id
    ]
    port = int(etcd.endpoint.rsplit(":", 1)[1])
    address = {"rpc.system.name": "grpc", "server.address": "127.0.0.1", "server.port": port}
    (txn,) = [c for parent, c in under if parent == "Create etcd3"]
    assert _grpc(txn) == (
        "etcdserverpb.KV/Txn",
        "CLIENT",
        {"rpc.method": "etcdserverpb.KV/Txn", **address, "rpc.response.status_code": "OK"},
    )
    sent, received = txn["events"]
    assert sent[0] == received[0] == "message"
    assert sent[1]["rpc.message.type"] == "SENT" and received[1]["rpc.message.type"] == "RECEIVED"
    assert sent[1]["rpc.message.id"] == received[1]["rpc.message.id"] == 1
    assert sent[1]["rpc.message.uncompressed_size"] > len(b'{"k":"v"}')
    assert txn["status"] == 0  # unset: the call succeeded
    # etcd 3.5.1 sends progress notifications too early: a consistent get is read from
    # etcd itself (storage/etcd/through.py), a lone one with a range, as kube reads it
    # (gets that arrive together share a transaction)
    reads = [c for parent, c in under if parent == "cacher.Get"]
    assert [_grpc(r)[0] for r in reads] == ["etcdserverpb.KV/Range"]
