"""POSTing an AdmissionReview to a webhook, with kube's timeout and error texts.

The address is ``clientConfig.url`` or the Service it names (resolved through its
Endpoints, TLS verified for ``<name>.<namespace>.svc``), verified against ``caBundle``
(the system roots without one).  ``?timeout=<n>s`` tells the webhook its deadline, as
kube's REST client does.  Every failure to get a usable answer is a ``CallError`` whose
text continues kube's ``failed calling webhook "<name>": ...``.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

import orjson

from platform_api.admission.webhook.credentials import CredentialResolver
from platform_api.apiextensions.validation_webhook import ca_bundle_error
from platform_api.client.goerrors import go_error, status_text
from platform_api.client.kubeconfig import Connection
from platform_api.codec.jsonsyntax import syntax_error
from platform_api.context import Trace
from platform_api.registry.serviceresolver import ResolveError, ServiceResolver

Obj = dict[str, Any]
USER_AGENT = "platform-apiserver-admission"
MAX_ANSWER = 3 * 1024 * 1024
# Connections kept open per webhook: every concurrent write calls it, and a new TLS
# handshake costs more than the call (treq's default of 2 made 8 writers 4x slower).
KEEP_ALIVE = 32


class CallError(Exception):
    """No usable answer; ``str()`` is what follows ``failed calling webhook "x": ``."""


class WebhookCaller:
    """One treq client per webhook address, kept across requests (keep-alive)."""

    def __init__(
        self,
        reactor: Any,
        resolver: ServiceResolver | None,
        credentials: dict[str, CredentialResolver] | None = None,
    ) -> None:
        self.reactor = reactor
        self.resolver = resolver
        self.credentials = credentials or {}
        self._clients: dict[tuple[str, str, str, bytes], Any] = {}

    def _with_credentials(self, connection: Connection, target: str, plugin: str) -> Connection:
        """The credentials ``--admission-control-config-file`` gives ``plugin`` for a host."""
        resolver = self.credentials.get(plugin)
        found = resolver.for_target(target) if resolver is not None else None
        if found is None:
            return connection
        return replace(
            connection, cert_pem=found.cert_pem, key_pem=found.key_pem, token=found.token
        )

    def _connection(self, config: Obj, plugin: str) -> Connection:
        ca = base64.b64decode(config["caBundle"]) if config.get("caBundle") else None
        problem = ca_bundle_error(ca) if ca else None
        if problem is not None:  # client-go cannot build the REST client: no call made
            raise CallError(
                f"could not get REST client: unable to load root certificates: {problem}"
            )
        if config.get("url"):
            url = str(config["url"])
            target = url.split("://", 1)[-1].split("/", 1)[0]
            return self._with_credentials(Connection(server=url, ca_pem=ca), target, plugin)
        service = config.get("service") or {}
        namespace, name = service.get("namespace", ""), service.get("name", "")
        port, path = int(service.get("port") or 443), service.get("path") or ""
        shown = f"https://{name}.{namespace}.svc:{port}{path}"
        if self.resolver is None:
            raise CallError(f'failed to call webhook: Post "{shown}": no service resolver')
        try:
            address = self.resolver.resolve(namespace, name, port)
        except ResolveError as e:
            raise CallError(f'failed to call webhook: Post "{shown}": {e}') from None
        connection = Connection(
            server=address.url(path), ca_pem=ca, tls_server_name=address.server_name
        )
        return replace(connection, shown=shown)

    def _client(self, connection: Connection) -> Any:
        key = (
            connection.server,
            connection.tls_server_name,
            (connection.ca_pem or b"").decode("latin-1"),
            connection.cert_pem or b"",
        )
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = connection.client(self.reactor, KEEP_ALIVE)
        return client

    async def call(
        self,
        config: Obj,
        review: Obj,
        timeout: int,
        plugin: str,
        trace: Trace | None = None,
        parent: Any = None,
    ) -> Obj:
        """The webhook's decoded answer to ``review``; ``plugin`` picks the credentials.
        A traced request's call is a client span under ``parent``, its context sent."""
        connection = self._connection(config, plugin)
        base = connection.server
        url = f"{base}{'&' if '?' in base else '?'}timeout={timeout}s"
        shown = connection.shown or base
        shown += f"{'&' if '?' in shown else '?'}timeout={timeout}s"
        headers = _headers(connection.token)
        span = None
        if trace is not None:
            span, carried = trace.outgoing(parent, "POST", url)
            headers.update(carried)
        try:
            reply = await self._client(connection).post(
                url, data=orjson.dumps(review), headers=headers, timeout=timeout
            )
            body = await reply.content()
        except Exception as e:
            if span is not None:
                span.set_attribute("error.type", type(e).__name__)
            why = go_error(e, base)
            raise CallError(f'failed to call webhook: Post "{shown}": {why}') from None
        else:
            if span is not None:
                span.set_attribute("http.response.status_code", reply.code)
        finally:
            if span is not None:
                span.end()
        if not 200 <= reply.code < 300:
            raise CallError(f"failed to call webhook: {status_text(reply.code, body)}")
        if len(body) > MAX_ANSWER:
            raise CallError("failed to call webhook: response body too large")
        try:
            answer: Obj = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            why = syntax_error(body) or str(e)  # Go's words for the first syntax error
            raise CallError(
                f"failed to call webhook: couldn't get version/kind; json parse error: {why}"
            ) from None
        return answer


def _headers(token: str) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, */*",
        "User-Agent": USER_AGENT,
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers
