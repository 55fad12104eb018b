"""``pods/resize`` (``kubectl patch --subresource=resize``): in-place cpu and memory
changes, each answer as kube-apiserver v1.36 gave it to the same request (reference)."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server

SMP = {"Content-Type": "application/strategic-merge-patch+json"}


def _pod(name: str, resources: dict[str, Any]) -> dict[str, Any]:
    container = {"name": "c", "image": "i", "resources": resources}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container]},
    }


def _burstable(server: Server, admin: requests.Session, name: str) -> str:
    """Create a Burstable pod ``name``; the pods' URL."""
    base = server.url + "/api/v1/namespaces/default/pods"
    created = admin.post(
        base, json=_pod(name, {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}})
    )
    assert created.status_code == 201
    return base


def _resources(**resources: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": resources}]}}


def test_kubectl_resizes_a_pod_in_place(server: Server, admin: requests.Session) -> None:
    base = _burstable(server, admin, "resized")
    try:
        patch = '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"200m"}}}]}}'
        server.kubectl("patch", "pod", "resized", "--subresource=resize", "-p", patch)
        pod = admin.get(f"{base}/resized").json()
        assert pod["spec"]["containers"][0]["resources"] == {
            "limits": {"cpu": "1"},
            "requests": {"cpu": "200m"},
        }
        assert (pod["metadata"]["generation"], pod["status"]["qosClass"]) == (2, "Burstable")
    finally:
        admin.delete(f"{base}/resized")


def test_only_cpu_and_memory_change_and_the_qos_class_stays(
    server: Server, admin: requests.Session
) -> None:
    base = _burstable(server, admin, "rs")
    url = f"{base}/rs/resize"
    try:
        assert admin.get(url).json()["kind"] == "Pod"
        ignored = admin.patch(
            url,
            json={
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "j"}], "activeDeadlineSeconds": 9},
            },
            headers=SMP,
        ).json()
        assert (
            ignored["spec"]["containers"][0]["image"],
            "labels" in ignored["metadata"],
            ignored["metadata"]["generation"],
        ) == ("i", False, 1)
        emptied = admin.patch(url, json=_resources(requests={"cpu": None}), headers=SMP).json()
        assert emptied["spec"]["containers"][0]["resources"]["requests"] == {
            "cpu": "1"
        }  # from the limit
        prefix = 'Pod "rs" is invalid: '
        for patch, message in (
            (
                _resources(
                    requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"}
                ),
                'spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing',
            ),
            (
                _resources(requests={"ephemeral-storage": "1Gi"}),
                "spec: Forbidden: only cpu and memory resources are mutable",
            ),
            (
                _resources(requests={"cpu": "-1"}),
                'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
            ),
            (
                _resources(requests={"cpu": "2"}),
                'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
            ),
            (
                {
                    "spec": {
                        "containers": [
                            {
                                "name": "c",
                                "resizePolicy": [
                                    {"resourceName": "cpu", "restartPolicy": "RestartContainer"}
                                ],
                            }
                        ]
                    }
                },
                "spec: Forbidden: only cpu and memory resources are mutable",
            ),
        ):
            refused = admin.patch(url, json=patch, headers=SMP)
            assert (refused.status_code, refused.json()["reason"], refused.json()["message"]) == (
                422,
                "Invalid",
                prefix + message,
            )
        assert admin.post(url, json={}).status_code == 405
    finally:
        admin.delete(f"{base}/rs")
