"""ComponentStatus probes: kube's conditions and Go's error texts."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest_twisted
from twisted.internet import reactor, ssl
from twisted.web.resource import Resource
from twisted.web.server import Request, Site

from platform_api.apiserver.pki import ensure_pki
from platform_api.pem import certificate_options
from platform_api.registry.componentstatus import probe, probe_http, status


async def _ok() -> None:
    return None


async def _broken() -> None:
    raise OSError("database closed")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest_twisted.ensureDeferred
async def test_storage_component() -> None:
    assert await probe("etcd-0", reactor, _ok) == status("etcd-0", True, "ok")
    failed = await probe("etcd-0", reactor, _broken)
    assert failed is not None
    assert failed["conditions"] == [
        {"type": "Healthy", "status": "False", "message": "", "error": "database closed"}
    ]
    assert await probe("nope", reactor, _ok) is None


@pytest_twisted.ensureDeferred
async def test_unreachable_component_is_unhealthy_with_gos_text() -> None:
    port = _closed_port()
    answer = await probe_http(reactor, "scheduler", port)
    assert answer == {
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": "scheduler"},
        "conditions": [
            {
                "type": "Healthy",
                "status": "False",
                "message": f'Get "https://127.0.0.1:{port}/healthz": dial tcp 127.0.0.1:{port}: '
                "connect: connection refused",
            }
        ],
    }


class _Health(Resource):
    isLeaf = True

    def __init__(self, code: int, body: bytes) -> None:
        super().__init__()
        self.code, self.body = code, body

    def render_GET(self, request: Request) -> bytes:
        request.setResponseCode(self.code)
        return self.body


@pytest_twisted.ensureDeferred
async def test_answering_component(tmp_path: Path) -> None:
    paths = ensure_pki(str(tmp_path), "127.0.0.1")
    key, cert = Path(paths.serving_key).read_bytes(), Path(paths.serving_cert).read_bytes()
    options = ssl.CertificateOptions(**certificate_options(key, cert))
    for code, body, expected in (
        (200, b"ok", ("True", "ok")),
        (500, b"broken", ("False", "HTTP probe failed with statuscode: 500")),
    ):
        port = reactor.listenSSL(0, Site(_Health(code, body)), options, interface="127.0.0.1")
        try:
            answer = await probe_http(reactor, "controller-manager", port.getHost().port)
        finally:
            await port.stopListening()
        condition = answer["conditions"][0]
        assert (condition["status"], condition["message"]) == expected
