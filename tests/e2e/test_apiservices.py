"""APIServices (apiregistration.platform.io): validation as kube-apiserver v1.36 answered
the same dry runs (reference), the local registrations, and aggregated servers' group
versions while unavailable (503; test_aggregator_proxy.py proxies to a real one)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import crd_manifest, create_crd, delete_crd, eventually

GROUP = "apiregistration.platform.io"
BASE = f"/apis/{GROUP}/v1/apiservices"
KUBE_ANSWERS = json.loads(
    (Path(__file__).parents[1] / "registry" / "fixtures" / "apiservice_kube.json").read_text()
)
REMOTE = {
    "apiVersion": f"{GROUP}/v1",
    "kind": "APIService",
    "metadata": {"name": "v1beta1.metrics.example.com"},
    "spec": {
        "group": "metrics.example.com",
        "version": "v1beta1",
        "groupPriorityMinimum": 100,
        "versionPriority": 100,
        "insecureSkipTLSVerify": True,
        "service": {"namespace": "default", "name": "metrics"},
    },
}


def _rebranded(value: Any) -> Any:
    return json.loads(json.dumps(value).replace("apiregistration.k8s.io", GROUP))


def _without_times(status: Any) -> Any:
    for condition in (status or {}).get("conditions") or []:
        condition.pop("lastTransitionTime", None)
    return status


@pytest.mark.parametrize("case", KUBE_ANSWERS, ids=[c["name"] for c in KUBE_ANSWERS])
def test_apiservices_are_answered_as_kube_answered_them(
    server: Server, admin: requests.Session, case: dict[str, Any]
) -> None:
    body = _rebranded(case["body"])
    got = admin.post(server.url + BASE + "?dryRun=All", json=body)
    assert got.status_code == case["code"], got.text
    if case["code"] >= 300:
        assert got.json()["message"] == _rebranded(case["message"])
        return
    assert _without_times(got.json()["status"]) == _without_times(copy.deepcopy(case["status"]))


def test_the_served_group_versions_are_local_apiservices(
    server: Server, admin: requests.Session
) -> None:
    apps = admin.get(server.url + BASE + "/v1.apps").json()
    assert apps["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    assert apps["spec"] == {
        "group": "apps",
        "version": "v1",
        "groupPriorityMinimum": 17800,
        "versionPriority": 15,
    }
    [condition] = apps["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Available",
        "True",
        "Local",
    )
    assert condition["message"] == "Local APIServices are always available"
    spec = {"version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10}
    core = {**REMOTE, "metadata": {"name": "v1."}, "spec": spec}
    again = admin.post(server.url + BASE, json=core)
    assert again.status_code == 409
    assert again.json()["reason"] == "AlreadyExists"
    assert again.json()["message"] == f'apiservices.{GROUP} "v1." already exists'
    table = server.kubectl("get", "apiservices", "v1.", "v1.apps").stdout.splitlines()
    assert table[0].split() == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    assert table[1].split()[:3] == ["v1.", "Local", "True"]


def test_a_custom_resource_group_version_follows_its_definition(
    server: Server, admin: requests.Session
) -> None:
    url = server.url + BASE + "/v1.reg.example.com"
    create_crd(admin, server, crd_manifest("reg.example.com", "Widget", "widgets"))
    try:
        made = eventually(lambda: admin.get(url).status_code == 200 and admin.get(url).json())
        assert made["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}
        assert (made["spec"]["groupPriorityMinimum"], made["spec"]["versionPriority"]) == (
            1000,
            100,
        )
        assert admin.delete(url).status_code == 200  # made again: the definition still serves it
        assert eventually(lambda: admin.get(url).status_code == 200)
    finally:
        delete_crd(admin, server, "widgets.reg.example.com")
    assert eventually(lambda: admin.get(url).status_code == 404)


def _reason(admin: requests.Session, url: str) -> str:
    conditions = (admin.get(url).json().get("status") or {}).get("conditions") or []
    return conditions[0]["reason"] if conditions else ""


def test_an_aggregated_server_is_listed_checked_and_answered_503(
    server: Server, admin: requests.Session
) -> None:
    url = server.url + BASE + "/" + REMOTE["metadata"]["name"]
    core = server.url + "/api/v1/namespaces/default"
    slices = server.url + "/apis/discovery.platform.io/v1/namespaces/default/endpointslices"
    assert admin.post(server.url + BASE, json=REMOTE).status_code == 201
    try:
        assert eventually(lambda: _reason(admin, url) == "ServiceNotFound")
        message = admin.get(url).json()["status"]["conditions"][0]["message"]
        assert message == 'service/metrics in "default" is not present'
        ports = [{"name": "https", "port": 443, "targetPort": 8443}]
        service = {"metadata": {"name": "metrics"}, "spec": {"ports": ports}}
        assert admin.post(core + "/services", json=service).status_code == 201
        assert eventually(lambda: _reason(admin, url) == "EndpointsNotFound")
        endpoint_slice = {
            "apiVersion": "discovery.platform.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": "metrics-1", "labels": {"kubernetes.io/service-name": "metrics"}},
            "addressType": "IPv4",
            "ports": [{"name": "other", "port": 8443}],
            "endpoints": [{"addresses": ["10.0.0.5"]}],
        }
        assert admin.post(slices, json=endpoint_slice).status_code == 201
        assert eventually(lambda: _reason(admin, url) == "MissingEndpoints")
        endpoint_slice["ports"] = [{"name": "https", "port": 8443}]
        put = admin.put(slices + "/metrics-1", json=endpoint_slice)
        assert put.status_code == 200, put.text
        # Checks passed, then kube's discovery check at the Service's cluster IP, which no
        # cluster network routes to an aggregated server here (whatever the machine's own
        # network does with the address decides the rest of the message).
        assert eventually(lambda: _reason(admin, url) == "FailedDiscoveryCheck", timeout=20)
        message = admin.get(url).json()["status"]["conditions"][0]["message"]
        cluster_ip = admin.get(core + "/services/metrics").json()["spec"]["clusterIP"]
        check = f"https://{cluster_ip}:443/apis/metrics.example.com/v1beta1"
        assert message.startswith(f"failing or missing response from {check}: ")
        for path in ("/apis/metrics.example.com/v1beta1", "/apis/metrics.example.com/v1beta1/pods"):
            got = admin.get(server.url + path)
            assert got.status_code == 503
            assert got.headers["content-type"] == "text/plain; charset=utf-8"
            assert got.text == "service unavailable\n"
        group = admin.get(server.url + "/apis/metrics.example.com").json()
        assert group["preferredVersion"]["groupVersion"] == "metrics.example.com/v1beta1"
        listed = [g["name"] for g in admin.get(server.url + "/apis").json()["groups"]]
        assert listed[0] == GROUP and "metrics.example.com" in listed
    finally:
        admin.delete(url)
        admin.delete(core + "/services/metrics")
        admin.delete(slices + "/metrics-1")
    assert eventually(
        lambda: admin.get(server.url + "/apis/metrics.example.com").status_code == 404
    )


def test_an_aggregated_server_behind_hand_made_endpoints(
    server: Server, admin: requests.Session
) -> None:
    """The classic set-up for an aggregated server outside the cluster: a Service without
    a selector and an Endpoints object.  The mirroring controller makes its EndpointSlice,
    which the availability check reads (as kube's does)."""
    remote = {**REMOTE, "metadata": {"name": "v1beta1.external.example.com"}}
    remote["spec"] = {**REMOTE["spec"], "group": "external.example.com"}
    remote["spec"]["service"] = {"namespace": "default", "name": "external"}
    url = server.url + BASE + "/" + remote["metadata"]["name"]
    core = server.url + "/api/v1/namespaces/default"
    slices = server.url + "/apis/discovery.platform.io/v1/namespaces/default/endpointslices"
    ports = [{"name": "https", "port": 443, "targetPort": 8443}]
    service = {"metadata": {"name": "external"}, "spec": {"ports": ports}}
    endpoints = {
        "metadata": {"name": "external"},
        "subsets": [
            {"addresses": [{"ip": "10.0.0.7"}], "ports": [{"name": "https", "port": 8443}]}
        ],
    }
    assert admin.post(core + "/services", json=service).status_code == 201
    assert admin.post(core + "/endpoints", json=endpoints).status_code == 201
    assert admin.post(server.url + BASE, json=remote).status_code == 201
    try:
        assert eventually(lambda: _reason(admin, url) == "FailedDiscoveryCheck", timeout=20)
        selector = "endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io"
        (mirrored,) = admin.get(slices, params={"labelSelector": selector}).json()["items"]
        assert mirrored["metadata"]["labels"]["kubernetes.io/service-name"] == "external"
        assert mirrored["endpoints"] == [{"addresses": ["10.0.0.7"], "conditions": {"ready": True}}]
        assert mirrored["ports"] == [{"name": "https", "port": 8443, "protocol": "TCP"}]
        assert admin.delete(core + "/endpoints/external").status_code == 200
        assert eventually(lambda: _reason(admin, url) == "EndpointsNotFound")
        assert admin.get(slices, params={"labelSelector": selector}).json()["items"] == []
    finally:
        admin.delete(url)
        admin.delete(core + "/services/external")
        admin.delete(core + "/endpoints/external")


def test_requests_to_an_aggregated_server_are_authorized_first(tmp_path: Path) -> None:
    """kube's aggregator proxies only what the filter chain let through."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("t-carol,carol,2\n")
    rbac = start_server(
        tmp_path / "data", "--authorization-mode", "RBAC", "--token-auth-file", str(tokens)
    )
    try:
        admin = session_for(rbac, cert=rbac.admin_cert)
        assert admin.post(rbac.url + BASE, json=REMOTE).status_code == 201
        path = rbac.url + "/apis/metrics.example.com/v1beta1/namespaces/a/pods"
        denied = session_for(rbac, token="t-carol").get(path)
        assert denied.status_code == 403
        assert denied.json()["message"] == (
            'pods.metrics.example.com is forbidden: User "carol" cannot list resource "pods" '
            'in API group "metrics.example.com" in the namespace "a"'
        )
        assert admin.get(path).status_code == 503
    finally:
        rbac.stop()
