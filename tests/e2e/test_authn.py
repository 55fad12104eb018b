"""Authenticating proxies, impersonation, SelfSubjectReview and TokenReview."""

from __future__ import annotations

import base64
import json
import re
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import h2.connection
import h2.events
import pytest
import requests

from platform_api.apiserver import pki
from tests.e2e.conftest import Server, session_for, start_server

REVIEW = "/apis/authentication.platform.io/v1/selfsubjectreviews"
TOKEN_REVIEW = "/apis/authentication.platform.io/v1/tokenreviews"
SELF = {"apiVersion": "authentication.platform.io/v1", "kind": "SelfSubjectReview"}


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, pki.Paths]]:
    root = tmp_path_factory.mktemp("authn")
    proxy = pki.ensure_pki(str(root / "proxy-pki"), "127.0.0.1")
    tokens = root / "tokens.csv"
    tokens.write_text('t-carol,carol,uid-c,"dev,ops"\n')
    server = start_server(
        root / "data",
        "--requestheader-client-ca-file",
        proxy.ca_cert,
        "--requestheader-username-headers",
        "X-Remote-User",
        "--requestheader-group-headers",
        "X-Remote-Group",
        "--requestheader-extra-headers-prefix",
        "X-Remote-Extra-",
        "--token-auth-file",
        str(tokens),
        "--enable-bootstrap-token-auth",
    )
    yield server, proxy
    server.stop()


def who(session: requests.Session, server: Server, **headers: str) -> requests.Response:
    return session.post(server.url + REVIEW, json=SELF, headers=headers)


def test_proxy_headers_name_the_user(proxied: tuple[Server, pki.Paths]) -> None:
    server, proxy = proxied
    front = session_for(server, cert=(proxy.admin_cert, proxy.admin_key))
    r = who(
        front,
        server,
        **{"X-Remote-User": "alice", "X-Remote-Group": "team", "X-Remote-Extra-Scopes%2FX": "v"},
    )
    assert r.status_code == 201, r.text
    created = r.json()["metadata"]["creationTimestamp"]  # kube's REST stamps a new object
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", created)
    assert r.json() == {
        **SELF,
        "metadata": {"creationTimestamp": created},
        "status": {
            "userInfo": {
                "username": "alice",
                "groups": ["team", "system:authenticated"],
                "extra": {"scopes/x": ["v"]},
            }
        },
    }
    # Without the user header the proxy's certificate is not a client-CA certificate: 401.
    assert who(front, server).status_code == 401


def test_headers_from_other_clients_are_ignored(proxied: tuple[Server, pki.Paths]) -> None:
    server, _ = proxied
    admin = session_for(server, cert=server.admin_cert)
    r = who(admin, server, **{"X-Remote-User": "mallory", "X-Remote-Group": "system:masters"})
    assert r.json()["status"]["userInfo"]["username"] == "platform-admin"
    carol = session_for(server, token="t-carol")
    r = who(carol, server, **{"X-Remote-User": "mallory"})
    assert r.json()["status"]["userInfo"] == {
        "username": "carol",
        "uid": "uid-c",
        "groups": ["dev", "ops", "system:authenticated"],
    }


def test_impersonation(proxied: tuple[Server, pki.Paths]) -> None:
    server, _ = proxied
    admin = session_for(server, cert=server.admin_cert)
    r = who(
        admin,
        server,
        **{"Impersonate-User": "system:serviceaccount:ns1:robot", "Impersonate-Extra-Team": "x"},
    )
    assert r.json()["status"]["userInfo"] == {
        "username": "system:serviceaccount:ns1:robot",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"],
        "extra": {"team": ["x"]},
    }
    r = who(admin, server, **{"Impersonate-Group": "devs"})
    assert r.status_code == 400
    assert r.content.startswith(
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
        b'"requested \\u0026user.DefaultInfo{Name:\\"\\", UID:\\"\\", '
        b'Groups:[]string{\\"devs\\"}, Extra:map[string][]string(nil)} without impersonating '
        b'a user name","reason":"BadRequest","code":400}'
    )


