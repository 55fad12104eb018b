"""OpenID Connect ID tokens against a provider served over HTTPS from the test."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from platform_api.apiserver import pki
from platform_api.authentication.serviceaccount import jwk
from tests.e2e.conftest import Server, session_for, start_server

SELF = {"apiVersion": "authentication.platform.io/v1", "kind": "SelfSubjectReview"}
REVIEW = "/apis/authentication.platform.io/v1/selfsubjectreviews"


class Provider:
    """Discovery and JWKS of a tiny provider; keys can be rotated."""

    def __init__(self, certs: pki.Paths) -> None:
        self.keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048)]
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": provider.issuer, "jwks_uri": provider.issuer + "/keys"}
                else:
                    body = {"keys": [jwk(k.public_key()) for k in provider.keys]}
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certs.serving_cert, certs.serving_key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.issuer = f"https://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def token(self, key_index: int = -1, **claims: Any) -> str:
        key = self.keys[key_index]
        now = int(time.time())
        body = {"iss": self.issuer, "aud": "platform", "sub": "u1", "iat": now, "exp": now + 600}
        body.update(claims)
        return jwt.encode(body, key, "RS256", headers={"kid": jwk(key.public_key())["kid"]})


@pytest.fixture(scope="module")
def oidc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Provider]]:
    root: Path = tmp_path_factory.mktemp("oidc")
    certs = pki.ensure_pki(str(root / "provider-pki"), "127.0.0.1")
    provider = Provider(certs)
    server = start_server(
        root / "data",
        "--oidc-issuer-url",
        provider.issuer,
        "--oidc-client-id",
        "platform",
        "--oidc-ca-file",
        certs.ca_cert,
        "--oidc-groups-claim",
        "groups",
        "--oidc-groups-prefix",
        "oidc:",
        "--oidc-required-claim",
        "tenant=a",
    )
    yield server, provider
    server.stop()
    provider.httpd.shutdown()


def user_of(server: Server, token: str) -> Any:
    r = session_for(server, token=token).post(server.url + REVIEW, json=SELF)
    return r.json()["status"]["userInfo"] if r.status_code == 201 else r.status_code


def test_id_tokens(oidc: tuple[Server, Provider]) -> None:
    server, provider = oidc
    token = provider.token(tenant="a", groups=["dev"])
    assert user_of(server, token) == {
        "username": f"{provider.issuer}#u1",
        "groups": ["oidc:dev", "system:authenticated"],
    }
    assert user_of(server, provider.token(tenant="b")) == 401  # required claim
    assert user_of(server, provider.token(tenant="a", aud="other")) == 401
    assert user_of(server, provider.token(tenant="a", exp=int(time.time()) - 10)) == 401


def test_oidc_flag_rules(tmp_path: Path) -> None:
    for args, message in (
        (["--oidc-issuer-url", "https://x"], "must be specified together"),
        (["--oidc-issuer-url", "http://x", "--oidc-client-id", "c"], "URL scheme must be https"),
    ):
        with pytest.raises(RuntimeError) as failed:
            start_server(tmp_path / "data", *args)
        assert message in str(failed.value)


def write_config(path: Path, provider: Provider, ca: str, extra_rules: str = "") -> None:
    path.write_text(
        f"""apiVersion: apiserver.config.platform.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: {provider.issuer}
    audiences: [platform, other]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
{"".join("      " + line + chr(10) for line in Path(ca).read_text().splitlines())}
  claimValidationRules:
  - expression: 'claims.tenant == "a"'
    message: tenant must be a
  claimMappings:
    username:
      expression: 'claims.sub + "@idp"'
    groups:
      claim: groups
      prefix: "idp:"
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant
  userValidationRules:
  - expression: '!user.username.startsWith("system:")'
    message: no system users
{extra_rules}"""
    )


def test_authentication_config(tmp_path: Path) -> None:
    certs = pki.ensure_pki(str(tmp_path / "provider-pki"), "127.0.0.1")
    provider = Provider(certs)
    config = tmp_path / "authn.yaml"
    write_config(config, provider, certs.ca_cert)
    server = start_server(tmp_path / "data", "--authentication-config", str(config))
    try:
        token = provider.token(aud="other", tenant="a", groups=["dev"])
        assert user_of(server, token) == {
            "username": "u1@idp",
            "groups": ["idp:dev", "system:authenticated"],
            "extra": {"example.com/tenant": ["a"]},
        }
        assert user_of(server, provider.token(tenant="b")) == 401
        assert user_of(server, provider.token(tenant="a", sub="system:x")) == 401
    finally:
        server.stop()
        provider.httpd.shutdown()


def test_authentication_config_errors_stop_the_start(tmp_path: Path) -> None:
    certs = pki.ensure_pki(str(tmp_path / "provider-pki"), "127.0.0.1")
    provider = Provider(certs)
    config = tmp_path / "authn.yaml"
    write_config(config, provider, certs.ca_cert)
    config.write_text(config.read_text().replace("claims.sub + ", "claims.sub + + "))
    with pytest.raises(RuntimeError) as failed:
        start_server(tmp_path / "data", "--authentication-config", str(config))
    text = str(failed.value)
    assert "jwt[0].claimMappings.username.expression: Invalid value:" in text
    assert "compilation failed: ERROR: <input>:1:" in text
    write_config(config, provider, certs.ca_cert)
    with pytest.raises(RuntimeError) as failed:
        start_server(
            tmp_path / "data2",
            "--authentication-config",
            str(config),
            "--oidc-issuer-url",
            "https://x",
            "--oidc-client-id",
            "c",
        )
    assert "authentication-config file and oidc-* flags are mutually exclusive" in str(failed.value)
    provider.httpd.shutdown()
