"""The pod-defaulting admission plugins on a real server: LimitRanger, ServiceAccount,
Priority and DefaultTolerationSeconds, with kube's messages (as the reference
kube-apiserver v1.36 answers them)."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually

PC = "/apis/scheduling.platform.io/v1/priorityclasses"


def namespace(admin: requests.Session, server: Server, name: str) -> str:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    r = admin.post(f"{server.url}/api/v1/namespaces", json=ns)
    assert r.status_code == 201, r.text
    return name


def pod(name: str, **spec: Any) -> dict[str, Any]:
    spec.setdefault("containers", [{"name": "nginx", "image": "nginx"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def create(admin: requests.Session, server: Server, ns: str, body: dict[str, Any]) -> Any:
    return admin.post(f"{server.url}/api/v1/namespaces/{ns}/pods", json=body)


def forbidden(name: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'pods "{name}" is forbidden: {message}',
        "reason": "Forbidden",
        "details": {"name": name, "kind": "pods"},
        "code": 403,
    }


def test_limit_range_defaults_and_maximum(server: Server, admin: requests.Session) -> None:
    ns = namespace(admin, server, "pod-plugins-limits")
    limit_range = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "lr"},
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "max": {"cpu": "1", "memory": "1Gi"},
                    "default": {"cpu": "500m", "memory": "512Mi"},
                    "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
                }
            ]
        },
    }
    r = admin.post(f"{server.url}/api/v1/namespaces/{ns}/limitranges", json=limit_range)
    assert r.status_code == 201, r.text
    eventually(lambda: create(admin, server, ns, pod("probe")).status_code == 201)
    r = create(admin, server, ns, pod("p1", initContainers=[{"name": "init", "image": "busybox"}]))
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "512Mi"},
        "requests": {"cpu": "100m", "memory": "256Mi"},
    }
    assert created["metadata"]["annotations"]["platform.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container nginx; cpu, memory limit "
        "for container nginx; cpu, memory request for init container init; cpu, memory limit "
        "for init container init"
    )
    big = [
        {"name": "nginx", "image": "nginx", "resources": {"limits": {"cpu": "2", "memory": "2Gi"}}}
    ]
    r = create(admin, server, ns, pod("x", containers=big))
    assert r.status_code == 403
    assert r.json() == forbidden(
        "x",
        "[maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per "
        "Container is 1Gi, but limit is 2Gi]",
    )


def test_missing_service_account_and_token_volume(server: Server, admin: requests.Session) -> None:
    ns = namespace(admin, server, "pod-plugins-sa")
    r = create(admin, server, ns, pod("x", serviceAccountName="sa"))
    assert r.status_code == 403
    assert r.json() == forbidden(
        "x", f'error looking up service account {ns}/sa: serviceaccount "sa" not found'
    )
    r = create(admin, server, ns, pod("ok"))  # waits for the controller's "default"
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert spec["serviceAccountName"] == "default"
    volume = spec["volumes"][0]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == 21
    assert volume["projected"]["sources"][0] == {
        "serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}
    }
    assert spec["containers"][0]["volumeMounts"] == [
        {
            "name": volume["name"],
            "readOnly": True,
            "mountPath": "/var/run/secrets/platform.io/serviceaccount",
        }
    ]


def test_priority_class_and_default_tolerations(server: Server, admin: requests.Session) -> None:
    ns = namespace(admin, server, "pod-plugins-priority")
    klass = {
        "apiVersion": "scheduling.platform.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "e2e-high"},
        "value": 1000,
    }
    r = admin.post(f"{server.url}{PC}", json=klass)
    assert r.status_code == 201, r.text
    assert r.json()["preemptionPolicy"] == "PreemptLowerPriority"
    eventually(lambda: create(admin, server, ns, pod("probe")).status_code == 201)
    r = create(admin, server, ns, pod("p", priorityClassName="e2e-high"))
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (1000, "PreemptLowerPriority")
    assert spec["tolerations"] == [
        {
            "key": f"node.platform.io/{key}",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        }
        for key in ("not-ready", "unreachable")
    ]
    r = create(admin, server, ns, pod("q", priorityClassName="nope"))
    assert r.status_code == 403
    assert r.json() == forbidden("q", "no PriorityClass with name nope was found")
    r = admin.get(f"{server.url}{PC}/system-node-critical")
    assert r.status_code == 200 and r.json()["value"] == 2000001000