def test_token_review(proxied: tuple[Server, pki.Paths]) -> None:
    server, _ = proxied
    admin = session_for(server, cert=server.admin_cert)
    review = {"apiVersion": "authentication.platform.io/v1", "kind": "TokenReview"}
    r = admin.post(server.url + TOKEN_REVIEW, json={**review, "spec": {"token": "t-carol"}})
    assert r.status_code == 201
    assert r.json()["status"] == {
        "authenticated": True,
        "user": {
            "username": "carol",
            "uid": "uid-c",
            "groups": ["dev", "ops", "system:authenticated"],
        },
        "audiences": ["https://platform.default.svc.cluster.local"],
    }
    # A token-file token holds only for the API's own audiences.
    spec = {"token": "t-carol", "audiences": ["vault"]}
    r = admin.post(server.url + TOKEN_REVIEW, json={**review, "spec": spec})
    assert r.json()["status"] == {"user": {}, "error": "invalid bearer token"}
    spec["audiences"] = ["vault", "https://platform.default.svc.cluster.local"]
    r = admin.post(server.url + TOKEN_REVIEW, json={**review, "spec": spec})
    assert r.json()["status"]["audiences"] == ["https://platform.default.svc.cluster.local"]
    r = admin.post(server.url + TOKEN_REVIEW, json={"spec": {"token": "nope"}, **review})
    assert r.status_code == 201
    assert r.json()["status"] == {"user": {}, "error": "invalid bearer token"}  # kube's words
    # Written in the Go struct's order, whatever the request's (recorded from kube).
    assert list(r.json()) == ["kind", "apiVersion", "metadata", "spec", "status"]
    r = admin.post(server.url + TOKEN_REVIEW, json={**review, "spec": {}})
    assert (r.status_code, r.json()["message"]) == (
        400,
        "token is required for TokenReview in authentication",
    )
    assert admin.get(server.url + TOKEN_REVIEW).status_code == 405


def test_requestheader_ca_needs_username_headers(tmp_path: Path) -> None:
    proxy = pki.ensure_pki(str(tmp_path / "p"), "127.0.0.1")
    with pytest.raises(RuntimeError) as failed:
        start_server(tmp_path / "data", "--requestheader-client-ca-file", proxy.ca_cert)
    assert "--requestheader-client-ca-file requires --requestheader-username-headers" in str(
        failed.value
    )


def bootstrap_secret(token_id: str, secret: str, **extra: str) -> dict:
    data = {"token-id": token_id, "token-secret": secret, **extra}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "platform-system"},
        "type": "bootstrap.platform.io/token",
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def test_bootstrap_tokens(proxied: tuple[Server, pki.Paths]) -> None:
    server, _ = proxied
    admin = session_for(server, cert=server.admin_cert)
    secrets = server.url + "/api/v1/namespaces/platform-system/secrets"
    usage = {"usage-bootstrap-authentication": "true"}
    cases = {
        "abcdef": {**usage, "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token"},
        "expire": {**usage, "expiration": "2020-01-01T00:00:00Z"},
        "nousag": {},
        "badgrp": {**usage, "auth-extra-groups": "system:masters"},
    }
    for token_id, extra in cases.items():
        body = bootstrap_secret(token_id, "0123456789abcdef", **extra)
        assert admin.post(secrets, json=body).status_code == 201
    good = session_for(server, token="abcdef.0123456789abcdef")
    assert who(good, server).json()["status"]["userInfo"] == {
        "username": "system:bootstrap:abcdef",
        "groups": [
            "system:bootstrappers",
            "system:bootstrappers:kubeadm:default-node-token",
            "system:authenticated",
        ],
    }
    for token in (
        "abcdef.0123456789abcdeX",  # not the token format
        "abcdef.fedcba9876543210",  # wrong secret
        "expire.0123456789abcdef",
        "nousag.0123456789abcdef",
        "badgrp.0123456789abcdef",
        "absent.0123456789abcdef",
    ):
        r = who(session_for(server, token=token), server)
        assert (r.status_code, r.json()["reason"]) == (401, "Unauthorized"), token


def h2_post(
    server: Server, cert: tuple[str, str], path: str, body: bytes, headers: dict
) -> tuple[int, bytes]:
    """One POST over HTTP/2 with the h2 library (twisted's own HTTP/2 dependency)."""
    context = ssl.create_default_context(cafile=server.ca)
    context.load_cert_chain(*cert)
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection(("127.0.0.1", server.port))
    with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        assert tls.selected_alpn_protocol() == "h2"
        conn = h2.connection.H2Connection()
        conn.initiate_connection()
        request = [
            (":method", "POST"),
            (":path", path),
            (":scheme", "https"),
            (":authority", f"127.0.0.1:{server.port}"),
            *headers.items(),
        ]
        conn.send_headers(1, request)
        conn.send_data(1, body, end_stream=True)
        tls.sendall(conn.data_to_send())
        status, data = 0, b""
        while True:
            for event in conn.receive_data(tls.recv(65536)):
                if isinstance(event, h2.events.ResponseReceived):
                    status = int(dict(event.headers)[b":status"])
                elif isinstance(event, h2.events.DataReceived):
                    data += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, 1)
                elif isinstance(event, h2.events.StreamEnded):
                    return status, data
            tls.sendall(conn.data_to_send())


def test_proxy_headers_over_http2(proxied: tuple[Server, pki.Paths]) -> None:
    """The same rules hold on an HTTP/2 connection."""
    server, proxy = proxied
    headers = {
        "x-remote-user": "alice",
        "x-remote-group": "team",
        "content-type": "application/json",
    }
    status, body = h2_post(
        server, (proxy.admin_cert, proxy.admin_key), REVIEW, json.dumps(SELF).encode(), headers
    )
    assert status == 201
    assert json.loads(body)["status"]["userInfo"]["username"] == "alice"
