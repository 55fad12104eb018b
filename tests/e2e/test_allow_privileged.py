"""--allow-privileged: privileged containers pass by default (as installers set it) and
are refused with it false, in pods and every pod template, as kube-apiserver v1.36
refuses them (its answers checked on the reference build, whose default is false)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import session_for, start_server

pytestmark = pytest.mark.slow
PRIVILEGED = {"privileged": True}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "priv"},
    "spec": {
        "initContainers": [{"name": "i", "image": "busybox", "securityContext": PRIVILEGED}],
        "containers": [
            {"name": "c", "image": "busybox", "securityContext": PRIVILEGED},
            {"name": "d", "image": "busybox", "securityContext": {"privileged": False}},
        ],
    },
}
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "privd"},
    "spec": {
        "selector": {"matchLabels": {"a": "b"}},
        "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {
                "containers": [{"name": "c", "image": "busybox", "securityContext": PRIVILEGED}]
            },
        },
    },
}
HOST_PROCESS = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "hp"},
    "spec": {
        "hostNetwork": True,
        "securityContext": {"windowsOptions": {"hostProcess": True}},
        "os": {"name": "windows"},
        "containers": [{"name": "c", "image": "busybox"}],
    },
}


def test_privileged_containers_follow_the_flag(tmp_path: Path) -> None:
    refusing = start_server(tmp_path / "off", "--allow-privileged=false")
    allowing = start_server(tmp_path / "on")
    try:
        admin = session_for(refusing, cert=refusing.admin_cert)
        pods = refusing.url + "/api/v1/namespaces/default/pods"
        r = admin.post(pods, json=POD)
        assert (r.status_code, r.json()["reason"]) == (422, "Invalid")
        assert r.json()["message"] == (
            'Pod "priv" is invalid: [spec.containers[0].securityContext.privileged: '
            "Forbidden: disallowed by cluster policy, "
            "spec.initContainers[0].securityContext.privileged: Forbidden: disallowed by "
            "cluster policy]"
        )
        r = admin.post(
            refusing.url + "/apis/apps/v1/namespaces/default/deployments", json=DEPLOYMENT
        )
        assert (r.status_code, r.json()["message"]) == (
            422,
            'Deployment.apps "privd" is invalid: spec.template.spec.containers[0]'
            ".securityContext.privileged: Forbidden: disallowed by cluster policy",
        )
        r = admin.post(pods, json=HOST_PROCESS)
        assert (r.status_code, r.json()["message"]) == (
            422,
            'Pod "hp" is invalid: spec: Forbidden: hostProcess containers are disallowed by '
            "cluster policy",
        )
        assert admin.get(pods).json()["items"] == []  # nothing half-written
        admin = session_for(allowing, cert=allowing.admin_cert)
        assert (
            admin.post(allowing.url + "/api/v1/namespaces/default/pods", json=POD).status_code
            == 201
        )
    finally:
        refusing.stop()
        allowing.stop()
