"""How often a bad finalizer is a cause of a refused write: once per metadata check
through core's wrappers that the write's kind runs, as kube-apiserver v1.36 answered
(reference, 2026-12-08); the message names it once."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.test_list import make_namespace

FINALIZER = "metadata.finalizers[0]"
TEMPLATE = {"spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}}


def _fields(response: requests.Response) -> list[str]:
    assert response.status_code == 422, response.text
    assert response.json()["message"].count("name is neither a standard finalizer") == 1
    return [cause["field"] for cause in response.json()["details"]["causes"]]


def _refused(admin: requests.Session, url: str, body: dict[str, Any], sub: str = "") -> list[str]:
    made = admin.post(url, json=body)
    assert made.status_code == 201, made.text
    current = made.json()
    current["metadata"]["finalizers"] = ["bad"]
    name = current["metadata"]["name"]
    return _fields(admin.put(f"{url}/{name}{sub}", json=current))


def test_a_bad_finalizer_is_a_cause_per_core_check(server: Server, admin: requests.Session) -> None:
    ns = make_namespace(admin, server, "meta-causes").split("/")[4]
    core = f"{server.url}/api/v1/namespaces/{ns}"
    configmap = {"metadata": {"name": "c"}}
    assert _refused(admin, f"{core}/configmaps", configmap) == [FINALIZER] * 2
    lease = {"metadata": {"name": "l"}, "spec": {}}
    leases = f"{server.url}/apis/coordination.platform.io/v1/namespaces/{ns}/leases"
    made = admin.post(leases, json=lease)
    current = made.json()
    current["metadata"]["finalizers"] = ["bad"]
    assert admin.put(f"{leases}/l", json=current).status_code == 200  # apimachinery's checks
    drop = {"metadata": {"finalizers": None}}
    merge = {"Content-Type": "application/merge-patch+json"}
    assert admin.patch(f"{leases}/l", json=drop, headers=merge).status_code == 200
    cronjob = {
        "metadata": {"name": "cj"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": TEMPLATE}}},
    }
    cronjobs = f"{server.url}/apis/batch/v1/namespaces/{ns}/cronjobs"
    made = admin.post(cronjobs, json=cronjob)
    assert made.status_code == 201, made.text
    current = made.json()
    current["metadata"]["finalizers"] = ["bad"]
    # a CronJob's status strategy checks nothing itself, and the generic checks have no
    # finalizer rules for built-in names: the write goes through
    assert admin.put(f"{cronjobs}/cj/status", json=current).status_code == 200
    assert admin.patch(f"{cronjobs}/cj", json=drop, headers=merge).status_code == 200
    claim = {
        "metadata": {"name": "pvc"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    assert _refused(admin, f"{core}/persistentvolumeclaims", claim) == [FINALIZER] * 2
    assert _refused(
        admin,
        f"{core}/services",
        {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}},
        "/status",
    ) == [FINALIZER]
