"""--tracing-config-file: a real server's spans, received by a real OTLP/gRPC receiver;
kubectl's requests, a caller's trace continued or not, an admission webhook's call with
its context sent to the webhook."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from platform_api.apiserver import pki
from tests.e2e.conftest import E2E_ETCD, VENV_BIN, Server, session_for, start_server
from tests.e2e.hookserver import ReviewHandler, serving
from tests.e2e.test_admission_webhooks import (
    active,
    ca_bundle,
    configmap,
    install,
    labelled_namespace,
    webhook,
)

ROOT = Path(__file__).parents[2]
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
SAMPLED = f"00-{TRACE_ID}-{CALLER_SPAN}-01"
Span = dict[str, Any]


@dataclass
class Sink:
    spans_file: Path
    port: int
    process: subprocess.Popen[bytes]

    def spans(self) -> list[Span]:
        text = self.spans_file.read_bytes() if self.spans_file.exists() else b""
        complete = text[: text.rfind(b"\n") + 1]  # the receiver may be writing a line
        return [json.loads(line) for line in complete.splitlines()]

    def wait(self, found: Callable[[list[Span]], bool], timeout: float = 20) -> list[Span]:
        deadline = time.monotonic() + timeout
        while True:
            spans = self.spans()
            if found(spans):
                return spans
            assert time.monotonic() < deadline, f"spans never arrived: {spans}"
            time.sleep(0.1)


def start_sink(root: Path) -> Sink:
    port_file = root / "otlp.port"
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.otlpsink", str(root / "spans.jsonl"), str(port_file)],
        cwd=ROOT,
    )
    deadline = time.monotonic() + 20
    while not (port_file.exists() and port_file.read_text()):
        assert time.monotonic() < deadline, "the OTLP receiver did not start"
        time.sleep(0.05)
    return Sink(root / "spans.jsonl", int(port_file.read_text()), process)


def traced_server(root: Path, sink: Sink, rate: int | None, *extra: str) -> Server:
    config = root / "tracing.yaml"
    config.write_text(
        "apiVersion: apiserver.config.platform.io/v1\nkind: TracingConfiguration\n"
        f"endpoint: 127.0.0.1:{sink.port}\n"
        + (f"samplingRatePerMillion: {rate}\n" if rate is not None else "")
    )
    tokens = root / "tokens.csv"
    tokens.write_text('tok-alice,alice,3,"dev"\n')
    os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "100"  # the SDK's export interval: 5 s otherwise
    try:
        return start_server(
            root / "data",
            f"--tracing-config-file={config}",
            f"--token-auth-file={tokens}",
            *extra,
        )
    finally:
        del os.environ["OTEL_BSP_SCHEDULE_DELAY"]


@pytest.fixture(scope="module")
def sink(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sink]:
    running = start_sink(tmp_path_factory.mktemp("otlp"))
    yield running
    running.process.terminate()
    running.process.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, sink: Sink) -> Iterator[Server]:
    running = traced_server(tmp_path_factory.mktemp("traced"), sink, 1_000_000)
    yield running
    running.stop()


@pytest.fixture
def admin(server: Server) -> requests.Session:
    return session_for(server, cert=server.admin_cert)


def named(spans: list[Span], name: str, **attributes: Any) -> list[Span]:
    return [
        s
        for s in spans
        if s["name"] == name and all(s["attributes"].get(k) == v for k, v in attributes.items())
    ]


# kube's filterlatency spans, innermost first, between the request's and the handler's
FILTERS = ["authorization", "priorityandfairness", "constrainedimpersonation", "audit"]


def ancestry(by_id: dict[str, Span], span: Span) -> list[str]:
    """The names of ``span`` and of its ancestors among the spans ``by_id``."""
    names = [span["name"]]
    while span["parent_span_id"] in by_id:
        span = by_id[span["parent_span_id"]]
        names.append(span["name"])
    return names


def test_kubectl_requests_are_traced(server: Server, sink: Sink) -> None:
    kubectl = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(server.kubeconfig)]
    done = subprocess.run(
        [*kubectl, "get", "configmap", "not-there", "-n", "default"],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 1
    route = "GET /api/v1/namespaces/{:namespace}/configmaps/{:name}"
    spans = sink.wait(lambda spans: bool(named(spans, route, **{"url.path": PATH_NOT_THERE})))
    (request,) = named(spans, route, **{"url.path": PATH_NOT_THERE})
    assert request["kind"] == "SERVER"
    assert request["scope"] == "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
    assert request["resource"]["service.name"] == "apiserver"
    assert request["resource"]["service.instance.id"].startswith("apiserver-")
    attributes = request["attributes"]
    assert attributes["http.response.status_code"] == 404
    assert attributes["http.request.method"] == "GET"
    assert attributes["url.scheme"] == "https"
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["user_agent.original"].startswith("kubectl/")
    assert attributes["http.target"] == PATH_NOT_THERE
    assert len(attributes["audit-id"]) == 36
    # kubectl sends no trace of its own: kube's authentication filter span is the root,
    # and its later filters' spans nest between the request's and the handler's.
    by_id = {s["span_id"]: s for s in spans}
    authn = by_id[request["parent_span_id"]]
    assert (authn["name"], authn["parent_span_id"], authn["scope"]) == (
        "authentication",
        "",
        "k8s.op/apiserver/pkg/endpoints/filterlatency",
    )
    (handler,) = named(spans, "Get", **{"audit-id": attributes["audit-id"]})
    assert ancestry(by_id, handler) == ["Get", *FILTERS, route, "authentication"]
    assert handler["scope"] == "k8s.io/component-base/tracing"
    assert handler["trace_id"] == request["trace_id"]
    assert {k: handler["attributes"][k] for k in ("resource", "name", "namespace", "verb")} == {
        "resource": "configmaps",
        "name": "not-there",
        "namespace": "default",
        "verb": "GET",
    }
    assert handler["attributes"]["audit-id"] == attributes["audit-id"]


def test_the_handlers_spans_tell_kubes_events(
    server: Server, admin: requests.Session, sink: Sink
) -> None:
    """kube's handlers mark their steps on their spans (create.go, update.go, ...)."""
    namespace = {"metadata": {"name": "traced-events"}}
    assert admin.post(f"{server.url}/api/v1/namespaces", json=namespace).status_code == 201
    url = f"{server.url}/api/v1/namespaces/traced-events/configmaps"
    created = admin.post(url, json=configmap("evented"))
    assert created.status_code == 201
    assert admin.post(url, json=configmap("evented")).status_code == 409
    replaced = admin.put(f"{url}/evented", json=created.json())
    assert replaced.status_code == 200
    merge = {"Content-Type": "application/merge-patch+json"}
    assert admin.patch(f"{url}/evented", data=b'{"data": {"k": "v"}}', headers=merge).ok
    assert admin.get(f"{url}/evented").status_code == 200
    assert admin.get(url).status_code == 200
    assert admin.delete(f"{url}/evented").status_code == 200

    def handler_events(spans: list[Span]) -> list[tuple[str, list[Any]]]:
        return [
            (s["name"], s["events"])
            for s in sorted(spans, key=lambda s: s["start"])
            if s["scope"] == "k8s.io/component-base/tracing"
            and s["attributes"].get("namespace") == "traced-events"
        ]

    spans = sink.wait(lambda spans: len(handler_events(spans)) >= 7)
    size = len(created.request.body)  # type: ignore[arg-type]
    write = [
        ["limitedReadBody succeeded", {"len": size}],
        ["About to convert to expected version", {}],
        ["Conversion done", {}],
        ["About to store object in database", {}],
    ]
    respond = [["About to write a response", {}], ["Writing http response done", {}]]
    events = handler_events(spans)
    assert events[0] == (
        "Create",
        [*write, ["Write to database call succeeded", {"len": size}], *respond],
    )
    name, refused = events[1]
    assert name == "Create" and refused[:4] == write and len(refused) == 5
    assert refused[4][0] == "Write to database call failed"
    assert refused[4][1]["err"] == 'configmaps "evented" already exists'
    put_size = len(replaced.request.body)  # type: ignore[arg-type]
    assert events[2][0] == "Update"
    assert [e[0] for e in events[2][1]] == [e[0] for e in write] + [
        "Write to database call succeeded",
        *[e[0] for e in respond],
    ]
    assert events[2][1][0] == ["limitedReadBody succeeded", {"len": put_size}]
    assert events[3] == (
        "Patch",
        [
            ["limitedReadBody succeeded", {"len": 20}],
            ["Recorded the audit event", {}],
            ["About to apply patch", {}],
            ["Object stored in database", {}],
            *respond,
        ],
    )
    assert events[4] == ("Get", [["About to Get from storage", {}], *respond])
    assert events[5] == ("List", [])
    assert events[6] == (
        "Delete",
        [
            ["Decoded delete options", {}],
            ["Recorded the audit event", {}],
            ["About to delete object from database", {}],
            ["Object deleted from database", {}],
            *respond,
        ],
    )


