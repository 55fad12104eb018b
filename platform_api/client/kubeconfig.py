"""kubeconfig files: the cluster, user and context of a connection, as kubectl reads them.

File paths are relative to the kubeconfig's directory; ``-data`` fields hold base64
PEM.  The connection is a treq client with the cluster's CA as the only trust root
(or the system roots when none is given), the user's client certificate, and the
user's bearer token.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlparse

import orjson
import yaml
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from OpenSSL import SSL
from twisted.internet import ssl
from twisted.internet.interfaces import IOpenSSLClientConnectionCreator
from twisted.web.iweb import IPolicyForHTTPS
from zope.interface import implementer

from platform_api.client.execplugin import (
    CLUSTER_EXTENSION,
    ExecConfig,
    ExecCredentials,
    ExecError,
)
from platform_api.pem import certificate_options


class KubeconfigError(ValueError):
    pass


@dataclass
class Connection:
    """Where and how to connect: what one context of a kubeconfig says."""

    server: str
    ca_pem: bytes | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    token: str = ""
    tls_server_name: str = ""
    insecure: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    exec_credentials: ExecCredentials | None = None
    # Trust exactly this certificate, whoever issued it (the server's loopback client).
    pinned_pem: bytes | None = None
    # The URL errors name when not ``server``: kube calls a webhook's service by its DNS
    # name (``https://name.namespace.svc:443/path``), dialing the address it resolves.
    shown: str = ""

    def client(self, reactor: Any, keep_alive: int = 2) -> Any:
        """A treq client for this connection (one keep-alive pool of ``keep_alive``
        connections); with an exec plugin, one that fetches credentials first and
        retries once after a 401."""
        if self.exec_credentials is not None:
            return _ExecClient(self, self.exec_credentials, reactor)
        # Here, not at the top: flags are checked by loading kubeconfigs, in the worker
        # supervisor too, which makes no client (treq and twisted.web's client: ~35 ms).
        import treq  # noqa: PLC0415
        from twisted.web.client import Agent  # noqa: PLC0415

        from platform_api.client.pool import ConnectionPool  # noqa: PLC0415

        pool = ConnectionPool(reactor, keep_alive)
        agent = Agent(reactor, contextFactory=_Policy(self), pool=pool)
        return treq.client.HTTPClient(agent)

    def tls_creator(self, hostname: bytes, port: int) -> IOpenSSLClientConnectionCreator:
        """The TLS a client of this connection speaks to ``hostname``, for a connection
        made by hand (one an HTTP client cannot carry: an upgraded one)."""
        return _Policy(self).creatorForNetloc(hostname, port)

    def request_headers(self) -> dict[str, str]:
        out = {"Content-Type": "application/json", "Accept": "application/json", **self.headers}
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        return out


class _ExecClient:
    """treq's ``post``/``get`` with plugin credentials; a new certificate means a new
    client, so the next request makes a new TLS handshake."""

    def __init__(self, connection: Connection, credentials: ExecCredentials, reactor: Any) -> None:
        self.connection, self.credentials, self.reactor = connection, credentials, reactor
        self._client: Any = None
        self._cert: bytes | None = None

    async def _request(self, method: str, url: str, **kwargs: Any) -> Any:
        for attempt in range(2):
            credential = await self.credentials.get()
            if self._client is None or credential.cert_pem != self._cert:
                plain = replace(
                    self.connection,
                    exec_credentials=None,
                    cert_pem=credential.cert_pem or self.connection.cert_pem,
                    key_pem=credential.key_pem or self.connection.key_pem,
                )
                self._client, self._cert = plain.client(self.reactor), credential.cert_pem
            headers = dict(kwargs.pop("headers", None) or {})
            if credential.token:
                headers["Authorization"] = f"Bearer {credential.token}"
            reply = await self._client.request(method, url, headers=headers, **kwargs)
            if reply.code != 401 or attempt:
                return reply
            self.credentials.invalidate()
        return reply

    async def post(self, url: str, **kwargs: Any) -> Any:
        return await self._request("POST", url, **kwargs)

    async def get(self, url: str, **kwargs: Any) -> Any:
        return await self._request("GET", url, **kwargs)


@implementer(IPolicyForHTTPS)
class _Policy:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        trust = None
        if connection.ca_pem:
            roots = [ssl.Certificate.loadPEM(pem) for pem in _pems(connection.ca_pem)]
            trust = ssl.trustRootFromCertificates(roots)
        self.trust = trust
        self._creators: dict[tuple[bytes, int], IOpenSSLClientConnectionCreator] = {}
        self.client_cert: dict[str, Any] = {}
        if connection.cert_pem and connection.key_pem:
            self.client_cert = certificate_options(connection.key_pem, connection.cert_pem)

    def creatorForNetloc(self, hostname: bytes, port: int) -> IOpenSSLClientConnectionCreator:
        # twisted.web's Agent asks on every request, even one that reuses a pooled
        # connection; building TLS options (cipher selection) each time cost a quarter of
        # a webhook call's CPU.
        key = (hostname, port)
        creator = self._creators.get(key)
        if creator is None:
            creator = self._creators[key] = self._creator(hostname)
        return creator

    def _creator(self, hostname: bytes) -> IOpenSSLClientConnectionCreator:
        name = self.connection.tls_server_name or hostname.decode("idna")
        if self.connection.pinned_pem is not None:
            return _Pinned(self.connection.pinned_pem)
        if self.connection.insecure:
            return ssl.CertificateOptions(verify=False, **self.client_cert)
        return ssl.optionsForClientTLS(
            name, trustRoot=self.trust, extraCertificateOptions=self.client_cert
        )


@implementer(IOpenSSLClientConnectionCreator)
class _Pinned:
    """Accepts one server certificate and no other, whatever its chain: a client that
    knows the exact certificate needs no CA, and a serving certificate given on the
    command line may have been issued by one this process cannot name."""

    def __init__(self, pem: bytes) -> None:
        self._der = x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)
        self._context = SSL.Context(SSL.TLS_CLIENT_METHOD)
        self._context.set_verify(SSL.VERIFY_PEER | SSL.VERIFY_FAIL_IF_NO_PEER_CERT, self._check)

    def _check(self, conn: SSL.Connection, cert: Any, errno: int, depth: int, ok: int) -> bool:
        # Issuers are not judged; the leaf must be the pinned one (whose key it proves).
        return depth > 0 or cert.to_cryptography().public_bytes(Encoding.DER) == self._der

    def clientConnectionForTLS(self, tls_protocol: Any) -> SSL.Connection:
        connection = SSL.Connection(self._context, None)
        connection.set_app_data(tls_protocol)
        connection.set_connect_state()
        return connection


def _pems(data: bytes) -> list[bytes]:
    marker = b"-----END CERTIFICATE-----"
    return [part + marker for part in data.split(marker) if b"-----BEGIN" in part]


def read_material(holder: dict[str, Any], name: str, base: str) -> bytes | None:
    """``<name>-data`` (base64) or the file ``<name>`` names, relative to ``base``."""
    if holder.get(f"{name}-data"):
        return base64.b64decode(holder[f"{name}-data"])
    path = holder.get(name)
    if not path:
        return None
    path = path if os.path.isabs(path) else os.path.join(base, path)
    with open(path, "rb") as f:
        return f.read()


def _named(items: Any, name: str, what: str) -> dict[str, Any]:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            body = item.get(what)
            return body if isinstance(body, dict) else {}
    raise KubeconfigError(f"{what} {name!r} not found")


def load(path: str, context: str = "") -> Connection:
    """The connection of ``context`` (default: current-context, else the only one)."""
    with open(path, "rb") as f:
        config = yaml.safe_load(f) or {}
    if not isinstance(config, dict):
        raise KubeconfigError(f"{path}: not a kubeconfig")
    base = os.path.dirname(os.path.abspath(path))
    contexts = config.get("contexts") or []
    name = context or config.get("current-context") or ""
    if not name and len(contexts) == 1:
        name = contexts[0].get("name", "")
    if name:
        ctx = _named(contexts, name, "context")
        cluster = _named(config.get("clusters"), ctx.get("cluster", ""), "cluster")
        user_name = ctx.get("user", "")
        user = _named(config.get("users"), user_name, "user") if user_name else {}
    else:  # webhook files may hold one cluster and one user without a context
        clusters, users = config.get("clusters") or [], config.get("users") or []
        if len(clusters) != 1:
            raise KubeconfigError(f"{path}: no current-context and not exactly one cluster")
        cluster = clusters[0].get("cluster") or {}
        user = (users[0].get("user") or {}) if len(users) == 1 else {}
    return _connection(cluster, user, base, path)


def _connection(cluster: dict[str, Any], user: dict[str, Any], base: str, path: str) -> Connection:
    server = cluster.get("server") or ""
    url = urlparse(server)
    if url.scheme != "https" or not url.hostname:
        raise KubeconfigError(f"{path}: server must be an https URL, got {server!r}")
    token = user.get("token") or ""
    if not token and user.get("tokenFile"):
        token_path = user["tokenFile"]
        token_path = token_path if os.path.isabs(token_path) else os.path.join(base, token_path)
        with open(token_path) as f:
            token = f.read().strip()
    ca_pem = read_material(cluster, "certificate-authority", base)
    credentials = None
    if user.get("exec"):
        try:
            config = ExecConfig.parse(user["exec"], base)
        except ExecError as e:
            raise KubeconfigError(f"{path}: {e}") from None
        credentials = ExecCredentials(config, _cluster_info(cluster, server, ca_pem))
    return Connection(
        server=server,
        ca_pem=ca_pem,
        cert_pem=read_material(user, "client-certificate", base),
        key_pem=read_material(user, "client-key", base),
        token=token,
        tls_server_name=cluster.get("tls-server-name") or "",
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        exec_credentials=credentials,
    )


def _cluster_info(cluster: dict[str, Any], server: str, ca_pem: bytes | None) -> dict[str, Any]:
    """``spec.cluster`` of the ExecCredential a plugin receives with provideClusterInfo."""
    info: dict[str, Any] = {"server": server}
    if ca_pem:
        info["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    for extension in cluster.get("extensions") or ():
        if extension.get("name") == CLUSTER_EXTENSION:
            info["config"] = extension.get("extension")
    return info


async def post_review(
    client: Any, connection: Connection, review: dict[str, Any], timeout: float
) -> dict[str, Any]:
    """POST a review object to the service and return the answer's ``status``; raises
    ``ReviewError`` when the service fails, answers non-2xx, or answers garbage."""
    try:
        reply = await client.post(
            connection.server,
            data=orjson.dumps(review),
            headers=connection.request_headers(),
            timeout=timeout,
        )
        body = await reply.content()
    except Exception as e:
        raise ReviewError(str(e)) from None
    if not 200 <= reply.code < 300:
        raise ReviewError(f"status {reply.code}")
    try:
        status = orjson.loads(body).get("status") or {}
    except (ValueError, AttributeError):
        raise ReviewError(f"malformed {review.get('kind')}") from None
    if not isinstance(status, dict):
        raise ReviewError(f"malformed {review.get('kind')}")
    return status


class ReviewError(Exception):
    pass
