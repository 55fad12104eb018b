"""A traced list or watch carries kube's storage spans of reads (``List(recursive=true)
etcd3`` where kube reads etcd, ``cacher.GetList`` and ``cacher.Watch`` where its watch
cache answers), as a real OTLP receiver gets them from a real server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server, session_for
from tests.e2e.test_tracing import Sink, Span, sink, traced_server

__all__ = ["sink"]  # the module's OTLP receiver: test_tracing's fixture, one per module
NAMESPACE = "traced-reads"
CACHED = ["Ready", "watchCache locked acquired", "watchCache fresh enough"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, sink: Sink) -> Iterator[Server]:
    running = traced_server(tmp_path_factory.mktemp("traced-reads"), sink, 1_000_000)
    admin = session_for(running, cert=running.admin_cert)
    namespace = {"metadata": {"name": NAMESPACE}}
    assert admin.post(f"{running.url}/api/v1/namespaces", json=namespace).status_code == 201
    for name in ("a", "ab", "b", "c"):  # "ab" after "a": a key the key of "a" begins
        created = admin.post(_url(running), json={"metadata": {"name": name}})
        assert created.status_code == 201
    yield running
    running.stop()


def _url(server: Server) -> str:
    return f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"


def _traced(sink: Sink, response: requests.Response, name: str) -> tuple[Span, list[Span]]:
    """The request's span ``name`` and the storage spans under it, once exported (its
    SerializeObject span is test_tracing_responses')."""
    audit_id = response.headers["Audit-Id"]

    def mine(spans: list[Span]) -> list[Span]:
        return [s for s in spans if s["attributes"].get("audit-id") == audit_id]

    spans = mine(sink.wait(lambda spans: any(s["name"] == name for s in mine(spans))))
    (span,) = [s for s in spans if s["name"] == name]
    under = [s for s in spans if s["parent_span_id"] == span["span_id"]]
    return span, [s for s in under if s["name"] != "SerializeObject"]


def _storage(sink: Sink, response: requests.Response, handler: str = "List") -> Span:
    """The one storage span under the request's handler span."""
    assert response.status_code == 200, response.text
    _, (storage,) = _traced(sink, response, handler)
    return storage


def _etcd(**attributes: Any) -> dict[str, Any]:
    key = f"/configmaps/{NAMESPACE}"
    common = {"key": key, "resourceVersion": "", "resourceVersionMatch": "", "limit": 0}
    return {**common, "continue": "", **attributes}


def _cache(listed: int, returned: int) -> list[list[Any]]:
    resized = [["Resized result", {}]] if returned else []
    return [
        *([name, {}] for name in CACHED),
        ["Listed items from cache", {"count": listed}],
        *resized,
        ["Filtered items", {"count": returned}],
    ]


def _shown(span: Span) -> tuple[str, dict[str, Any], list[Any]]:
    attributes = {k: v for k, v in span["attributes"].items() if k != "audit-id"}
    return span["name"], attributes, span["events"]


def test_lists_kube_reads_from_etcd_carry_its_etcd3_span(server: Server, sink: Sink) -> None:
    admin = session_for(server, cert=server.admin_cert)
    url = _url(server)
    whole = admin.get(url)
    assert _shown(_storage(sink, whole)) == ("List(recursive=true) etcd3", _etcd(), [])
    page = admin.get(url, params={"limit": "1"})
    assert _shown(_storage(sink, page)) == ("List(recursive=true) etcd3", _etcd(limit=1), [])
    version = whole.json()["metadata"]["resourceVersion"]
    exact = admin.get(url, params={"resourceVersion": version, "resourceVersionMatch": "Exact"})
    assert _shown(_storage(sink, exact)) == (
        "List(recursive=true) etcd3",
        _etcd(resourceVersion=version, resourceVersionMatch="Exact"),
        [],
    )
    storage = _storage(sink, whole)
    assert storage["scope"] == "k8s.io/component-base/tracing"
    assert storage["attributes"]["audit-id"] == whole.headers["Audit-Id"]


def test_lists_kube_reads_from_its_cache_tell_what_it_listed(server: Server, sink: Sink) -> None:
    admin = session_for(server, cert=server.admin_cert)
    url = _url(server)
    token = admin.get(url, params={"limit": "1"}).json()["metadata"]["continue"]
    one = {"resourceVersion": "0", "fieldSelector": "metadata.name=a"}  # kube reads one key
    cases = [
        ({"limit": "1", "continue": token}, 3, 1),  # ab, b and c after a; the limit keeps ab
        ({"resourceVersion": "0", "labelSelector": "x=y"}, 4, 0),
        ({"resourceVersion": "0", "limit": "1"}, 4, 4),  # kube's cache ignores the limit
        (one, 1, 1),
        ({**one, "labelSelector": "x=y"}, 1, 0),
        ({**one, "fieldSelector": "metadata.name=nope"}, 0, 0),
    ]
    for params, listed, returned in cases:
        storage = _storage(sink, admin.get(url, params=params))
        assert _shown(storage) == (
            "cacher.GetList",
            {"type": "configmaps"},
            _cache(listed, returned),
        )


