"""Requests for an aggregated API server's group version, proxied to a real one (a
process of its own, tests/e2e/aggregated_backend.py), as kube-aggregator proxies them:
the availability check, the front-proxy identity, streaming, and the 503s."""

from __future__ import annotations

import base64
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.certs import serving_certs
from tests.e2e.conftest import VENV_BIN, Server, session_for, start_server
from tests.e2e.crds import eventually

REPO = Path(__file__).parents[2]
GROUP = "widgets.example.com"
APISERVICES = "/apis/apiregistration.platform.io/v1/apiservices"
SERVICES = "/api/v1/namespaces/default/services"
SLICES = "/apis/discovery.platform.io/v1/namespaces/default/endpointslices"
WIDGETS = f"/apis/{GROUP}/v1alpha1/namespaces/ns1/widgets"


class Backend:
    def __init__(self, root: Path, client_ca: str, *flags: str) -> None:
        self.client_ca = client_ca
        self.certs = serving_certs(root / "backend", ["api.default.svc"])
        port_file = root / "port"
        args = [port_file, self.certs.serving_cert, self.certs.serving_key, client_ca, *flags]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.aggregated_backend", *map(str, args)], cwd=REPO
        )
        deadline = time.monotonic() + 20
        while not port_file.exists() or not port_file.read_text():
            assert time.monotonic() < deadline and self.process.poll() is None
            time.sleep(0.05)
        self.port = int(port_file.read_text())

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(Path(self.certs.ca_cert).read_bytes()).decode()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def start_pair(root: Path, *flags: str) -> tuple[Server, Backend]:
    """An aggregated server and this server, which presents a proxy client certificate
    the aggregated server's CA signed."""
    proxy = serving_certs(root / "proxy", ["front-proxy-client"])
    backend = Backend(root, proxy.ca_cert)
    server = start_server(
        root / "data",
        *flags,
        "--proxy-client-cert-file",
        proxy.serving_cert,
        "--proxy-client-key-file",
        proxy.serving_key,
    )
    return server, backend


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Backend]]:
    server, backend = start_pair(tmp_path_factory.mktemp("aggregator"))
    yield server, backend
    server.stop()
    backend.stop()


def apiservice(name: str, port: int, ca_bundle: str, version: str = "v1alpha1") -> dict:
    return {
        "apiVersion": "apiregistration.platform.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"{version}.{name}"},
        "spec": {
            "group": name,
            "version": version,
            "groupPriorityMinimum": 1000,
            "versionPriority": 15,
            "caBundle": ca_bundle,
            "service": {"namespace": "default", "name": "api", "port": port},
        },
    }


