"""How API servers make themselves known: the ``kubernetes`` Service's Endpoints and
EndpointSlice (every server's address, kept by kube's lease reconciler, on LMDB and across
replicas on one etcd) and each server's identity Lease."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from platform_api.apiserver.identity import server_id
from tests.e2e.answers import status
from tests.e2e.conftest import Server, replica, session_for, start_server
from tests.e2e.etcd_replicas import etcdctl
from tests.storage.etcd_server import EtcdServer

ENDPOINTS = "/api/v1/namespaces/default/endpoints/kubernetes"
SLICE = "/apis/discovery.platform.io/v1/namespaces/default/endpointslices/kubernetes"


def port_of(server: Server) -> int:
    return int(server.base_url.rsplit(":", 1)[1])


def addresses(session: requests.Session, server: Server) -> tuple[list[str], list[str]]:
    """The addresses in the Endpoints and in the EndpointSlice."""
    found = session.get(server.base_url + ENDPOINTS).json()
    listed = [a["ip"] for a in ((found.get("subsets") or [{}])[0].get("addresses") or [])]
    sliced = session.get(server.base_url + SLICE).json()
    return listed, [e["addresses"][0] for e in sliced.get("endpoints") or []]


def managed(obj: dict[str, Any]) -> dict[str, Any]:
    """The fields kube-apiserver owns by its Update, the object's only manager here."""
    entries = obj["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in entries] == [("kube-apiserver", "Update")]
    fields: dict[str, Any] = entries[0]["fieldsV1"]
    return fields


def eventually(check: Callable[[], Any], want: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while (got := check()) != want and time.monotonic() < deadline:
        time.sleep(0.2)
    assert got == want


@pytest.fixture
def advertised(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "data", "--advertise-address", "192.0.2.50")
    yield running
    running.stop()


def test_the_server_is_the_endpoint_of_the_kubernetes_service(advertised: Server) -> None:
    session = session_for(advertised, cert=advertised.admin_cert)
    # As kube's bootstrap controller does, the reconciler first waits for /readyz, so the
    # Endpoints appear just after the server is ready, not before.
    eventually(lambda: session.get(advertised.base_url + ENDPOINTS).status_code, 200, 10)
    endpoints = session.get(advertised.base_url + ENDPOINTS)
    body = endpoints.json()
    assert body["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    port = port_of(advertised)
    assert body["subsets"] == [
        {
            "addresses": [{"ip": "192.0.2.50"}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        }
    ]

    def slices() -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = session.get(
            advertised.base_url
            + "/apis/discovery.platform.io/v1/namespaces/default/endpointslices",
            params={"labelSelector": "kubernetes.io/service-name=kubernetes"},
        ).json()["items"]
        return items

    # The slice is written just after the Endpoints.
    eventually(lambda: [s["metadata"]["name"] for s in slices()], ["kubernetes"], 10)
    found = slices()
    assert [s["metadata"]["name"] for s in found] == ["kubernetes"]
    assert {k: found[0][k] for k in ("addressType", "endpoints", "ports")} == {
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["192.0.2.50"], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }
    service = session.get(advertised.base_url + "/api/v1/namespaces/default/services/kubernetes")
    assert service.json()["spec"]["ports"][0]["targetPort"] == port
    # written as kube's loopback client writes them: owned by kube-apiserver (kube's own
    # managedFields of these two objects)
    assert managed(body) == {
        "f:metadata": {"f:labels": {".": {}, "f:endpointslice.kubernetes.io/skip-mirror": {}}},
        "f:subsets": {},
    }
    assert managed(found[0]) == {
        "f:addressType": {},
        "f:endpoints": {},
        "f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/service-name": {}}},
        "f:ports": {},
    }


def test_the_server_holds_its_identity_lease(advertised: Server) -> None:
    session = session_for(advertised, cert=advertised.admin_cert)

    def leases() -> list[dict[str, Any]]:
        return list(
            session.get(
                advertised.base_url
                + "/apis/coordination.platform.io/v1/namespaces/platform-system/leases",
                params={"labelSelector": "apiserver.kubernetes.io/identity=kube-apiserver"},
            ).json()["items"]
        )

    # Its controller writes it once started (kube's hook is ready then too): a busy
    # machine may answer the first list before.
    eventually(lambda: [lease["metadata"]["name"] for lease in leases()], [server_id()], 10)
    found = leases()
    lease = found[0]
    assert lease["metadata"]["labels"] == {
        "apiserver.kubernetes.io/identity": "kube-apiserver",
        "kubernetes.io/hostname": socket.gethostname(),
    }
    peer = f"192.0.2.50:{port_of(advertised)}"
    assert lease["metadata"]["annotations"] == {"kubernetes.io/peer-advertise-address": peer}
    assert lease["spec"]["holderIdentity"].startswith(server_id() + "_")
    assert lease["spec"]["leaseDurationSeconds"] == 3600
    assert managed(lease) == {
        "f:metadata": {
            "f:annotations": {".": {}, "f:kubernetes.io/peer-advertise-address": {}},
            "f:labels": {
                ".": {},
                "f:apiserver.kubernetes.io/identity": {},
                "f:kubernetes.io/hostname": {},
            },
        },
        "f:spec": {"f:holderIdentity": {}, "f:leaseDurationSeconds": {}, "f:renewTime": {}},
    }
    checks = session.get(advertised.base_url + "/readyz?verbose").text
    assert "[+]poststarthook/start-kube-apiserver-identity-lease-controller ok\n" in checks
    assert "[+]poststarthook/start-kube-apiserver-identity-lease-garbage-collector ok\n" in checks


def test_reconciler_none_leaves_the_service_without_endpoints(tmp_path: Path) -> None:
    running = start_server(tmp_path / "data", "--endpoint-reconciler-type", "none")
    try:
        session = session_for(running, cert=running.admin_cert)
        missing = session.get(running.base_url + ENDPOINTS)
        assert missing.status_code == 404
        assert missing.json() == status(
            404,
            "NotFound",
            'endpoints "kubernetes" not found',
            {"name": "kubernetes", "kind": "endpoints"},
        )
        service = session.get(running.base_url + "/api/v1/namespaces/default/services/kubernetes")
        assert service.status_code == 200
    finally:
        running.stop()


@pytest.fixture
def two_replicas(tmp_path: Path, etcd: EtcdServer) -> Iterator[list[Server]]:
    running = [
        replica(tmp_path / "replica-0", etcd, "--advertise-address", "192.0.2.51"),
        replica(tmp_path / "replica-1", etcd, "--advertise-address", "192.0.2.52"),
    ]
    yield running
    for server in running:
        server.stop()


@pytest.mark.slow
def test_replicas_list_each_other_and_leave_when_they_stop(
    two_replicas: list[Server],
    etcd: EtcdServer,
) -> None:
    a, b = two_replicas
    session = session_for(a, cert=a.admin_cert)
    both = ["192.0.2.51", "192.0.2.52"]
    eventually(lambda: addresses(session, a), (both, both), 15)
    leases = etcdctl(etcd, "get", "--prefix", "/registry/masterleases/", "--keys-only").split()
    assert leases == ["/registry/masterleases/192.0.2.51", "/registry/masterleases/192.0.2.52"]
    b.stop()  # a graceful stop takes the address out at once
    assert addresses(session, a) == (["192.0.2.51"], ["192.0.2.51"])


@pytest.mark.slow
def test_a_killed_replica_is_dropped_once_its_lease_lapses(
    two_replicas: list[Server],
) -> None:
    a, b = two_replicas
    session = session_for(a, cert=a.admin_cert)
    both = ["192.0.2.51", "192.0.2.52"]
    eventually(lambda: addresses(session, a), (both, both), 15)
    assert b.process is not None
    b.process.send_signal(signal.SIGKILL)
    b.process.wait(10)
    # the lease's 15 s TTL, then the survivor's next 10 s pass
    eventually(lambda: addresses(session, a), (["192.0.2.51"], ["192.0.2.51"]), 40)
