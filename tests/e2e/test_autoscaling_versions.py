"""HorizontalPodAutoscalers at autoscaling/v1 and v2: each written at one version and read
at both, as kube-apiserver v1.36 answered the same requests (reference; recorded in
tests/registry/fixtures/hpa_versions_kube.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server

CASES = json.loads(
    (Path(__file__).parents[1] / "registry" / "fixtures" / "hpa_versions_kube.json").read_text()
)
BASE = "/apis/autoscaling/{}/namespaces/default/horizontalpodautoscalers"


def _clean(obj: Any) -> Any:
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        obj.get("metadata", {}).pop(key, None)
    return obj


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_each_version_reads_what_the_other_wrote(
    server: Server, admin: requests.Session, case: dict[str, Any]
) -> None:
    url = server.url + BASE.format(case["path"])
    created = admin.post(url, json=case["body"])
    code, expected = case["created"]
    assert created.status_code == code
    if code >= 300:
        assert created.json()["message"] == expected
        return
    name = case["body"]["metadata"]["name"]
    try:
        assert _clean(created.json()) == expected
        for version in ("v1", "v2"):
            got = admin.get(server.url + BASE.format(version) + "/" + name)
            assert _clean(got.json()) == case[f"as_{version}"]
    finally:
        admin.delete(server.url + BASE.format("v2") + "/" + name)


def test_a_v1_watch_sees_v2_writes_in_v1(server: Server, admin: requests.Session) -> None:
    v2 = next(c for c in CASES if c["name"] == "v2-many")
    body = {**v2["body"], "metadata": {"name": "watched"}}
    watch = admin.get(server.url + BASE.format("v1") + "?watch=1&timeoutSeconds=5", stream=True)
    try:
        assert admin.post(server.url + BASE.format("v2"), json=body).status_code == 201
        event = json.loads(next(watch.iter_lines()))
        assert event["type"] == "ADDED"
        assert event["object"]["apiVersion"] == "autoscaling/v1"
        assert event["object"]["spec"]["targetCPUUtilizationPercentage"] == 60
    finally:
        watch.close()
        admin.delete(server.url + BASE.format("v2") + "/watched")
