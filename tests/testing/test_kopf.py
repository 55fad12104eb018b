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
WIDGET_OPERATOR = Path(__file__).with_name("widget_operator.py")
WIDGETS_CRD = {
    "apiVersion": "apiextensions.platform.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.ops.example.com"},
    "spec": {
        "group": "ops.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {"size": {"type": "integer", "minimum": 1}},
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}


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


def test_operator_on_a_custom_resource(
    platform_apiserver: ApiServer, platform_namespace: str
) -> None:
    """kopf watches a type defined a moment before, patches its status sub-resource and
    keeps its own progress in annotations, all through the CRD's schema."""
    crds = "/apis/apiextensions.platform.io/v1/customresourcedefinitions"
    status, _ = platform_apiserver.request("POST", crds, WIDGETS_CRD)
    assert status in (201, 409)  # 409: an earlier test of this session made it

    def established() -> bool:
        _, crd = platform_apiserver.request("GET", f"{crds}/widgets.ops.example.com")
        return any(
            c["type"] == "Established" and c["status"] == "True"
            for c in (crd.get("status") or {}).get("conditions") or []  # null until named
        )

    eventually(established)
    base = f"/apis/ops.example.com/v1/namespaces/{platform_namespace}/widgets"

    def widget_status() -> dict[str, Any]:
        _, obj = platform_apiserver.request("GET", f"{base}/w1")
        return obj.get("status") or {}

    args = ["run", "--standalone", "--namespace", platform_namespace, str(WIDGET_OPERATOR)]
    with KopfRunner(args, registry=platform_apiserver.kopf_registry(), timeout=30) as runner:
        body = {"apiVersion": "ops.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}}
        body["spec"] = {"size": 2}
        assert platform_apiserver.request("POST", base, body)[0] == 201
        eventually(lambda: widget_status() == {"phase": "Ready", "size": 20})
        merge = {"spec": {"size": 5}}
        assert platform_apiserver.request("PATCH", f"{base}/w1", merge, MERGE_PATCH)[0] == 200
        eventually(lambda: widget_status().get("size") == 50)
    assert runner.exception is None
    assert runner.exit_code == 0
