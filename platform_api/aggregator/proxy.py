"""Requests for an aggregated API server's group versions, proxied: kube-aggregator's
proxy handler.

The request has been authenticated and authorized here; the aggregated server learns
who made it from kube's front-proxy headers (``X-Remote-User``, ``X-Remote-Group``,
``X-Remote-Extra-*``, ``X-Remote-Uid`` while the RemoteRequestHeaderUID gate is on),
trusting them because this server presents ``--proxy-client-cert-file``.  The caller's
own credentials (``Authorization``, ``Impersonate-*``) and hop-by-hop headers are not
passed on.  The answer streams back as it arrives (a watch stays a watch) and the
upstream connection is paused while the client is slow; an answer that cannot be had
is kube's plain-text 503 with the Go-worded error.  An upgrade request (exec,
port-forward) goes on a connection of its own and is joined to it (tunnel.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from twisted.internet.defer import Deferred
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.client import PotentialDataLoss, ResponseDone
from twisted.web.http_headers import Headers
from twisted.web.server import Request

from platform_api.aggregator.remote import Backend, plain_error, unavailable
from platform_api.aggregator.resolver import AggregatorResolver
from platform_api.aggregator.tunnel import request_head, tunnel
from platform_api.apiserver.requestinfo import is_upgrade_request
from platform_api.authentication.user import UserInfo
from platform_api.client.goerrors import go_error
from platform_api.client.kubeconfig import Connection
from platform_api.registry.serviceresolver import Address, ResolveError
from platform_api.timers import timer_clock

log = Logger()
DISCOVERY_TIMEOUT = 5.0  # kube's aggregatedDiscoveryTimeout
KEEP_ALIVE = 32
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"proxy-connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"trailers",
        b"transfer-encoding",
        b"upgrade",
        b"content-length",  # the agent counts the body it sends
        b"host",
    }
)
_DONE = Failure(ResponseDone())
_CREDENTIALS = (b"authorization", b"impersonate-", b"x-remote-user", b"x-remote-group")
_CREDENTIAL_PREFIXES = (b"impersonate-", b"x-remote-extra-", b"x-remote-uid")


Pems = tuple[bytes | None, bytes | None]
PEM_CHECK = 60.0  # seconds between reads of the proxy certificate files, as kube's resync


class AggregatorProxy:
    def __init__(
        self,
        reactor: Any,
        resolver: AggregatorResolver,
        client_pems: Callable[[], Pems] = lambda: (None, None),
        send_uid: bool = True,
    ) -> None:
        """``client_pems`` reads the proxy client certificate and key; they are read again
        every minute and a changed pair replaces the old one (kube reloads
        --proxy-client-cert-file), its clients with it."""
        self.reactor = reactor
        self.resolver = resolver
        self._read_pems = client_pems
        self.cert_pem, self.key_pem = client_pems()
        self._pems_read_at = timer_clock(reactor)()
        self.send_uid = send_uid
        self._clients: dict[tuple[str, str, bytes, bool], Any] = {}

    def _reload_pems(self) -> None:
        now = timer_clock(self.reactor)()
        if now - self._pems_read_at < PEM_CHECK:
            return
        self._pems_read_at = now
        try:
            pems = self._read_pems()
        except OSError as e:  # mid-rotation: keep the pair in use, try again later
            log.warn("reading the proxy client certificate: {error}", error=e)
            return
        if pems != (self.cert_pem, self.key_pem):
            self.cert_pem, self.key_pem = pems
            self._clients.clear()
            log.info("proxy client certificate reloaded")

    def client(self, backend: Backend, address: Address) -> Any:
        """A keep-alive treq client for one backend address, with the proxy certificate."""
        self._reload_pems()
        key = (address.url(), address.server_name, backend.ca_pem or b"", backend.insecure)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = self.fresh_client(backend, address)
        return client

    def fresh_client(self, backend: Backend, address: Address) -> Any:
        """A client of its own: kube's checks build a new transport each time, so a
        connection the server has since dropped never answers for it."""
        self._reload_pems()
        return self._connection(backend, address).client(self.reactor, KEEP_ALIVE)

    def _connection(self, backend: Backend, address: Address) -> Connection:
        return Connection(
            server=address.url(),
            ca_pem=backend.ca_pem,
            cert_pem=self.cert_pem,
            key_pem=self.key_pem,
            tls_server_name=address.server_name,
            insecure=backend.insecure,
        )

    def address(self, backend: Backend) -> Address:
        return self.resolver.resolve(backend.namespace, backend.service, backend.port)

    def auth_headers(self, headers: Headers, user: UserInfo) -> None:
        """kube's SetAuthProxyHeaders: who asked, as the aggregated server reads it."""
        headers.setRawHeaders(b"X-Remote-User", [user.name.encode()])
        if self.send_uid and user.uid:
            headers.setRawHeaders(b"X-Remote-Uid", [user.uid.encode()])
        if user.groups:
            headers.setRawHeaders(b"X-Remote-Group", [g.encode() for g in user.groups])
        for key, values in user.extra.items():
            name = b"X-Remote-Extra-" + quote(key, safe="!#$&'*+-.^_`|~").encode()
            headers.setRawHeaders(name, [v.encode() for v in values])

    async def forward(self, request: Request, user: UserInfo, backend: Backend) -> None:
        """Answer ``request`` with the aggregated server's answer."""
        try:
            address = self.address(backend)
        except ResolveError as e:
            log.warn("resolving {name}: {error}", name=backend.name, error=str(e))
            unavailable(request)
            return
        target = request.path.decode("latin-1") + _query(request.uri)
        url = address.url(target)
        timeout = DISCOVERY_TIMEOUT if _is_discovery(request.path) else None
        body = None
        problem = getattr(request, "body_problem", None)
        if problem is not None:  # not forwarded in part: what kube's handlers answer
            raise problem
        if request.content is not None:
            request.content.seek(0)
            body = request.content.read() or None
        if is_upgrade_request(request):
            await self._upgrade(request, user, backend, address, target, body or b"")
            return
        try:
            client = self.client(backend, address)
        except Exception as e:  # kube's transportBuildingError: a caBundle that is no PEM
            plain_error(request, 500, f"unable to load root certificates: {e}")
            return
        try:
            reply = await client.request(
                request.method.decode("latin-1"),
                url,
                headers=self._headers(request, user),
                data=body,
                unbuffered=True,
                timeout=timeout,
            )
        except Exception as e:
            plain_error(request, 503, go_error(e, url))
            return
        request.setResponseCode(reply.code, reply.phrase)
        for name, values in reply.headers.getAllRawHeaders():
            if name.lower() not in HOP_BY_HOP or name.lower() == b"content-length":
                request.responseHeaders.setRawHeaders(name, values)
        done: Deferred[None] = Deferred()
        relay = _Relay(request, done)
        request.notifyFinish().addErrback(relay.client_gone)
        reply.deliverBody(relay)
        await done

    async def _upgrade(
        self,
        request: Request,
        user: UserInfo,
        backend: Backend,
        address: Address,
        target: str,
        body: bytes,
    ) -> None:
        """An upgrade request, on a connection of its own (tunnel.py)."""
        self._reload_pems()
        try:
            creator = self._connection(backend, address).tls_creator(
                address.host.encode("idna"), address.port
            )
        except Exception as e:  # kube's transportBuildingError: a caBundle that is no PEM
            plain_error(request, 500, f"unable to load root certificates: {e}")
            return
        host = address.url().removeprefix("https://")
        head = request_head(request, target, host, self._headers(request, user), len(body))
        try:
            await tunnel(self.reactor, request, address, creator, head + body)
        except Exception as e:
            plain_error(request, 503, go_error(e, address.url(target)))

    def _headers(self, request: Request, user: UserInfo) -> Headers:
        out = Headers()
        for name, values in request.requestHeaders.getAllRawHeaders():
            lower = name.lower()
            if lower in HOP_BY_HOP or lower in _CREDENTIALS:
                continue
            if lower.startswith(_CREDENTIAL_PREFIXES):
                continue
            out.setRawHeaders(name, values)
        self.auth_headers(out, user)
        audit = request.responseHeaders.getRawHeaders(b"audit-id")
        if audit:
            out.setRawHeaders(b"Audit-Id", audit)
        peer = getattr(request.getClientAddress(), "host", "")
        if peer:
            prior = out.getRawHeaders(b"x-forwarded-for") or []
            out.setRawHeaders(b"X-Forwarded-For", [b", ".join([*prior, peer.encode()])])
        return out


