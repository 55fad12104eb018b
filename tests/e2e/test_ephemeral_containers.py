"""``kubectl debug`` and ``pods/ephemeralcontainers``: answers as kube-apiserver v1.36
gave them to the same requests (reference), the diff that follows "may not be changed"
included (of kube's internal Go type)."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server

SMP = {"Content-Type": "application/strategic-merge-patch+json"}


def _pod(name: str) -> dict[str, Any]:
    spec = {"containers": [{"name": "c", "image": "i"}], "volumes": [{"name": "v", "emptyDir": {}}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_kubectl_debug_adds_an_ephemeral_container(server: Server) -> None:
    server.kubectl("run", "debugged", "--image=nginx", "--restart=Never")
    try:
        out = server.kubectl(
            "debug", "pod/debugged", "--image=busybox", "-c", "dbg", "--target=debugged"
        )
        assert 'Targeting container "debugged"' in out.stdout + out.stderr
        shown = server.kubectl(
            "get",
            "pod",
            "debugged",
            "-o",
            "jsonpath={.spec.ephemeralContainers[0].targetContainerName} {.metadata.generation}",
        )
        assert shown.stdout == "debugged 2"
        again = server.kubectl("debug", "pod/debugged", "--image=busybox", "-c", "dbg", check=False)
        assert again.returncode == 1
        assert 'existing ephemeral containers "dbg" may not be changed' in again.stderr
    finally:
        server.kubectl("delete", "pod", "debugged", "--wait=false")


def test_the_subresource_changes_ephemeral_containers_only(
    server: Server, admin: requests.Session
) -> None:
    base = server.url + "/api/v1/namespaces/default/pods"
    assert admin.post(base, json=_pod("eph")).status_code == 201
    url = f"{base}/eph/ephemeralcontainers"
    try:
        assert admin.get(url).json()["kind"] == "Pod"
        debug = {
            "name": "dbg",
            "image": "busybox",
            "targetContainerName": "c",
            "stdin": True,
            "volumeMounts": [{"name": "v", "mountPath": "/v"}],
        }
        added = admin.patch(url, json={"spec": {"ephemeralContainers": [debug]}}, headers=SMP)
        assert added.status_code == 200
        assert added.json()["spec"]["ephemeralContainers"] == [
            {
                "name": "dbg",
                "image": "busybox",
                "targetContainerName": "c",
                "stdin": True,
                "volumeMounts": [{"name": "v", "mountPath": "/v"}],
                "imagePullPolicy": "Always",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "resources": {},
            }
        ]
        assert added.json()["metadata"]["generation"] == 2
        # the body is decoded as a Pod, defaults and all, before ownership is recorded
        (owned,) = [m for m in added.json()["metadata"]["managedFields"] if m.get("subresource")]
        assert owned["subresource"] == "ephemeralcontainers"
        assert owned["fieldsV1"]["f:spec"]["f:ephemeralContainers"]['k:{"name":"dbg"}'] == {
            ".": {},
            "f:image": {},
            "f:imagePullPolicy": {},
            "f:name": {},
            "f:resources": {},
            "f:stdin": {},
            "f:targetContainerName": {},
            "f:terminationMessagePath": {},
            "f:terminationMessagePolicy": {},
            "f:volumeMounts": {
                ".": {},
                'k:{"mountPath":"/v"}': {".": {}, "f:mountPath": {}, "f:name": {}},
            },
        }
        ignored = admin.patch(
            url,
            json={"metadata": {"labels": {"a": "b"}}, "spec": {"activeDeadlineSeconds": 5}},
            headers=SMP,
        ).json()
        assert ("labels" in ignored["metadata"], "activeDeadlineSeconds" in ignored["spec"]) == (
            False,
            False,
        )
        assert ignored["metadata"]["generation"] == 2
        prefix = 'Pod "eph" is invalid: '
        for patch, message in _REFUSED:
            refused = admin.patch(url, json=patch, headers=SMP)
            assert (refused.status_code, refused.json()["reason"]) == (422, "Invalid")
            assert refused.json()["message"] == prefix + message
        changed = admin.patch(
            url,
            json={"spec": {"ephemeralContainers": [{**debug, "image": "busybox2"}]}},
            headers=SMP,
        )
        assert changed.json()["message"] == (
            prefix
            + 'spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not '
            'be changed\n@@ -1,6 +1,6 @@\n {\n  "Name": "dbg",\n- "Image": "busybox",\n'
            '+ "Image": "busybox2",\n  "Command": null,\n  "Args": null,\n  "WorkingDir": "",\n'
        )
        removed = admin.patch(
            url,
            json=[{"op": "remove", "path": "/spec/ephemeralContainers/0"}],
            headers={"Content-Type": "application/json-patch+json"},
        )
        assert (
            removed.json()["message"]
            == prefix
            + 'spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed\n'
        )
        assert admin.post(url, json={}).status_code == 405
        assert (
            admin.patch(f"{base}/nope/ephemeralcontainers", json={}, headers=SMP).json()["message"]
            == 'pods "nope" not found'
        )
        created = admin.post(
            base,
            json={
                **_pod("eph2"),
                "spec": {
                    **_pod("eph2")["spec"],
                    "ephemeralContainers": [{"name": "d", "image": "b"}],
                },
            },
        )
        assert (
            created.json()["message"]
            == 'Pod "eph2" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create'
        )
    finally:
        admin.delete(f"{base}/eph")


NOT_HERE = "Forbidden: cannot be set for an Ephemeral Container"
_REFUSED = [
    (
        {
            "spec": {
                "ephemeralContainers": [
                    {
                        "name": "x",
                        "image": "b",
                        "ports": [{"containerPort": 80}],
                        "resources": {"limits": {"cpu": "1"}},
                        "restartPolicy": "Always",
                        "lifecycle": {"postStart": {"exec": {"command": ["a"]}}},
                        "volumeMounts": [{"name": "v", "mountPath": "/w", "subPath": "x"}],
                    }
                ]
            }
        },
        f"[spec.ephemeralContainers[0].ports: {NOT_HERE}, spec.ephemeralContainers[0].resources: {NOT_HERE}, "
        f"spec.ephemeralContainers[0].restartPolicy: {NOT_HERE}, spec.ephemeralContainers[0].lifecycle: {NOT_HERE}, "
        f"spec.ephemeralContainers[0].volumeMounts[0].subPath: {NOT_HERE}]",
    ),
    (
        {
            "spec": {
                "ephemeralContainers": [{"name": "y", "image": "b", "targetContainerName": "nope"}]
            }
        },
        'spec.ephemeralContainers[0].targetContainerName: Not found: "nope"',
    ),
    (
        {"spec": {"ephemeralContainers": [{"name": "c", "image": "b"}]}},
        'spec.ephemeralContainers[0].name: Duplicate value: "c"',
    ),
    (
        {"spec": {"ephemeralContainers": [{"name": "sp", "image": " b"}]}},
        'spec.ephemeralContainers[0].image: Invalid value: " b": must not have leading or trailing whitespace',
    ),
]


def test_a_created_pod_carries_its_qos_class(server: Server, admin: requests.Session) -> None:
    """status.qosClass as kube computes it on create (it was always BestEffort here)."""
    base = server.url + "/api/v1/namespaces/default/pods"
    limits = {"limits": {"cpu": "1", "memory": "1Gi"}}
    for name, resources, qos in (
        ("qos-g", limits, "Guaranteed"),
        ("qos-b", {"requests": {"cpu": "100m"}}, "Burstable"),
        ("qos-e", {}, "BestEffort"),
    ):
        body = _pod(name)
        body["spec"]["containers"][0]["resources"] = resources
        created = admin.post(base, json=body)
        assert created.json()["status"]["qosClass"] == qos, name
        admin.delete(f"{base}/{name}")


def test_a_pod_created_with_scheduling_gates_says_so(
    server: Server, admin: requests.Session
) -> None:
    """kube's pod strategy marks a gated pod PodScheduled=False/SchedulingGated on create
    (reference: v1.36 dry-run create); a client's own status is replaced, as kube's is."""
    base = server.url + "/api/v1/namespaces/default/pods"
    body = _pod("gated")
    body["spec"]["schedulingGates"] = [{"name": "example.com/gate"}]
    body["status"] = {"conditions": [{"type": "PodScheduled", "status": "True"}]}
    created = admin.post(base, json=body)
    try:
        assert created.status_code == 201
        pod = created.json()
        assert pod["status"]["conditions"] == [
            {
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": pod["metadata"]["creationTimestamp"],
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            }
        ]
        plain = admin.post(base, json=_pod("ungated")).json()
        assert "conditions" not in plain["status"]
    finally:
        admin.delete(f"{base}/gated")
        admin.delete(f"{base}/ungated")