PATH_NOT_THERE = "/api/v1/namespaces/default/configmaps/not-there"
# kube's request info reads a namespace's name as its namespace too, and its span name
# says so.
NAMESPACE_ROUTE = "GET /api/v1/namespaces/{:namespace}/namespaces/{:name}"


def test_a_privileged_caller_continues_its_trace(
    server: Server, admin: requests.Session, sink: Sink
) -> None:
    r = admin.get(f"{server.url}/api/v1/namespaces/default", headers={"traceparent": SAMPLED})
    assert r.status_code == 200
    route, path = NAMESPACE_ROUTE, {"url.path": "/api/v1/namespaces/default"}
    (request,) = named(sink.wait(lambda spans: bool(named(spans, route, **path))), route, **path)
    assert (request["trace_id"], request["parent_span_id"]) == (TRACE_ID, CALLER_SPAN)
    assert request["links"] == []


def test_anyone_else_starts_a_new_trace_linked_to_theirs(server: Server, sink: Sink) -> None:
    alice = session_for(server, token="tok-alice")
    r = alice.get(
        f"{server.url}/api/v1/namespaces/platform-public", headers={"traceparent": SAMPLED}
    )
    assert r.status_code == 200
    route, path = NAMESPACE_ROUTE, {"url.path": "/api/v1/namespaces/platform-public"}
    (request,) = named(sink.wait(lambda spans: bool(named(spans, route, **path))), route, **path)
    assert request["trace_id"] != TRACE_ID
    assert request["parent_span_id"] == ""
    assert request["links"] == [{"trace_id": TRACE_ID, "span_id": CALLER_SPAN}]