class _Relay(Protocol):
    """The upstream body into the client's response, paced by the client."""

    def __init__(self, request: Request, done: Deferred[None]) -> None:
        self.request = request
        self.done = done
        self.gone = False

    def connectionMade(self) -> None:
        self.request.registerProducer(self.transport, True)

    def dataReceived(self, data: bytes) -> None:
        if not self.gone:
            self.request.write(data)

    def client_gone(self, _: Failure) -> None:
        self.gone = True
        if self.transport is not None:
            self.transport.stopProducing()  # type: ignore[attr-defined]

    def connectionLost(self, reason: Failure = _DONE) -> None:
        if not self.gone:
            self.request.unregisterProducer()
            if reason.check(ResponseDone, PotentialDataLoss):
                self.request.finish()
            else:  # cut off mid-answer: the client must not take it as whole (Go aborts)
                log.warn("aggregated server's answer cut off: {why}", why=reason.value)
                self.request.loseConnection()
        self.done.callback(None)


def _query(uri: bytes) -> str:
    """The query as Go's ``URL.Query().Encode()`` re-encodes it: sorted by key."""
    raw = uri.partition(b"?")[2].decode("latin-1")
    if not raw:
        return ""
    pairs = parse_qsl(raw, keep_blank_values=True)
    return "?" + urlencode(sorted(pairs, key=lambda p: p[0]))


def _is_discovery(path: bytes) -> bool:
    """``/apis/<group>/<version>``: kube gives these 5 seconds."""
    return len(path.strip(b"/").split(b"/")) == 3
