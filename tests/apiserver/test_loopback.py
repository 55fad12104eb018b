"""The loopback client: its token, its identity, and its trust in exactly one certificate
(a real TLS server on a loopback port, the client treq through the kubeconfig policy)."""

from __future__ import annotations

import http.server
import os
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor

from platform_api.apiserver import loopback
from tests.e2e.certs import serving_certs


def test_the_token_is_the_supervisors_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(loopback.TOKEN_ENV, "from-the-supervisor")
    assert loopback.loopback_token() == "from-the-supervisor"
    assert loopback.TOKEN_ENV not in os.environ  # no child process inherits it
    made = loopback.loopback_token()
    assert len(made) >= 40 and made != loopback.loopback_token()


@pytest_twisted.ensureDeferred
async def test_the_token_is_system_apiserver_in_system_masters() -> None:
    auth = loopback.authenticator("secret")
    found = await auth.authenticate_token("secret")
    assert found is not None
    assert (found.user.name, found.user.groups) == ("system:apiserver", ("system:masters",))
    assert await auth.authenticate_token("other") is None


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def https(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    paths = serving_certs(tmp_path / "pki", ["not-localhost.example"])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(paths.serving_cert, paths.serving_key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_address[1]}", Path(paths.serving_cert)
    server.shutdown()


@pytest_twisted.ensureDeferred
async def test_the_client_trusts_exactly_the_serving_certificate(
    https: tuple[str, Path], tmp_path: Path
) -> None:
    url, cert = https
    # Issued by a CA the client does not know, for a name that is not the address: pinned.
    client = loopback.connection(url, str(cert), "t").client(reactor)
    response = await client.get(url + "/")
    assert response.code == 200 and await response.content() == b"{}"
    other = serving_certs(tmp_path / "other", ["not-localhost.example"]).serving_cert
    stranger = loopback.connection(url, other, "t").client(reactor)
    with pytest.raises(Exception) as refused:
        await stranger.get(url + "/")
    assert "certificate verify failed" in str(refused.value)