class _Hook(ReviewHandler):
    """An admission webhook that allows everything and keeps each call's headers."""

    calls: list[dict[str, str]] = []

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        self.calls.append({k.lower(): v for k, v in self.headers.items()})
        return {"allowed": True}


@pytest.fixture
def hook(tmp_path: Path) -> Iterator[tuple[pki.Paths, int]]:
    with serving(_Hook, tmp_path) as served:
        yield served


def test_a_webhook_call_is_traced_and_told_the_trace(
    server: Server, admin: requests.Session, sink: Sink, hook: tuple[pki.Paths, int]
) -> None:
    certs, port = hook
    ns = labelled_namespace(admin, server, "traced-hooks")
    url = f"https://127.0.0.1:{port}/validate"
    config = {"url": url, "caBundle": ca_bundle(certs)}
    hooks = [webhook("traced.example.com", ns, config)]
    installed = install(admin, server, "ValidatingWebhookConfiguration", "traced", hooks)
    cms = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
    active(admin, cms, 201)
    _Hook.calls.clear()
    r = admin.post(cms, json=configmap("traced"), headers={"traceparent": SAMPLED})
    assert r.status_code == 201, r.text
    spans = sink.wait(lambda spans: bool(named(spans, "Call validating webhook", UID=_uid(spans))))
    (call,) = [
        s
        for s in named(spans, "Call validating webhook", configuration="traced")
        if s["trace_id"] == TRACE_ID
    ]
    assert call["attributes"] == {
        "configuration": "traced",
        "webhook": "traced.example.com",
        "resource": "/v1, Resource=configmaps",
        "subresource": "",
        "operation": "CREATE",
        "UID": call["attributes"]["UID"],
    }
    by_id = {s["span_id"]: s for s in spans}
    route = "POST /api/v1/namespaces/{:namespace}/configmaps"
    assert ancestry(by_id, call) == ["Call validating webhook", "Create", *FILTERS, route]
    (request,) = named(spans, route, **{"audit-id": call_audit_id(by_id, call)})
    assert request["parent_span_id"] == CALLER_SPAN
    (post,) = [s for s in spans if s["parent_span_id"] == call["span_id"]]
    assert (post["name"], post["kind"]) == ("HTTP POST", "CLIENT")
    assert post["attributes"]["url.full"] == f"{url}?timeout=10s"
    assert post["attributes"]["http.response.status_code"] == 200
    told = [c["traceparent"] for c in _Hook.calls if "traceparent" in c]
    assert [t.split("-")[1:3] for t in told] == [[TRACE_ID, post["span_id"]]]
    assert admin.delete(installed).status_code == 200


