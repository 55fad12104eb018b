"""Pod status writes on a real server: what a kubelet stand-in may report, in kube's words."""

from __future__ import annotations

import json

import requests

from tests.e2e.conftest import Server
from tests.e2e.test_list import make_namespace


def test_addresses_are_checked_and_converted_as_kube_does(
    server: Server, admin: requests.Session
) -> None:
    url = server.url + make_namespace(admin, server, "pod-status").replace("configmaps", "pods")
    pod = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert admin.post(url, json=pod).status_code == 201
    current = admin.get(f"{url}/web").json()
    bad = {
        **current,
        "status": {**current["status"], "podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]},
    }
    r = admin.put(f"{url}/web/status", json=bad)
    detail = "may specify no more than one IP for each IP family"
    value = '[{"IP":"10.0.0.1"},{"IP":"10.0.0.2"}]'
    assert r.status_code == 422
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'Pod "web" is invalid: status.podIPs: Invalid value: {value}: {detail}',
        "reason": "Invalid",
        "details": {
            "name": "web",
            "kind": "Pod",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": f"Invalid value: {value}: {detail}",
                    "field": "status.podIPs",
                }
            ],
        },
        "code": 422,
    }
    unchanged = admin.get(f"{url}/web").json()
    assert unchanged["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    # podIP alone (an older kubelet's) is authoritative: podIPs follows it.
    patch = json.dumps({"status": {"podIP": "10.0.0.7", "phase": "Running"}})
    server.kubectl(
        "patch",
        "pod",
        "web",
        "-n",
        "pod-status",
        "--subresource=status",
        "--type=merge",
        "-p",
        patch,
    )
    status = admin.get(f"{url}/web").json()["status"]
    assert (status["podIP"], status["podIPs"], status["qosClass"]) == (
        "10.0.0.7",
        [{"ip": "10.0.0.7"}],
        "BestEffort",
    )
