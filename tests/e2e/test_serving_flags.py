"""The serving flags on the real server: --tls-min-version and --tls-cipher-suites
(handshakes a real TLS client makes, allowed or refused), --strict-transport-security-
directives and --cors-allowed-origins (the headers a browser reads), and the one-line
refusals of bad values."""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from tests.e2e.certs import serving_certs
from tests.e2e.conftest import Server, session_for, start_server

AES128 = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"


def handshake(server: Server, highest: ssl.TLSVersion, ciphers: str = "") -> tuple[str, str]:
    """(protocol, cipher) of a handshake, or ("refused", OpenSSL's reason)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.maximum_version = highest
    if ciphers:
        ctx.set_ciphers(ciphers)
    port = int(server.base_url.rsplit(":", 1)[1])
    try:
        with socket.create_connection(("127.0.0.1", port)) as raw, ctx.wrap_socket(raw) as tls:
            return str(tls.version()), tls.cipher()[0]
    except ssl.SSLError as e:
        return "refused", str(e.reason)


def test_the_default_is_tls_1_2_with_any_suite(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data")
    try:
        assert handshake(server, ssl.TLSVersion.TLSv1_2, AES128)[0] == "TLSv1.2"
        assert handshake(server, ssl.TLSVersion.TLSv1_3)[0] == "TLSv1.3"
        assert _with_curve(server, "prime256v1", ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
    finally:
        server.stop()


def test_a_minimum_of_1_3_refuses_1_2(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", "--tls-min-version=VersionTLS13")
    try:
        assert handshake(server, ssl.TLSVersion.TLSv1_2) == (
            "refused",
            "TLSV1_ALERT_PROTOCOL_VERSION",
        )
        assert handshake(server, ssl.TLSVersion.TLSv1_3)[0] == "TLSv1.3"
    finally:
        server.stop()


def test_named_suites_are_the_only_ones_of_tls_1_2(tmp_path: Path) -> None:
    suites = "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
    server = start_server(tmp_path / "data", f"--tls-cipher-suites={suites}")
    try:
        assert handshake(server, ssl.TLSVersion.TLSv1_2)[1] in (
            "ECDHE-ECDSA-AES256-GCM-SHA384",
            "ECDHE-RSA-AES256-GCM-SHA384",
        )
        assert handshake(server, ssl.TLSVersion.TLSv1_2, AES128) == (
            "refused",
            "SSLV3_ALERT_HANDSHAKE_FAILURE",
        )
        assert handshake(server, ssl.TLSVersion.TLSv1_3)[0] == "TLSv1.3"  # not configurable
    finally:
        server.stop()


def test_http2_is_offered_unless_disabled(tmp_path: Path) -> None:
    for flags, protocol in (((), "h2"), (("--disable-http2-serving",), "http/1.1")):
        server = start_server(tmp_path / f"data{len(flags)}", *flags)
        try:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols(["h2", "http/1.1"])
            port = int(server.base_url.rsplit(":", 1)[1])
            with socket.create_connection(("127.0.0.1", port)) as raw, ctx.wrap_socket(raw) as tls:
                assert tls.selected_alpn_protocol() == protocol
        finally:
            server.stop()


def test_hsts_on_every_answer_and_cors_for_allowed_origins(tmp_path: Path) -> None:
    server = start_server(
        tmp_path / "data",
        "--strict-transport-security-directives=max-age=31536000,includeSubDomains",
        "--cors-allowed-origins=//console\\.example\\.com(:|$)",
    )
    try:
        admin = session_for(server, cert=server.admin_cert)
        url = server.url + "/api/v1/namespaces/default/configmaps"
        page = {"Origin": "https://console.example.com"}
        r = admin.get(url, headers=page)
        assert r.status_code == 200
        assert r.headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
        assert r.headers["Access-Control-Allow-Origin"] == "https://console.example.com"
        assert r.headers["Access-Control-Allow-Credentials"] == "true"
        # A preflight carries no credentials: answered before authentication.
        anonymous = session_for(server)
        r = anonymous.options(url, headers={**page, "Access-Control-Request-Method": "GET"})
        assert (r.status_code, r.content) == (204, b"")
        assert r.headers["Access-Control-Allow-Methods"] == "POST, GET, OPTIONS, PUT, DELETE, PATCH"
        r = anonymous.get(url, headers={"Origin": "https://evil.example.org"})
        assert (r.status_code, r.json()["reason"]) == (401, "Unauthorized")
        assert "Access-Control-Allow-Origin" not in r.headers
        assert r.headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    finally:
        server.stop()


def _with_curve(server: Server, curve: str, highest: ssl.TLSVersion) -> str:
    """The protocol of a handshake whose client offers only ``curve``, or "refused"."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.maximum_version = highest
    ctx.set_ecdh_curve(curve)  # OpenSSL 3: the client's one group, 1.2 and 1.3 alike
    port = int(server.base_url.rsplit(":", 1)[1])
    try:
        with socket.create_connection(("127.0.0.1", port)) as raw, ctx.wrap_socket(raw) as tls:
            return str(tls.version())
    except ssl.SSLError:
        return "refused"


