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
        # a dry run answers what the create read back, converted as it would be stored
        meta = {**case["body"]["metadata"], "name": "dry"}
        dry = admin.post(url + "?dryRun=All", json={**case["body"], "metadata": meta})
        assert _clean(dry.json()) == {
            **expected,
            "metadata": {**expected["metadata"], "name": "dry"},
        }
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


SELECTOR = {"matchLabels": {"a": "b"}}
METRICS = [
    {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
    },
    {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}},
    },
    {
        "type": "Pods",
        "pods": {
            "metric": {"name": "qps", "selector": SELECTOR},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    },
    {
        "type": "Object",
        "object": {
            "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "s"},
            "metric": {"name": "hits"},
            "target": {"type": "Value", "value": "5"},
        },
    },
    {
        "type": "External",
        "external": {
            "metric": {"name": "queue", "selector": SELECTOR},
            "target": {"type": "AverageValue", "averageValue": "3"},
        },
    },
    {
        "type": "ContainerResource",
        "containerResource": {
            "name": "cpu",
            "container": "app",
            "target": {"type": "Utilization", "averageUtilization": 70},
        },
    },
]
CURRENT = [
    {
        "type": "Resource",
        "resource": {"name": "cpu", "current": {"averageUtilization": 33, "averageValue": "120m"}},
    },
    {"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "50Mi"}}},
    {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "4"}}},
]
# kube-apiserver v1.36's Targets cells for the same objects (reference)
KUBE_TARGETS = [
    "cpu: 33%/60%, memory: 50Mi/100Mi",
    "memory: <unknown>/100Mi, <unknown>/10",
    "4/10, <unknown>/5",
    "<unknown>/5, <unknown>/3 (avg)",
    "<unknown>/3 (avg), cpu: <unknown>/70%",
    "cpu: <unknown>/70%",
    "cpu: 33%/60%, memory: 50Mi/100Mi + 4 more...",
]


def test_kubectl_get_hpa_prints_kubes_columns(server: Server, admin: requests.Session) -> None:
    url = server.url + BASE.format("v2")
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    names = [f"t{i}" for i in range(len(METRICS) + 1)]
    try:
        for i, name in enumerate(names):
            metrics = METRICS[i : i + 2] if i < len(METRICS) else METRICS
            spec = {"scaleTargetRef": ref, "maxReplicas": 5, "metrics": metrics}
            made = admin.post(url, json={"metadata": {"name": name}, "spec": spec}).json()
            if i % 2 == 0:
                made["status"] = {
                    "currentReplicas": 2,
                    "desiredReplicas": 3,
                    "currentMetrics": CURRENT[i % 3 : i % 3 + 2],
                }
                assert admin.put(f"{url}/{name}/status", json=made).status_code == 200
        table = admin.get(url, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        columns = [c["name"] for c in table.json()["columnDefinitions"]]
        assert columns == ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]
        rows = [r["cells"][:-1] for r in table.json()["rows"]]
        replicas = [2 if i % 2 == 0 else 0 for i in range(len(names))]
        assert rows == [
            [name, "Deployment/web", targets, "1", 5, count]
            for name, targets, count in zip(names, KUBE_TARGETS, replicas, strict=True)
        ]
    finally:
        for name in names:
            admin.delete(f"{url}/{name}")