def available(admin: requests.Session, server: Server, name: str) -> dict[str, Any]:
    got = admin.get(f"{server.url}{APISERVICES}/{name}").json()
    conditions = (got.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Available"), {})


def recheck(admin: requests.Session, server: Server, name: str, mark: str) -> None:
    """Any change to the APIService queues its check at once (else it runs every 30 s)."""
    patch = {"metadata": {"labels": {"mark": mark}}}
    headers = {"Content-Type": "application/merge-patch+json"}
    assert admin.patch(f"{server.url}{APISERVICES}/{name}", json=patch, headers=headers).ok


@pytest.fixture(scope="module")
def registered(setup: tuple[Server, Backend]) -> Iterator[tuple[Server, Backend]]:
    server, backend = setup
    admin = session_for(server, cert=server.admin_cert)
    external = {
        "metadata": {"name": "api"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1"},
    }
    assert admin.post(server.url + SERVICES, json=external).status_code == 201
    body = apiservice(GROUP, backend.port, backend.ca_bundle)
    assert admin.post(server.url + APISERVICES, json=body).status_code == 201
    yield server, backend
    admin.delete(f"{server.url}{APISERVICES}/v1alpha1.{GROUP}")
    admin.delete(f"{server.url}{SERVICES}/api")


@pytest.fixture
def ready(registered: tuple[Server, Backend]) -> tuple[Server, requests.Session]:
    """The server and an admin session, once the APIService is Available."""
    server, _ = registered
    admin = session_for(server, cert=server.admin_cert)
    eventually(lambda: available(admin, server, f"v1alpha1.{GROUP}").get("status") == "True")
    return server, admin


def test_the_discovery_check_makes_it_available(registered: tuple[Server, Backend]) -> None:
    server, _ = registered
    admin = session_for(server, cert=server.admin_cert)
    condition = eventually(
        lambda: (
            available(admin, server, f"v1alpha1.{GROUP}").get("status") == "True"
            and available(admin, server, f"v1alpha1.{GROUP}")
        )
    )
    assert (condition["reason"], condition["message"]) == ("Passed", "all checks passed")
    # Under --workers on etcd, the worker asked may not have seen the APIService yet (each
    # keeps its own watch cache, as each kube replica does): it proxies once it has.
    url = f"{server.url}/apis/{GROUP}/v1alpha1"
    discovery = eventually(lambda: (found := admin.get(url)).status_code != 404 and found)
    assert discovery.status_code == 200
    assert discovery.headers["x-backend"] == "yes"
    assert discovery.json()["resources"][0]["name"] == "widgets"


def test_aggregated_discovery_lists_its_resources_and_kubectl_uses_them(
    registered: tuple[Server, Backend],
) -> None:
    server, _ = registered
    admin = session_for(server, cert=server.admin_cert)
    accept = {"Accept": "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"}

    def listed() -> Any:
        items = admin.get(server.url + "/apis", headers=accept).json()["items"]
        return next((i for i in items if i["metadata"]["name"] == GROUP), None)

    # Another replica may list the group before its discovery of it (no "resources" yet).
    group = eventually(
        lambda: (found := listed()) and found["versions"][0].get("resources") and found
    )
    assert group["versions"] == [
        {
            "version": "v1alpha1",
            "resources": [
                {
                    "resource": "widgets",
                    "responseKind": {"group": "", "version": "", "kind": "Widget"},
                    "scope": "Namespaced",
                    "singularResource": "widget",
                    "verbs": ["get", "list", "watch", "create"],
                }
            ],
            "freshness": "Current",
        }
    ]
    kubectl = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(server.kubeconfig)]
    run = subprocess.run(
        [*kubectl, "get", "widgets", "-n", "kubectl", "-o", "name"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (run.returncode, run.stdout) == (0, "widget.widgets.example.com/w1\n"), run.stderr


def test_a_servers_own_aggregated_document_is_taken_as_written(
    setup: tuple[Server, Backend], tmp_path: Path
) -> None:
    """kube asks an aggregated server for its own discovery document first: the
    resources come as it wrote them, response kinds with their group and version."""
    server, backend = setup
    admin = session_for(server, cert=server.admin_cert)
    documented = Backend(tmp_path, backend.client_ca, "--document")
    group = "documented.example.com"
    external = {
        "metadata": {"name": "api"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1"},
    }
    admin.post(server.url + SERVICES, json=external)
    registration = apiservice(group, documented.port, documented.ca_bundle, "v1")
    assert admin.post(server.url + APISERVICES, json=registration).status_code == 201
    accept = {"Accept": "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"}

    def listed() -> Any:
        items = admin.get(server.url + "/apis", headers=accept).json()["items"]
        found = next((i for i in items if i["metadata"]["name"] == group), None)
        return found if found and found["versions"][0].get("resources") else None

    try:
        assert eventually(listed)["versions"] == [
            {
                "version": "v1",
                "resources": [
                    {
                        "resource": "gadgets",
                        "responseKind": {"group": group, "version": "v1", "kind": "Gadget"},
                        "scope": "Namespaced",
                        "singularResource": "gadget",
                        "verbs": ["get", "list"],
                    }
                ],
                "freshness": "Current",
            }
        ]
    finally:
        admin.delete(f"{server.url}{APISERVICES}/v1.{group}")
        documented.stop()


def _upgrade(server: Server, path: str) -> tuple[ssl.SSLSocket, bytes]:
    """An upgrade request as kubectl exec sends one, on a raw TLS connection as the
    administrator; the connection and the answer head."""
    context = ssl.create_default_context(cafile=server.ca)
    assert server.admin_cert is not None
    context.load_cert_chain(*server.admin_cert)
    host, port = server.url.removeprefix("https://").rsplit(":", 1)
    raw = socket.create_connection((host, int(port)), timeout=10)
    conn = context.wrap_socket(raw, server_hostname=host)
    conn.sendall(
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\n"
        "Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n"
        "Content-Length: 0\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(4096)
        assert chunk, head
        head += chunk
    return conn, head


def test_an_upgrade_request_is_joined_to_the_aggregated_servers_connection(
    ready: tuple[Server, requests.Session],
) -> None:
    """exec, attach and port-forward on an aggregated resource: the server's 101 comes
    back as written and the two connections are joined byte for byte."""
    server, _ = ready
    path = f"/apis/{GROUP}/v1alpha1/namespaces/kubectl/widgets/w1/exec?command=ls"
    conn, head = _upgrade(server, path)
    with conn:
        lines = head.split(b"\r\n")
        assert lines[0] == b"HTTP/1.1 101 Switching Protocols"
        assert b"Upgrade: SPDY/3.1" in lines
        assert b"X-Seen-User: platform-admin" in lines  # the front-proxy headers
        for word in (b"hello", b"world" * 10000):
            conn.sendall(word)
            echoed = b""
            while len(echoed) < len(word):
                echoed += conn.recv(65536)
            assert echoed == word.upper()
    # the client went: the server goes on serving
    assert session_for(server, cert=server.admin_cert).get(server.url + "/readyz").text == "ok"


def test_a_refused_upgrade_is_passed_back_whole(ready: tuple[Server, requests.Session]) -> None:
    server, _ = ready
    path = f"/apis/{GROUP}/v1alpha1/namespaces/kubectl/widgets/w1/exec?status=400"
    conn, head = _upgrade(server, path)
    with conn:
        rest = b""
        try:
            while chunk := conn.recv(4096):
                rest += chunk
        except TimeoutError:
            raise AssertionError(head + rest) from None
    answer = head + rest
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert answer.endswith(b"\r\n\r\nno upgrade here\n")


def test_the_aggregated_server_learns_who_asked_and_nothing_else(
    ready: tuple[Server, requests.Session],
) -> None:
    server, admin = ready
    sneaky = {"X-Remote-User": "mallory", "X-Remote-Extra-Scopes": "all", "Audit-ID": "a-1"}
    got = admin.get(f"{server.url}{WIDGETS}?z=2&a=1&a=0", headers=sneaky)
    assert got.status_code == 200, got.text
    echo = got.json()
    assert (echo["method"], echo["path"], echo["query"]) == ("GET", WIDGETS, "a=1&a=0&z=2")
    headers = echo["headers"]
    assert headers["x-remote-user"] == ["platform-admin"]
    assert headers["x-remote-group"] == ["system:masters", "system:authenticated"]
    assert "x-remote-extra-scopes" not in headers and "authorization" not in headers
    assert headers["audit-id"] == ["a-1"]
    assert headers["x-forwarded-for"] == ["127.0.0.1"]
    assert echo["client"] == "front-proxy-client"  # --proxy-client-cert-file


def test_bodies_and_status_codes_pass_through(ready: tuple[Server, requests.Session]) -> None:
    server, admin = ready
    posted = admin.post(
        server.url + WIDGETS,
        data=b'{"kind":"Widget"}',
        headers={"Content-Type": "application/json"},
    )
    assert posted.status_code == 200
    assert (posted.json()["method"], posted.json()["body"]) == ("POST", '{"kind":"Widget"}')
    teapot = admin.get(server.url + WIDGETS + "?status=418")
    assert teapot.status_code == 418
    assert teapot.headers["content-type"] == "application/json"
    assert teapot.json()["path"] == WIDGETS


def test_a_watch_streams_as_the_aggregated_server_writes(
    ready: tuple[Server, requests.Session],
) -> None:
    server, admin = ready
    arrivals: list[tuple[float, str]] = []
    with admin.get(server.url + WIDGETS + "?watch=1", stream=True) as watch:
        assert watch.status_code == 200
        for line in watch.iter_lines():
            if line:
                arrivals.append((time.monotonic(), line.decode()))
    names = [line.split('"name":"')[1].split('"')[0] for _, line in arrivals]
    assert names == ["w0", "w1", "w2"]
    # The backend writes them 0.3 s apart: the first reached the client long before the last.
    assert arrivals[-1][0] - arrivals[0][0] > 0.4


def test_a_server_that_went_away(setup: tuple[Server, Backend], tmp_path: Path) -> None:
    server, backend = setup
    admin = session_for(server, cert=server.admin_cert)
    other = Backend(tmp_path, backend.client_ca)
    group = "gone.example.com"
    name = f"v1.{group}"
    external = {
        "metadata": {"name": "api"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1"},
    }
    admin.post(server.url + SERVICES, json=external)
    assert (
        admin.post(
            server.url + APISERVICES, json=apiservice(group, other.port, other.ca_bundle, "v1")
        ).status_code
        == 201
    )
    try:
        eventually(lambda: available(admin, server, name).get("status") == "True")
        # Writing the condition queues one more check (as kube's informer does); let it
        # finish before the server goes, so the answers below are about a server gone.
        time.sleep(0.5)
        other.stop()
        got = admin.get(f"{server.url}/apis/{group}/v1/things")
        assert got.status_code == 503
        assert got.headers["content-type"] == "text/plain; charset=utf-8"
        assert got.text == f"dial tcp 127.0.0.1:{other.port}: connect: connection refused\n"
        recheck(admin, server, name, "1")
        condition = eventually(
            lambda: (
                available(admin, server, name).get("status") == "False"
                and available(admin, server, name)
            )
        )
        url = f"https://127.0.0.1:{other.port}/apis/{group}/v1"
        assert condition["reason"] == "FailedDiscoveryCheck"
        assert condition["message"] == (
            f'failing or missing response from {url}: Get "{url}": '
            f"dial tcp 127.0.0.1:{other.port}: connect: connection refused"
        )
        got = admin.get(f"{server.url}/apis/{group}/v1/things")
        assert (got.status_code, got.text) == (503, "service unavailable\n")
    finally:
        admin.delete(f"{server.url}{APISERVICES}/{name}")


def test_a_certificate_from_another_authority_fails_the_check(
    registered: tuple[Server, Backend], tmp_path: Path
) -> None:
    server, backend = registered
    admin = session_for(server, cert=server.admin_cert)
    stranger = serving_certs(tmp_path / "stranger", ["api.default.svc"])
    group = "untrusted.example.com"
    bundle = base64.b64encode(Path(stranger.ca_cert).read_bytes()).decode()
    assert (
        admin.post(
            server.url + APISERVICES, json=apiservice(group, backend.port, bundle)
        ).status_code
        == 201
    )
    try:
        name = f"v1alpha1.{group}"
        condition = eventually(
            lambda: (
                available(admin, server, name).get("reason") == "FailedDiscoveryCheck"
                and available(admin, server, name)
            )
        )
        url = f"https://127.0.0.1:{backend.port}/apis/{group}/v1alpha1"
        assert condition["message"] == (
            f'failing or missing response from {url}: Get "{url}": '
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        )
    finally:
        admin.delete(f"{server.url}{APISERVICES}/v1alpha1.{group}")


def test_endpoint_routing(tmp_path: Path) -> None:
    """--enable-aggregator-routing: a ready endpoint of the Service's EndpointSlices (an
    FQDN slice: kube refuses loopback IPs in slices, and a name it resolves is how a
    selector-less Service reaches a process on this machine)."""
    server, backend = start_pair(tmp_path, "--enable-aggregator-routing=true")
    try:
        admin = session_for(server, cert=server.admin_cert)
        ports = [{"name": "https", "port": 443, "targetPort": backend.port}]
        assert (
            admin.post(
                server.url + SERVICES, json={"metadata": {"name": "api"}, "spec": {"ports": ports}}
            ).status_code
            == 201
        )
        endpoint_slice = {
            "metadata": {"name": "api-1", "labels": {"kubernetes.io/service-name": "api"}},
            "addressType": "FQDN",
            "ports": [{"name": "https", "port": backend.port}],
            "endpoints": [{"addresses": ["localhost"], "conditions": {"ready": True}}],
        }
        created = admin.post(server.url + SLICES, json=endpoint_slice)
        assert created.status_code == 201, created.text
        body = apiservice(GROUP, 443, backend.ca_bundle)
        assert admin.post(server.url + APISERVICES, json=body).status_code == 201
        eventually(lambda: available(admin, server, f"v1alpha1.{GROUP}").get("status") == "True")
        got = admin.get(server.url + WIDGETS)
        assert got.status_code == 200 and got.json()["path"] == WIDGETS
    finally:
        server.stop()
        backend.stop()
