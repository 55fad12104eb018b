"""The feature gates that change what a request gets, turned against kube's defaults:
WatchList off refuses streaming lists, APIResponseCompression off never gzips."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server

CM = "/api/v1/namespaces/default/configmaps"
GATES = "--feature-gates=WatchList=false,APIResponseCompression=false"


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


def test_no_compression_without_its_gate(gated: Server) -> None:
    admin = session_for(gated, cert=gated.admin_cert)
    big = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"v": "x" * 200_000}}
    big["metadata"] = {"name": "big"}
    assert admin.post(gated.url + CM, json=big).status_code == 201
    r: requests.Response = admin.get(gated.url + CM, headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and "Content-Encoding" not in r.headers