def test_curve_preferences_limit_the_key_exchange(tmp_path: Path) -> None:
    """--tls-curve-preferences takes Go's CurveIDs: 24 is P-384 alone.  (A TLS 1.2
    client offering P-384 alone cannot check the P-256 serving certificate, in Go too.)"""
    server = start_server(tmp_path / "data", "--tls-curve-preferences=24")
    try:
        assert _with_curve(server, "secp384r1", ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
        for highest in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            assert _with_curve(server, "prime256v1", highest) == "refused"
    finally:
        server.stop()


def _served(server: Server, name: str | None, cert: tuple[str, str] | None = None) -> Any:
    """(the certificate's CN, ALPN, the first line of GET /api) over a connection that
    asks for ``name`` (None: no SNI)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"] if cert else ["h2", "http/1.1"])
    if cert:
        ctx.load_cert_chain(*cert)
    port = int(server.base_url.rsplit(":", 1)[1])
    with (
        socket.create_connection(("127.0.0.1", port)) as raw,
        ctx.wrap_socket(raw, server_hostname=name) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
        assert der is not None
        leaf = x509.load_der_x509_certificate(der)
        cn = leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
        status = b""
        if cert:
            tls.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            status = tls.recv(4096).split(b"\r\n", 1)[0]
        return cn, tls.selected_alpn_protocol(), status


def test_sni_certificates_by_name(tmp_path: Path) -> None:
    """kube's --tls-sni-cert-key: the earlier pair wins a name, listed names beat the
    certificate's, wildcards cover one label, a hello without SNI is matched by the
    address it reached, and client certificates still authenticate."""
    public = serving_certs(tmp_path / "public", ["api.public.example", "*.apps.example"])
    internal = serving_certs(tmp_path / "internal", ["internal-cert"])
    server = start_server(
        tmp_path / "data",
        f"--tls-sni-cert-key={public.serving_cert},{public.serving_key}",
        "--tls-sni-cert-key",
        f"{internal.serving_cert},{internal.serving_key}:api.internal,127.0.0.1",
    )
    try:
        assert _served(server, "api.public.example") == ("api.public.example", "h2", b"")
        assert _served(server, "Console.Apps.Example")[0] == "api.public.example"
        assert _served(server, "api.internal")[0] == "internal-cert"
        assert _served(server, None)[0] == "internal-cert"  # reached at 127.0.0.1
        assert _served(server, "elsewhere.example")[0] == "platform-apiserver"
        assert server.admin_cert is not None
        assert _served(server, "api.internal", server.admin_cert)[2] == b"HTTP/1.1 200 OK"
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("flag", "line"),
    [  # component-base's words; RC4 is Go's and not this OpenSSL's
        ("--tls-min-version=VersionTLS14", 'Error: unknown tls version "VersionTLS14"'),
        (
            "--tls-cipher-suites=TLS_FOO",
            "Error: Cipher suite TLS_FOO not supported or doesn't exist",
        ),
        (
            "--strict-transport-security-directives=max-age",
            "Error: --strict-transport-security-directives invalid, allowed values: "
            "max-age=expireTime, includeSubDomains, preload. see "
            "https://tools.ietf.org/html/rfc6797#section-6.1 for more information",
        ),
        (
            "--tls-cipher-suites=TLS_RSA_WITH_RC4_128_SHA",
            "Error: none of the cipher suites TLS_RSA_WITH_RC4_128_SHA is available in this "
            "server's OpenSSL",
        ),
        (
            "--tls-curve-preferences=30",
            "Error: curve preference 30 is not supported by the current Go version",
        ),
        ("--tls-curve-preferences=23,23", "Error: duplicate curve preference 23"),
        (
            "--egress-selector-config-file=/nonexistent/egress.yaml",
            "Error: failed to read egress selector config: unable to read egress selector "
            'configuration from "/nonexistent/egress.yaml" [open /nonexistent/egress.yaml: no '
            "such file or directory]",
        ),
        (
            "--tracing-config-file=/nonexistent/tracing.yaml",
            "Error: failed to read tracing config: unable to read tracing configuration from "
            '"/nonexistent/tracing.yaml": open /nonexistent/tracing.yaml: no such file or '
            "directory",
        ),
        (
            "--tls-sni-cert-key=only.crt",
            'Error: invalid argument "only.crt" for "--tls-sni-cert-key" flag: expected comma '
            "separated certificate and key file paths",
        ),
        (
            "--tls-sni-cert-key=/nonexistent/a.crt,/nonexistent/a.key",
            "Error: failed to load SNI cert and key: open /nonexistent/a.crt: no such file or "
            "directory",
        ),
    ],
)
def test_bad_values_stop_the_start_with_one_line(tmp_path: Path, flag: str, line: str) -> None:
    twistd = str(Path(sys.executable).parent / "twistd")
    result = subprocess.run(
        [twistd, "--pidfile=", "-n", "platform-apiserver", f"--data-dir={tmp_path}", flag],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr.strip()) == (1, line)
