"""A kopf operator run by KopfRunner against the fixture's server, in the test's namespace."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kopf.testing import KopfRunner

from platform_api.testing import ApiServer

pytestmark = pytest.mark.e2e
MERGE_PATCH = "application/merge-patch+json"
OPERATOR = Path(__file__).with_name("configmap_operator.py")


def eventually(check: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return result


def test_operator_reacts_to_configmaps(
    platform_apiserver: ApiServer, platform_namespace: str
) -> None:
    base = f"/api/v1/namespaces/{platform_namespace}/configmaps"

    def data(name: str) -> dict[str, str]:
        status, cm = platform_apiserver.request("GET", f"{base}/{name}")
        return cm.get("data", {}) if status == 200 else {}

    args = ["run", "--standalone", "--namespace", platform_namespace, "--verbose", str(OPERATOR)]
    with KopfRunner(args, registry=platform_apiserver.kopf_registry(), timeout=30) as runner:
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "ada"},
            "data": {"name": "Ada"},
        }
        assert platform_apiserver.request("POST", base, body)[0] == 201
        eventually(lambda: data("ada").get("greeting") == "hello Ada")

        merge = {"data": {"name": "Ada L."}}
        assert platform_apiserver.request("PATCH", f"{base}/ada", merge, MERGE_PATCH)[0] == 200
        eventually(lambda: data("ada").get("greeting") == "hello again Ada L.")

        assert platform_apiserver.request("DELETE", f"{base}/ada")[0] == 200
        eventually(lambda: platform_apiserver.request("GET", f"{base}/ada")[0] == 404)
    assert runner.exception is None
    assert runner.exit_code == 0
    assert "Handler 'greet/data.name' succeeded." in runner.output
    assert "Handler 'regreet/data.name' succeeded." in runner.output
    assert "goodbye ada" in runner.output