def call_audit_id(by_id: dict[str, Span], call: Span) -> Any:
    return by_id[call["parent_span_id"]]["attributes"]["audit-id"]


def _uid(spans: list[Span]) -> Any:
    calls = named(spans, "Call validating webhook", configuration="traced")
    return next((s["attributes"]["UID"] for s in calls if s["trace_id"] == TRACE_ID), None)


def test_without_a_rate_only_a_sampled_privileged_caller_is_traced(tmp_path: Path) -> None:
    own = start_sink(tmp_path)
    quiet = traced_server(tmp_path, own, None)
    try:
        admin = session_for(quiet, cert=quiet.admin_cert)
        assert admin.get(f"{quiet.url}/api/v1/namespaces/platform-public").status_code == 200
        r = admin.get(f"{quiet.url}/api/v1/namespaces/platform-system", headers=OTHER)
        assert r.status_code == 200
        alice = session_for(quiet, token="tok-alice")
        assert alice.get(f"{quiet.url}/api/v1/namespaces", headers=OTHER).status_code == 200
        own.wait(lambda spans: len(spans) >= 8)
        time.sleep(0.5)  # anything else exported would be here by now
        spans = own.spans()
        names = sorted(s["name"] for s in spans)
        if E2E_ETCD:  # a consistent get read from an etcd before 3.5.13: its call's span
            names = [name for name in names if name != "etcdserverpb.KV/Range"]
        # the caller's trace only: kube's authentication span is drawn at the rate, none
        assert names == sorted([NAMESPACE_ROUTE, *FILTERS, "Get", "cacher.Get", "SerializeObject"])
        assert {s["trace_id"] for s in spans} == {"ab" * 16}
    finally:
        quiet.stop()
        own.process.terminate()
        own.process.wait()


OTHER = {"traceparent": SAMPLED.replace(TRACE_ID, "ab" * 16)}


def test_a_collector_that_is_down_costs_requests_nothing(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    down = Sink(tmp_path / "none.jsonl", port, subprocess.Popen(["true"]))
    server = traced_server(tmp_path, down, 1_000_000)
    try:
        admin = session_for(server, cert=server.admin_cert)
        for _ in range(20):
            assert admin.get(f"{server.url}/api/v1/namespaces/default").status_code == 200
        assert server.log is not None
        deadline = time.monotonic() + 20
        while b"Exporting" not in server.log.read_bytes():
            assert time.monotonic() < deadline, "no export was tried"
            time.sleep(0.1)
        assert admin.get(f"{server.url}/readyz").status_code == 200
    finally:
        server.stop()
        down.process.wait()
