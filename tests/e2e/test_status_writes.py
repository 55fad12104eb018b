"""Status writes on a real server (pods, Services, Ingresses): what a kubelet or a load
balancer controller stand-in may report, in kube's words."""

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


def test_a_load_balancer_reports_addresses_kube_would_take(
    server: Server, admin: requests.Session
) -> None:
    base = server.url + make_namespace(admin, server, "lb-status").replace("/configmaps", "")
    lb = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
    made = admin.post(base + "/services", json=lb).json()
    bad = {**made, "status": {"loadBalancer": {"ingress": [{"hostname": "1.2.3.4"}]}}}
    r = admin.put(base + "/services/lb/status", json=bad)
    assert (r.status_code, r.json()["message"]) == (
        422,
        'Service "lb" is invalid: status.loadBalancer.ingress[0].hostname: Invalid value: '
        '"1.2.3.4": must be a DNS name, not an IP address',
    )
    good = {**made, "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.7"}]}}}
    r = admin.put(base + "/services/lb/status", json=good)
    assert r.status_code == 200
    assert r.json()["status"] == {
        "loadBalancer": {"ingress": [{"ip": "192.0.2.7", "ipMode": "VIP"}]}
    }


def test_a_negative_workload_count_is_refused_in_kubes_words(
    server: Server, admin: requests.Session
) -> None:
    """A Deployment's status with replicas below the counts it leaves out (0 each): every
    count is reported above it, as the reference answered, and nothing is stored."""
    url = server.url + make_namespace(admin, server, "deploy-status").replace(
        "/api/v1", "/apis/apps/v1"
    ).replace("configmaps", "deployments")
    labels = {"app": "web"}
    template = {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    body = {
        "metadata": {"name": "web"},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": template},
    }
    assert admin.post(url, json=body).status_code == 201
    status = {
        "status": {
            "replicas": -1,
            "readyReplicas": 5,
            "updatedReplicas": None,
            "availableReplicas": None,
        }
    }
    merge = {"Content-Type": "application/merge-patch+json"}
    r = admin.patch(f"{url}/web/status", data=json.dumps(status), headers=merge)
    above = "cannot be greater than status.replicas"
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        422,
        "Invalid",
        'Deployment.apps "web" is invalid: [status.replicas: Invalid value: -1: must be greater '
        f"than or equal to 0, status.updatedReplicas: Invalid value: 0: {above}, "
        f"status.readyReplicas: Invalid value: 5: {above}, status.availableReplicas: Invalid "
        f"value: 0: {above}]",
    )
    assert admin.get(f"{url}/web").json()["status"].get("readyReplicas") != 5
