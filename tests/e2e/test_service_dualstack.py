"""A dual-stack server (``--service-cluster-ip-range`` with an IPv4 and an IPv6 CIDR):
the Service requests kube-apiserver v1.36 answered with the same two ranges
(tests/registry/fixtures/service_dualstack_kube.json) answered alike, and each address a
Service holds has its IPAddress, freed when the Service gives it up."""

from __future__ import annotations

import ipaddress
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import QUIET_CONTROLLERS, VENV_BIN, Server, session_for, start_server

FIXTURE = Path(__file__).parents[1] / "registry" / "fixtures" / "service_dualstack_kube.json"
RANGES = {
    "IPv4": ipaddress.ip_network("10.0.0.0/24"),
    "IPv6": ipaddress.ip_network("fd00:10::/108"),
}
NAMESPACE = "dualstack"
SERVICES = f"/api/v1/namespaces/{NAMESPACE}/services"
CASES = json.loads(FIXTURE.read_text())["cases"]
# Addresses a request names, and the networks' own (a dry run's): all others were picked.
STATIC = set(
    re.findall(
        r"\b(?:10\.\d+\.\d+\.\d+|fd00:[0-9a-f:]+)", json.dumps([c["request"] for c in CASES])
    )
) | {"10.0.0.0", "fd00:10::"}
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def dual_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """As the reference ran: dual-stack ranges, no service-cidr-controller."""
    server = start_server(
        tmp_path_factory.mktemp("dualstack") / "data",
        QUIET_CONTROLLERS + ",-service-cidr-controller",
        "--service-cluster-ip-range=10.0.0.0/24,fd00:10::/108",
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def admin(dual_stack: Server) -> requests.Session:
    return session_for(dual_stack, cert=dual_stack.admin_cert)


def _family(ip: str) -> str:
    return "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"


def _picked(ip: str) -> str:
    """A randomly picked address as the range it came from."""
    if ip in STATIC or ip == "None":
        return ip
    family = _family(ip)
    assert ipaddress.ip_address(ip) in RANGES[family], ip
    return f"<{family}>"


def _comparable(body: Obj) -> Obj:
    meta = body.get("metadata") or {}
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        meta.pop(key, None)
    spec = body.get("spec")
    if body.get("kind") == "Service" and isinstance(spec, dict):
        if spec.get("clusterIPs"):
            spec["clusterIPs"] = [_picked(ip) for ip in spec["clusterIPs"]]
        if spec.get("clusterIP"):
            spec["clusterIP"] = _picked(spec["clusterIP"])
    return body


def test_requests_answered_as_kube_answered(dual_stack: Server, admin: requests.Session) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    assert admin.post(f"{dual_stack.url}/api/v1/namespaces", json=body).status_code == 201
    for case in CASES:
        method, where, request_body, content = case["request"]
        url = dual_stack.url + where.replace("S", SERVICES, 1)
        headers = {"Content-Type": content or "application/json"}
        r = admin.request(method, url, json=request_body, headers=headers)
        got, want = _comparable(r.json()), _comparable(case["body"])
        assert (r.status_code, got) == (case["code"], want), (method, where, request_body)
    # every address a Service holds has its IPAddress; those given up are gone at once
    held = {
        item["metadata"]["name"]: item["spec"]["parentRef"]["name"]
        for item in admin.get(
            f"{dual_stack.url}/apis/networking.platform.io/v1/ipaddresses"
        ).json()["items"]
        if item["spec"]["parentRef"]["namespace"] == NAMESPACE
    }
    services = admin.get(dual_stack.url + SERVICES).json()["items"]
    wanted = {
        ip: s["metadata"]["name"]
        for s in services
        for ip in s["spec"].get("clusterIPs") or []
        if ip != "None"
    }
    assert held == wanted
    assert sorted(map(_family, held)) == ["IPv4"] * 6 + ["IPv6"] * 4


def test_kubectl_makes_and_shows_a_dual_stack_service(dual_stack: Server) -> None:
    kubectl = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(dual_stack.kubeconfig)]
    manifest = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "ipFamilyPolicy": "RequireDualStack",
            "ipFamilies": ["IPv6", "IPv4"],
            "selector": {"app": "web"},
            "ports": [{"port": 80}],
        },
    }
    subprocess.run(
        [*kubectl, "apply", "-f", "-"], input=json.dumps(manifest), text=True, check=True
    )
    shown = subprocess.run(
        [*kubectl, "get", "service", "web", "-o", "jsonpath={.spec.clusterIPs}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    six, four = json.loads(shown)
    assert ipaddress.ip_address(six) in RANGES["IPv6"]
    assert ipaddress.ip_address(four) in RANGES["IPv4"]
    # applying the same manifest again changes nothing
    again = subprocess.run(
        [*kubectl, "apply", "-f", "-"],
        input=json.dumps(manifest),
        text=True,
        capture_output=True,
        check=True,
    )
    assert again.stdout.strip() == "service/web unchanged"
