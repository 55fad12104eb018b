"""The feature gates that change what a request gets, turned against kube's defaults:
WatchList off refuses streaming lists, APIResponseCompression off never gzips, and
ContainerStopSignals and MaxUnavailableStatefulSet on keep the fields kube's strategies
drop while they are off (as the shared server, on kube's defaults, drops them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server

CM = "/api/v1/namespaces/default/configmaps"
GATES = (
    "--feature-gates=WatchList=false,APIResponseCompression=false,"
    "ContainerStopSignals=true,MaxUnavailableStatefulSet=true,"
    "RelaxedServiceNameValidation=false"
)


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(Path(tmp_path_factory.mktemp("gates")) / "data", GATES)
    yield running
    running.stop()


def test_streaming_lists_need_the_watch_list_gate(gated: Server) -> None:
    admin = session_for(gated, cert=gated.admin_cert)
    query = "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
    r = admin.get(gated.url + CM + query)
    assert r.status_code == 422
    assert r.json()["reason"] == "Invalid"
    assert r.json()["message"] == (
        'ListOptions.meta.platform.io "" is invalid: sendInitialEvents: Forbidden: '
        "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
    )


def test_without_the_gate_a_watch_from_zero_is_the_legacy_one(gated: Server) -> None:
    """No watch-list defaulting: the initial events end with no bookmark of their own;
    only the timeout's bookmark comes."""
    admin = session_for(gated, cert=gated.admin_cert)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "legacy-watch"}}
    assert admin.post(gated.url + CM, json=body).status_code == 201
    query = "?watch=1&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=1"
    query += "&fieldSelector=metadata.name%3Dlegacy-watch"
    lines = [line for line in admin.get(gated.url + CM + query).iter_lines() if line]
    events = [orjson.loads(line) for line in lines]
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"] == {"resourceVersion": mock.ANY}


def test_service_names_begin_with_a_letter_without_the_relaxed_gate(
    gated: Server, server: Server
) -> None:
    """RelaxedServiceNameValidation (on in kube v1.36) lets a Service's name, and an
    Ingress backend's, be any DNS-1123 label; off, they are DNS-1035 labels."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "9lives"}}
    service["spec"] = {"ports": [{"port": 80}]}
    backend = {"service": {"name": "9lives", "port": {"number": 80}}}
    ingress = {"apiVersion": "networking.platform.io/v1", "kind": "Ingress"}
    ingress |= {"metadata": {"name": "nine"}, "spec": {"defaultBackend": backend}}
    ingresses = "/apis/networking.platform.io/v1/namespaces/default/ingresses"
    on = session_for(server, cert=server.admin_cert)
    assert on.post(server.url + "/api/v1/namespaces/default/services", json=service).ok
    assert on.post(server.url + ingresses, json=ingress).ok
    off = session_for(gated, cert=gated.admin_cert)
    r = off.post(gated.url + "/api/v1/namespaces/default/services", json=service)
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0]["field"] == "metadata.name"
    assert "a DNS-1035 label must consist of" in r.json()["message"]
    r = off.post(gated.url + ingresses, json=ingress)
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0]["field"] == "spec.defaultBackend.service.name"


def test_no_compression_without_its_gate(gated: Server) -> None:
    admin = session_for(gated, cert=gated.admin_cert)
    big = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"v": "x" * 200_000}}
    big["metadata"] = {"name": "big"}
    assert admin.post(gated.url + CM, json=big).status_code == 201
    r: requests.Response = admin.get(gated.url + CM, headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and "Content-Encoding" not in r.headers


def _gated_fields(session: requests.Session, url: str, name: str) -> tuple[Any, Any]:
    """A pod's stop signal and a StatefulSet's maxUnavailable, as stored."""
    container = {"name": "c", "image": "i", "lifecycle": {"stopSignal": "SIGTERM"}}
    spec = {"containers": [container], "os": {"name": "linux"}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    r = session.post(url + "/api/v1/namespaces/default/pods", json=pod)
    assert r.status_code == 201, r.text
    signal = r.json()["spec"]["containers"][0].get("lifecycle")
    template = {"metadata": {"labels": {"app": name}}, "spec": spec}
    rolling = {"maxUnavailable": 2, "partition": 0}
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": template,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling},
        },
    }
    r = session.post(url + "/apis/apps/v1/namespaces/default/statefulsets", json=sts)
    assert r.status_code == 201, r.text
    return signal, r.json()["spec"]["updateStrategy"]["rollingUpdate"]


def test_fields_of_gates_off_are_dropped_and_kept_when_turned_on(
    gated: Server, server: Server
) -> None:
    on = _gated_fields(session_for(gated, cert=gated.admin_cert), gated.url, "gates-on")
    assert on == ({"stopSignal": "SIGTERM"}, {"partition": 0, "maxUnavailable": 2})
    off = _gated_fields(session_for(server, cert=server.admin_cert), server.url, "gates-off")
    assert off == (None, {"partition": 0})
