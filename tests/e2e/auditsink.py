"""A tiny HTTPS audit webhook sink for the e2e tests: appends each EventList's events to a
file as JSON lines and writes its port to a file.

``python -m tests.e2e.auditsink CERT KEY EVENTS_FILE PORT_FILE``
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
from twisted.internet import reactor
from twisted.internet.endpoints import SSL4ServerEndpoint
from twisted.web.resource import Resource
from twisted.web.server import Request, Site

from platform_api.apiserver.tls import serving_options


class Sink(Resource):
    isLeaf = True

    def __init__(self, out: Path) -> None:
        super().__init__()
        self.out = out

    def render_POST(self, request: Request) -> bytes:
        body = orjson.loads(request.content.read())
        with self.out.open("ab") as f:
            for item in body.get("items", []):  # each noted with its list's apiVersion
                f.write(orjson.dumps({**item, "listApiVersion": body.get("apiVersion")}) + b"\n")
        return b"{}"


def main(cert: str, key: str, events: str, port_file: str) -> None:
    endpoint = SSL4ServerEndpoint(reactor, 0, serving_options(cert, key, []), interface="127.0.0.1")

    def listening(port: Any) -> None:
        Path(port_file).write_text(str(port.getHost().port))

    endpoint.listen(Site(Sink(Path(events)))).addCallback(listening)
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main(*sys.argv[1:5])