def test_a_continued_list_counts_what_the_cache_held_at_its_revision(
    server: Server, sink: Sink
) -> None:
    """kube's cache lists a continued list from its start key, as of the token's
    revision, before the selector filters: writes made since do not count."""
    admin = session_for(server, cert=server.admin_cert)
    url = f"{server.url}/api/v1/namespaces/traced-later/configmaps"
    namespace = {"metadata": {"name": "traced-later"}}
    assert admin.post(f"{server.url}/api/v1/namespaces", json=namespace).status_code == 201
    for name in ("a", "b", "c", "d"):
        assert admin.post(url, json={"metadata": {"name": name}}).status_code == 201
    token = admin.get(url, params={"limit": "1"}).json()["metadata"]["continue"]
    assert admin.delete(f"{url}/d").status_code == 200
    for name in ("e", "f"):
        assert admin.post(url, json={"metadata": {"name": name}}).status_code == 201
    page = admin.get(url, params={"continue": token, "labelSelector": "x=y"})
    assert page.json()["items"] == []
    _, (storage,) = _traced(sink, page, "List")
    # b, c and d as of the token's revision (the storage now holds a, b, c, e and f).
    assert _shown(storage) == ("cacher.GetList", {"type": "configmaps"}, _cache(3, 0))


def test_a_delete_collection_lists_as_a_list_does(server: Server, sink: Sink) -> None:
    admin = session_for(server, cert=server.admin_cert)
    deleted = admin.delete(_url(server), params={"labelSelector": "x=y"})
    storage = _storage(sink, deleted, handler="Delete")
    assert _shown(storage) == ("List(recursive=true) etcd3", _etcd(), [])


def test_a_watch_carries_kubes_cacher_watch_span(server: Server, sink: Sink) -> None:
    admin = session_for(server, cert=server.admin_cert)
    url = _url(server)
    version = admin.get(url).json()["metadata"]["resourceVersion"]
    watch = {"watch": "1", "timeoutSeconds": "1"}
    waited = [["watchCache locked acquired", {}], ["watchCache fresh enough", {}]]

    now = admin.get(url, params=watch)  # from now: the initial events, after a revision read
    span, (revision,) = _traced(sink, now, "cacher.Watch")
    assert _shown(span) == ("cacher.Watch", {"type": "configmaps"}, waited)
    assert _shown(revision) == (
        "List(recursive=false) etcd3",
        {**_etcd(limit=1), "key": "/configmaps"},
        [],
    )
    cached = admin.get(url, params={**watch, "resourceVersion": "0"})
    span, under = _traced(sink, cached, "cacher.Watch")
    assert (_shown(span), under) == (("cacher.Watch", {"type": "configmaps"}, waited), [])
    since = admin.get(url, params={**watch, "resourceVersion": version})
    span, under = _traced(sink, since, "cacher.Watch")
    assert (_shown(span), under) == (("cacher.Watch", {"type": "configmaps"}, []), [])
    audit_id = since.headers["Audit-Id"]

    def served(spans: list[Span]) -> list[Span]:
        return [
            s
            for s in spans
            if s["kind"] == "SERVER" and s["attributes"].get("audit-id") == audit_id
        ]

    (server_span,) = served(sink.wait(lambda spans: bool(served(spans))))
    assert span["trace_id"] == server_span["trace_id"]


def test_a_list_refused_for_its_token_or_version_opens_no_storage_span(
    server: Server, sink: Sink
) -> None:
    """kube's delegator reads both before the cache or etcd is asked."""
    admin = session_for(server, cert=server.admin_cert)
    for params, message in (
        (
            {"continue": "garbage", "limit": "1"},
            "invalid continue token: continue key is not valid",
        ),
        (
            {"resourceVersion": "abc"},
            'invalid resource version: resourceVersion: Invalid value: "abc"',
        ),
    ):
        refused = admin.get(_url(server), params=params)
        assert (refused.status_code, refused.json()["reason"]) == (400, "BadRequest")
        assert refused.json()["message"].startswith(message)
        _, under = _traced(sink, refused, "List")
        assert under == []
