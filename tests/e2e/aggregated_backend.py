"""A stand-in aggregated API server for the proxy's end-to-end tests (its own process).

    python -m tests.e2e.aggregated_backend PORT_FILE CERT KEY CLIENT_CA [--document]

Serves TLS on a free loopback port (written to PORT_FILE), asks for a client
certificate signed by CLIENT_CA, and answers:

- with ``--document``, ``/apis`` asked for an aggregated discovery document: one for
  ``documented.example.com/v1`` (resource ``gadgets``), with an ETag;

- ``/apis/<group>/<version>``: an APIResourceList with one resource, ``widgets``;
- ``GET /apis/<group>/<version>/namespaces/kubectl/widgets``: a WidgetList of one;
- ``.../widgets?watch=1``: three watch events, 0.3 s apart, then the end of the stream;
- an upgrade request (``Connection: Upgrade``): ``101 Switching Protocols`` naming who
  asked (``X-Seen-User``), then every byte it is sent back upper-cased; with
  ``?status=<code>``, that code and a short body instead;
- anything else: what it received, as JSON (method, path, query, headers, body, the
  client certificate's common name), with ``?status=<code>`` as the status code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
from cryptography.x509.oid import NameOID
from twisted.internet import reactor, ssl, task
from twisted.web import resource, server

from platform_api.pem import certificate_options

GROUP_VERSION_PARTS = 3
WIDGET = {"apiVersion": "widgets.example.com/v1alpha1", "kind": "Widget"}
LIST = {
    "apiVersion": "widgets.example.com/v1alpha1",
    "kind": "WidgetList",
    "metadata": {"resourceVersion": "7"},
    "items": [{**WIDGET, "metadata": {"name": "w1", "namespace": "kubectl"}}],
}


DOCUMENT_TYPE = b"application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
GADGETS = {
    "resource": "gadgets",
    "responseKind": {"group": "documented.example.com", "version": "v1", "kind": "Gadget"},
    "scope": "Namespaced",
    "singularResource": "gadget",
    "verbs": ["get", "list"],
}
DOCUMENT = {
    "kind": "APIGroupDiscoveryList",
    "apiVersion": "apidiscovery.platform.io/v2",
    "metadata": {},
    "items": [
        {
            "metadata": {"name": "documented.example.com"},
            "versions": [{"version": "v1", "resources": [GADGETS], "freshness": "Current"}],
        }
    ],
}


class Backend(resource.Resource):
    isLeaf = True

    def __init__(self, document: bool = False) -> None:
        super().__init__()
        self.document = document

    def render(self, request: Any) -> Any:
        parts = request.path.decode().strip("/").split("/")
        request.setHeader(b"content-type", b"application/json")
        request.setHeader(b"x-backend", b"yes")
        if b"upgrade" in (request.getHeader(b"connection") or b"").lower():
            return self._upgrade(request)
        accept = request.getHeader(b"accept") or b""
        if self.document and parts == ["apis"] and b"as=APIGroupDiscoveryList" in accept:
            request.setHeader(b"content-type", DOCUMENT_TYPE)
            request.setHeader(b"etag", b'"gadgets-1"')
            return orjson.dumps(DOCUMENT)
        if len(parts) == GROUP_VERSION_PARTS and parts[0] == "apis":
            return orjson.dumps(
                {
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": f"{parts[1]}/{parts[2]}",
                    "resources": [
                        {
                            "name": "widgets",
                            "singularName": "widget",
                            "namespaced": True,
                            "kind": "Widget",
                            "verbs": ["get", "list", "watch", "create"],
                        }
                    ],
                }
            )
        if parts[-3:] == ["namespaces", "kubectl", "widgets"] and request.method == b"GET":
            return orjson.dumps(LIST)
        if request.args.get(b"watch") == [b"1"]:
            self._stream(request, 0)
            return server.NOT_DONE_YET
        status = request.args.get(b"status")
        if status:
            request.setResponseCode(int(status[0]))
        return orjson.dumps(self._echo(request))

    def _upgrade(self, request: Any) -> Any:
        status = request.args.get(b"status")
        if status:
            request.setResponseCode(int(status[0]))
            return b"no upgrade here\n"
        channel = request.channel
        channel.setTimeout(None)
        who = request.getHeader(b"x-remote-user") or b""
        upgrade = request.getHeader(b"upgrade") or b""
        channel.transport.write(
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "
            + upgrade
            + b"\r\nX-Seen-User: "
            + who
            + b"\r\n\r\n"
        )
        channel.dataReceived = lambda data: channel.transport.write(data.upper())
        return server.NOT_DONE_YET

    def _echo(self, request: Any) -> dict[str, Any]:
        peer = None
        certificate = request.channel.transport.getPeerCertificate()
        if certificate is not None:
            names = certificate.to_cryptography().subject
            peer = names.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
        headers: dict[str, list[str]] = {}
        for name, values in request.requestHeaders.getAllRawHeaders():
            headers[name.decode().lower()] = [v.decode() for v in values]
        return {
            "method": request.method.decode(),
            "path": request.path.decode(),
            "query": request.uri.decode().partition("?")[2],
            "headers": headers,
            "body": request.content.read().decode(),
            "client": peer,
        }

    def _stream(self, request: Any, n: int) -> None:
        if request.finished or getattr(request, "_disconnected", False):
            return
        if n == 3:
            request.finish()
            return
        event = {"type": "ADDED", "object": {"kind": "Widget", "metadata": {"name": f"w{n}"}}}
        request.write(orjson.dumps(event) + b"\n")
        task.deferLater(reactor, 0.3, self._stream, request, n + 1)


def main() -> None:
    port_file, cert, key, client_ca = sys.argv[1:5]
    document = "--document" in sys.argv[5:]
    authority = ssl.Certificate.loadPEM(Path(client_ca).read_bytes()).original  # an X509Store's
    options = ssl.CertificateOptions(
        **certificate_options(Path(key).read_bytes(), Path(cert).read_bytes()),
        verify=True,
        caCerts=[authority],
        requireCertificate=False,
    )
    port = reactor.listenSSL(0, server.Site(Backend(document)), options, interface="127.0.0.1")
    Path(port_file).write_text(str(port.getHost().port))
    reactor.run()


if __name__ == "__main__":
    main()
