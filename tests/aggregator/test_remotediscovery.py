"""An aggregated server's legacy resource list as aggregated discovery entries, as kube's
ConvertGroupVersionIntoToDiscovery converts it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from twisted.internet.defer import Deferred, ensureDeferred, succeed
from twisted.internet.task import Clock
from twisted.web.http_headers import Headers

from platform_api.aggregator.proxy import AggregatorProxy
from platform_api.aggregator.remote import Backend
from platform_api.aggregator.remotediscovery import (
    RemoteDiscovery,
    is_group_discovery_list,
    to_aggregated,
)
from platform_api.authentication.user import UserInfo

EMPTY = {"group": "", "version": "", "kind": ""}


def test_resources_with_their_subresources() -> None:
    listed = [
        {"name": "flunders/status", "namespaced": True, "kind": "Flunder", "verbs": ["get"]},
        {
            "name": "flunders",
            "singularName": "flunder",
            "namespaced": True,
            "kind": "Flunder",
            "verbs": ["get", "list"],
            "shortNames": ["fl"],
            "categories": ["all"],
        },
        {
            "name": "fischers",
            "singularName": "",
            "namespaced": False,
            "kind": "Fischer",
            "verbs": [],
        },
        {"name": "orphans/scale", "namespaced": False, "verbs": ["get"]},
    ]
    assert to_aggregated(listed) == [
        {
            "resource": "flunders",
            "responseKind": {"group": "", "version": "", "kind": "Flunder"},
            "scope": "Namespaced",
            "singularResource": "flunder",
            "verbs": ["get", "list"],
            "shortNames": ["fl"],
            "categories": ["all"],
            "subresources": [
                {
                    "subresource": "status",
                    "responseKind": {"group": "", "version": "", "kind": "Flunder"},
                    "verbs": ["get"],
                }
            ],
        },
        {
            "resource": "fischers",
            "responseKind": {"group": "", "version": "", "kind": "Fischer"},
            "scope": "Cluster",
            "verbs": [],
        },
        {
            "resource": "orphans",
            "responseKind": EMPTY,
            "scope": "Cluster",
            "verbs": None,
            "subresources": [{"subresource": "scale", "responseKind": EMPTY, "verbs": ["get"]}],
        },
    ]


# -- fetching: the server's own document first, its legacy list failing that -------------

GROUP, SERVICE = (
    "agg.example.com",
    Backend("v1.agg.example.com", "ns", "api", 443, None, True, True),
)
DOCUMENT_TYPE = b"application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
GADGETS = {
    "resource": "gadgets",
    "responseKind": {"group": GROUP, "version": "v1", "kind": "Gadget"},
    "scope": "Namespaced",
    "verbs": ["get", "list"],
    "subresources": [{"subresource": "status", "responseKind": None, "verbs": ["get"]}],
}
DOCUMENT = {
    "kind": "APIGroupDiscoveryList",
    "apiVersion": "apidiscovery.platform.io/v2",
    "metadata": {},
    "items": [
        {
            "metadata": {"name": GROUP},
            "versions": [
                {"version": "v1", "resources": [GADGETS], "freshness": "Current"},
                {"version": "v2", "resources": [], "freshness": "Current"},
            ],
        }
    ],
}


@dataclass
class Reply:
    code: int
    headers: Headers
    body: bytes

    def content(self) -> Deferred[bytes]:
        return succeed(self.body)


class FakeServer:
    """The aggregated server behind the proxy: answers by path, records what it got."""

    def __init__(self, answers: dict[str, Callable[[Headers], Reply]]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, Headers]] = []

    # the proxy's part
    def address(self, backend: Backend) -> Any:
        return SimpleNamespace(url=lambda path: "https://api.ns.svc:443" + path)

    def auth_headers(self, headers: Headers, user: UserInfo) -> None:
        AggregatorProxy.auth_headers(SimpleNamespace(send_uid=False), headers, user)  # type: ignore[arg-type]

    def client(self, backend: Backend, address: Any) -> Any:
        return self

    # the client's part
    def get(self, url: str, headers: Headers, timeout: float) -> Deferred[Reply]:
        path = url.removeprefix("https://api.ns.svc:443")
        self.asked.append((path, headers))
        return succeed(self.answers[path](headers))


def _discovery(server: FakeServer, backend: Backend = SERVICE) -> RemoteDiscovery:
    remote = SimpleNamespace(on_change=None, backends=lambda: {(GROUP, "v1"): backend})
    return RemoteDiscovery(remote, server, Clock())  # type: ignore[arg-type]


def _sync(discovery: RemoteDiscovery, version: str = "v1", backend: Backend = SERVICE) -> Any:
    discovery.remote.backends = lambda: {(GROUP, version): backend}  # type: ignore[method-assign]
    ensureDeferred(discovery.sync((GROUP, version), backend))
    return discovery.version(GROUP, version)


def _document(headers: Headers) -> Reply:
    if headers.getRawHeaders(b"if-none-match") == [b'"one"']:
        return Reply(304, Headers(), b"")
    answer = Headers({b"content-type": [DOCUMENT_TYPE], b"etag": [b'"one"']})
    return Reply(200, answer, orjson.dumps(DOCUMENT))


def test_the_servers_own_document_is_asked_for_first_and_taken_as_written() -> None:
    server = FakeServer({"/apis": _document})
    discovery = _discovery(server)
    assert _sync(discovery) == {
        "version": "v1",
        "resources": [
            {
                **GADGETS,
                "subresources": [{**GADGETS["subresources"][0], "responseKind": EMPTY}],
            }
        ],
        "freshness": "Current",
    }
    [(path, headers)] = server.asked  # no legacy list asked for
    assert path == "/apis"
    assert headers.getRawHeaders(b"accept") == [
        b"application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList,"
        b"application/json;g=apidiscovery.platform.io;v=v2beta1;as=APIGroupDiscoveryList,"
        b"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
        b"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    ]
    assert headers.getRawHeaders(b"x-remote-user") == [b"system:kube-aggregator"]
    assert headers.getRawHeaders(b"x-remote-group") == [b"system:masters"]
    # another version of the same Service: its ETag is sent back, and a 304 keeps it
    assert _sync(discovery, "v2") == {"version": "v2", "resources": [], "freshness": "Current"}
    assert server.asked[1][1].getRawHeaders(b"if-none-match") == [b'"one"']
    # a version the document does not have: there, without resources
    assert _sync(discovery, "v3") == {"version": "v3", "freshness": "Current"}


def test_a_server_without_a_document_is_asked_for_its_legacy_list() -> None:
    listed = {"resources": [{"name": "widgets", "namespaced": True, "kind": "Widget"}]}
    plain = Headers({b"content-type": [b"application/json"]})
    server = FakeServer(
        {
            "/apis": lambda _: Reply(200, plain, b'{"kind":"APIGroupList","groups":[]}'),
            f"/apis/{GROUP}/v1": lambda _: Reply(200, plain, orjson.dumps(listed)),
        }
    )
    entry = _sync(_discovery(server))
    assert entry["resources"][0]["responseKind"] == {"group": "", "version": "", "kind": "Widget"}
    assert entry["freshness"] == "Current"
    legacy = server.asked[1][1]
    assert legacy.getRawHeaders(b"accept") == [b"application/json"]
    assert legacy.getRawHeaders(b"x-remote-group") is None  # kube's legacy fetch: no group


@pytest.mark.parametrize(
    "answer",
    [
        lambda _: Reply(503, Headers(), b"service unavailable"),
        lambda _: Reply(200, Headers({b"content-type": [DOCUMENT_TYPE]}), b'{"items": 7}'),
        lambda _: Reply(200, Headers({b"content-type": [DOCUMENT_TYPE]}), b"not json"),
        lambda _: Reply(200, Headers({b"content-type": [DOCUMENT_TYPE]}), b'{"items": [7]}'),
        lambda _: Reply(
            200,
            Headers({b"content-type": [DOCUMENT_TYPE]}),
            b'{"items": [{"metadata": {"name": "agg.example.com"}, "versions": [{"version":'
            b' "v1", "resources": [{"resource": "x", "responseKind": "Gadget"}]}]}]}',
        ),
        lambda _: Reply(
            200,
            Headers({b"content-type": [DOCUMENT_TYPE]}),
            b'{"items": [{"metadata": {"name": 7}, "versions": []}]}',
        ),
    ],
    ids=["unavailable", "not a list", "not JSON", "an item", "a response kind", "a name"],
)
def test_a_failed_fetch_is_stale_without_resources_as_kubes(answer: Any) -> None:
    server = FakeServer({"/apis": _document})
    discovery = _discovery(server)
    assert _sync(discovery)["freshness"] == "Current"
    discovery._documents.clear()  # (a fresh fetch, not a 304)
    server.answers["/apis"] = answer
    assert _sync(discovery) == {"version": "v1", "freshness": "Stale"}


def test_an_unavailable_service_is_not_asked() -> None:
    server = FakeServer({})
    down = Backend("v1.agg.example.com", "ns", "api", 443, None, True, False)
    assert _sync(_discovery(server, down), backend=down) == {"version": "v1", "freshness": "Stale"}
    assert server.asked == []


def test_document_content_types() -> None:
    assert is_group_discovery_list(
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    )
    assert is_group_discovery_list(
        "application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.platform.io"
    )
    assert not is_group_discovery_list("application/json")
    assert not is_group_discovery_list(
        "application/json;g=apidiscovery.k8s.io;v=v1;as=APIGroupDiscoveryList"
    )
    assert not is_group_discovery_list(
        "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    )


def test_a_failed_fetch_is_retried_with_backoff_until_it_succeeds() -> None:
    """kube's rate limiter: half a second, doubling, at most the refresh interval."""
    broken = {"/apis": lambda _: Reply(500, Headers(), b"oops")}
    server = FakeServer({**broken, f"/apis/{GROUP}/v1": lambda _: Reply(500, Headers(), b"")})
    discovery = _discovery(server)
    clock = discovery.reactor
    assert _sync(discovery)["freshness"] == "Stale"
    delays = []
    for _ in range(9):
        asked = len(server.asked)
        pending = clock.getDelayedCalls()
        delays.append(pending[0].getTime() - clock.seconds())
        clock.advance(delays[-1])
        assert len(server.asked) == asked + 2  # the document, then the legacy list
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
    server.answers["/apis"] = _document
    clock.advance(60.0)
    assert discovery.version(GROUP, "v1")["freshness"] == "Current"
    assert clock.getDelayedCalls() == []
