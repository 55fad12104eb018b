"""What the sample webhook services share: flags, TLS, the caller check, the listener."""

from __future__ import annotations

from typing import Any

import orjson
from klein import Klein
from twisted.application.service import Service
from twisted.internet import reactor as global_reactor
from twisted.internet.endpoints import SSL4ServerEndpoint
from twisted.logger import Logger
from twisted.python import usage
from twisted.web.server import Request, Site

from platform_api.apiserver.tls import serving_options
from platform_api.authentication.interface import AuthenticationError
from platform_api.authentication.x509 import (
    CertificateVerifier,
    X509Authenticator,
    load_pem_certificates,
)

log = Logger()


class ServingOptions(usage.Options):
    optParameters = [
        ["port", "p", "8443", "HTTPS port (0: any free port, logged at start)."],
        ["bind-address", None, "127.0.0.1", "Address to listen on."],
        ["tls-cert-file", None, None, "Serving certificate (PEM), required."],
        ["tls-private-key-file", None, None, "Its private key (PEM), required."],
        ["client-ca-file", None, None, "When set, callers must present a certificate it signed."],
    ]

    def postOptions(self) -> None:
        if not self["tls-cert-file"] or not self["tls-private-key-file"]:
            raise usage.UsageError("--tls-cert-file and --tls-private-key-file are required")


class CallerCheck:
    """Accept only callers with a client certificate the configured CA signed."""

    def __init__(self, client_ca_file: str | None) -> None:
        self._x509 = (
            X509Authenticator(CertificateVerifier(load_pem_certificates(client_ca_file)))
            if client_ca_file
            else None
        )

    async def allowed(self, request: Request) -> bool:
        if self._x509 is None:
            return True
        try:
            return await self._x509.authenticate(request) is not None
        except AuthenticationError:
            return False


class WebhookService(Service):
    """Listen with TLS and log the address, so a caller started with port 0 can find it."""

    def __init__(self, app: Klein, options: ServingOptions, name: str, reactor: Any = None) -> None:
        self.app, self.options, self.label = app, options, name
        self.reactor = reactor or global_reactor
        self.port: Any = None

    def startService(self) -> None:
        super().startService()
        opts = self.options
        cas = load_pem_certificates(opts["client-ca-file"]) if opts["client-ca-file"] else []
        context = serving_options(opts["tls-cert-file"], opts["tls-private-key-file"], cas)
        endpoint = SSL4ServerEndpoint(
            self.reactor, int(opts["port"]), context, interface=opts["bind-address"]
        )
        site = Site(self.app.resource())
        site.noisy = False
        d = endpoint.listen(site)

        def listening(port: Any) -> None:
            self.port = port
            address = port.getHost()
            log.info(
                "{label} serving on https://{host}:{port}",
                label=self.label,
                host=address.host,
                port=address.port,
            )

        d.addCallback(listening)

    def stopService(self) -> Any:
        super().stopService()
        return self.port.stopListening() if self.port is not None else None


async def read_review(
    request: Request,
    caller: CallerCheck,
    versions: tuple[str, ...],
    kind: str,
    part: str = "spec",
) -> dict[str, Any] | bytes:
    """The review a caller posted, or the error body to answer (403 or 400) instead.

    ``part`` is the review's object the service reads (``spec``; ``request`` in a
    ConversionReview)."""
    request.setHeader(b"content-type", b"application/json")
    if not await caller.allowed(request):
        request.setResponseCode(403)
        return b'{"error":"client certificate required"}'
    try:
        body = orjson.loads(request.content.read())
        if body["apiVersion"] not in versions or body.get("kind") != kind:
            raise ValueError(body["apiVersion"])
        if not isinstance(body.get(part), dict):
            raise ValueError(part)
    except (ValueError, KeyError, TypeError):
        request.setResponseCode(400)
        return orjson.dumps({"error": f"expected a {kind} of {' or '.join(versions)}"})
    review: dict[str, Any] = body
    return review
