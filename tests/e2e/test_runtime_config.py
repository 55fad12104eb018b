"""``--runtime-config`` with the real server: alpha and beta versions come and go from
discovery, OpenAPI and routes; objects outlive a disabled version; versions kube no
longer serves answer 404."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, session_for, start_server

COORDINATION = "coordination.platform.io"
ADMISSION = "admissionregistration.platform.io"
AGGREGATED = "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
NOT_FOUND = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "the server could not find the requested resource",
    "reason": "NotFound",
    "details": {},
    "code": 404,
}
# A group nobody serves (extensions, or one switched off) falls to Go's NotFound handler,
# as kube-apiserver v1.36 answered these paths.
PAGE_NOT_FOUND = "404 page not found\n"


def _candidate(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{COORDINATION}/v1alpha2",
        "kind": "LeaseCandidate",
        "metadata": {"name": name},
        "spec": {
            "leaseName": "controller",
            "binaryVersion": "1.36.0",
            "strategy": "OldestEmulationVersion",
        },
    }


def _policy(name: str, version: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{ADMISSION}/{version}",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["configmaps"],
                    }
                ]
            },
            "reinvocationPolicy": "Never",
            "mutations": [
                {
                    "patchType": "JSONPatch",
                    "jsonPatch": {
                        "expression": '[JSONPatch{op: "test", path: "/data", value: {}}]'
                    },
                }
            ],
        },
    }


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/apis/batch/v1beta1/cronjobs", NOT_FOUND),
        ("/apis/batch/v1beta1", NOT_FOUND),
        ("/apis/flowcontrol.apiserver.platform.io/v1beta3", NOT_FOUND),
        ("/apis/extensions/v1beta1/ingresses", PAGE_NOT_FOUND),
        ("/apis/extensions", PAGE_NOT_FOUND),
        ("/apis/apps/v1beta2/deployments", NOT_FOUND),
        ("/apis/autoscaling/v2beta2/horizontalpodautoscalers", NOT_FOUND),
    ],
)
def test_versions_no_longer_served_answer_404(server: Server, path: str, body: object) -> None:
    assert server.request("GET", path) == (404, body)


def test_alpha_and_beta_versions_are_off_by_default(server: Server) -> None:
    status, group = server.request("GET", f"/apis/{COORDINATION}")
    assert status == 200
    assert [v["version"] for v in group["versions"]] == ["v1"]
    assert server.request("GET", f"/apis/{COORDINATION}/v1alpha2/leasecandidates") == (
        404,
        NOT_FOUND,
    )
    assert server.request("GET", f"/openapi/v3/apis/{COORDINATION}/v1alpha2")[0] == 404
    status, resource = server.request("GET", "/apis/resource.platform.io")
    assert (status, [v["version"] for v in resource["versions"]]) == (200, ["v1"])


@pytest.mark.slow
def test_alpha_group_served_when_enabled(tmp_path: Path) -> None:
    running = start_server(tmp_path / "data", "--runtime-config=api/alpha=true")
    try:
        status, group = running.request("GET", f"/apis/{COORDINATION}")
        assert status == 200
        assert [v["version"] for v in group["versions"]] == ["v1", "v1alpha2"]
        assert group["preferredVersion"]["version"] == "v1"
        status, resources = running.request("GET", f"/apis/{COORDINATION}/v1alpha2")
        assert [r["name"] for r in resources["resources"]] == ["leasecandidates"]
        # beta stays off: only api/alpha was named
        assert running.request("GET", f"/apis/{COORDINATION}/v1beta1")[0] == 404
        path = f"/apis/{COORDINATION}/v1alpha2/namespaces/default/leasecandidates"
        status, created = running.request("POST", path, _candidate("one"))
        assert status == 201, created
        status, got = running.request("GET", f"{path}/one")
        assert (status, got["spec"]["leaseName"]) == (200, "controller")
        assert got["apiVersion"] == f"{COORDINATION}/v1alpha2"
        status, spec = running.request("GET", f"/openapi/v3/apis/{COORDINATION}/v1alpha2")
        assert status == 200
        assert any(p.endswith("/leasecandidates") for p in spec["paths"])
        session = session_for(running, cert=running.admin_cert)
        r = session.get(f"{running.url}/apis", headers={"Accept": AGGREGATED})
        (doc,) = [g for g in r.json()["items"] if g["metadata"]["name"] == COORDINATION]
        assert [v["version"] for v in doc["versions"]] == ["v1", "v1alpha2"]
        out = running.kubectl("api-resources", f"--api-group={COORDINATION}").stdout
        assert f"{COORDINATION}/v1alpha2" in out and "leasecandidates" in out
        names = running.kubectl("get", "leasecandidates", "-o", "name").stdout
        assert names.split() == [f"leasecandidate.{COORDINATION}/one"]
        table = running.kubectl("get", "leasecandidates").stdout.splitlines()
        assert table[0].split() == [
            "NAME",
            "LEASENAME",
            "BINARYVERSION",
            "EMULATIONVERSION",
            "AGE",
        ]
        assert table[1].split()[:3] == ["one", "controller", "1.36.0"]
    finally:
        running.stop()


@pytest.mark.slow
def test_beta_and_ga_versions_share_one_storage(tmp_path: Path) -> None:
    running = start_server(
        tmp_path / "data", "--runtime-config=admissionregistration.k8s.io/v1beta1=true"
    )
    try:
        beta = f"/apis/{ADMISSION}/v1beta1/mutatingadmissionpolicies"
        status, created = running.request("POST", beta, _policy("shared", "v1beta1"))
        assert status == 201, created
        assert created["apiVersion"] == f"{ADMISSION}/v1beta1"
        status, ga = running.request(
            "GET", f"/apis/{ADMISSION}/v1/mutatingadmissionpolicies/shared"
        )
        assert (status, ga["apiVersion"]) == (200, f"{ADMISSION}/v1")
        assert ga["metadata"]["uid"] == created["metadata"]["uid"]
        status, listed = running.request("GET", beta)
        assert listed["apiVersion"] == f"{ADMISSION}/v1beta1"
        assert [i["metadata"]["uid"] for i in listed["items"]] == [created["metadata"]["uid"]]
        assert "apiVersion" not in listed["items"][0]  # kube's built-in list items
        # the alpha version was not named: not served
        assert running.request("GET", f"/apis/{ADMISSION}/v1alpha1")[0] == 404
    finally:
        running.stop()


@pytest.mark.slow
def test_disabled_ga_version_keeps_its_objects(tmp_path: Path) -> None:
    data = tmp_path / "data"
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "kept"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            }
        },
    }
    running = start_server(data)
    try:
        status, body = running.request("POST", "/apis/batch/v1/namespaces/default/jobs", job)
        assert status == 201, body
    finally:
        running.stop()
    running = start_server(data, "--runtime-config=batch/v1=false")
    try:
        assert running.request("GET", "/apis/batch/v1") == (404, PAGE_NOT_FOUND)
        assert running.request("GET", "/apis/batch") == (404, PAGE_NOT_FOUND)
        assert running.request("GET", "/apis/batch/v1/namespaces/default/jobs/kept") == (
            404,
            PAGE_NOT_FOUND,
        )
        _, groups = running.request("GET", "/apis")
        assert "batch" not in [g["name"] for g in groups["groups"]]
        result = running.kubectl("get", "jobs", check=False)
        assert result.returncode == 1
        assert 'the server doesn\'t have a resource type "jobs"' in result.stderr
    finally:
        running.stop()
    running = start_server(data)
    try:
        status, got = running.request("GET", "/apis/batch/v1/namespaces/default/jobs/kept")
        assert (status, got["metadata"]["name"]) == (200, "kept")
    finally:
        running.stop()


def test_bad_runtime_config_stops_the_server(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"unknown api groups foo\.example\.com/v1"):
        start_server(tmp_path / "data", "--runtime-config=foo.example.com/v1=true", timeout=15)


@pytest.mark.slow
def test_removed_versions_stay_unserved_when_named(tmp_path: Path) -> None:
    """kube accepts the versions its scheme still registers and serves nothing for them."""
    running = start_server(
        tmp_path / "data",
        "--runtime-config=batch/v1beta1=true,extensions/v1beta1,"
        "flowcontrol.apiserver.k8s.io/v1beta3=true",
    )
    try:
        for path, body in (
            ("/apis/batch/v1beta1/cronjobs", NOT_FOUND),
            ("/apis/extensions/v1beta1/ingresses", PAGE_NOT_FOUND),
            ("/apis/flowcontrol.apiserver.platform.io/v1beta3", NOT_FOUND),
        ):
            assert running.request("GET", path) == (404, body), path
    finally:
        running.stop()
    with pytest.raises(RuntimeError, match=r"group version autoscaling/v2beta2 that has not"):
        start_server(tmp_path / "data", "--runtime-config=autoscaling/v2beta2=true", timeout=15)
