"""A workload's ``scale`` sub-resource over real HTTPS, as kube-apiserver v1.36 answers
it: reads, PUTs, ``kubectl scale``, a Scale of zero written as Go writes it, and
server-side apply with its ownership mapped onto the workload's ``spec.replicas``."""

from __future__ import annotations

import requests

from tests.e2e.conftest import Server
from tests.e2e.test_workloads import deployment


def test_scale_subresource_and_kubectl_scale(server: Server, admin: requests.Session) -> None:
    base = "/apis/apps/v1/namespaces/default/deployments"
    admin.post(server.url + base, json=deployment("scaled"))
    r = admin.get(server.url + base + "/scaled/scale")
    scale = r.json()
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 1} and scale["status"]["selector"] == "app=scaled"
    # The deployment controller writes the status meanwhile: a PUT of the Scale read
    # before such a write is refused, so read it again until one lands.
    for _ in range(20):
        scale = admin.get(server.url + base + "/scaled/scale").json()
        scale["spec"]["replicas"] = 2
        r = admin.put(server.url + base + "/scaled/scale", json=scale)
        if r.status_code != 409:
            break
    assert (r.status_code, r.json()["spec"]["replicas"]) == (200, 2)
    r = admin.put(server.url + base + "/scaled/scale", json=scale)  # stale resourceVersion
    assert (r.status_code, r.json()["reason"]) == (409, "Conflict")
    assert (
        "deployment.apps/scaled scaled"
        in server.kubectl("scale", "deployment", "scaled", "--replicas=5").stdout
    )
    scaled = admin.get(server.url + base + "/scaled").json()
    assert scaled["spec"]["replicas"] == 5
    by_scale = [e for e in scaled["metadata"]["managedFields"] if e.get("subresource") == "scale"]
    assert [(e["manager"], e["operation"], e["fieldsV1"]) for e in by_scale] == [
        ("kubectl", "Update", {"f:spec": {"f:replicas": {}}})
    ]
    r = admin.patch(
        server.url + base + "/scaled/scale",
        data=b'{"spec":{"replicas":-1}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 422
    # Scaled to zero, the Scale is written as Go writes it: replicas is omitempty.
    r = admin.put(
        server.url + base + "/scaled/scale",
        json={"kind": "Scale", "metadata": {"name": "scaled"}, "spec": {}},
    )
    assert (r.status_code, r.json()["spec"]) == (200, {})
    assert admin.get(server.url + base + "/scaled").json()["spec"]["replicas"] == 0
    # Server-side apply to the Scale: its owners are the object's owners of the replicas
    # (the PUT just above), and the apply's entry lands on the object (kube's answers).
    config = b'{"apiVersion":"autoscaling/v1","kind":"Scale","spec":{"replicas":1}}'
    apply = {"Content-Type": "application/apply-patch+yaml"}
    refused = admin.patch(server.url + base + "/scaled/scale?fieldManager=m", config, headers=apply)
    assert (refused.status_code, refused.json()["message"]) == (
        409,
        'Apply failed with 1 conflict: conflict with "python-requests" with subresource '
        '"scale" using autoscaling/v1: .spec.replicas',
    )
    with_owners = (
        b'{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"managedFields":[{}]}}'
    )
    refused = admin.patch(
        server.url + base + "/scaled/scale?fieldManager=m", with_owners, headers=apply
    )
    assert (refused.status_code, refused.json()["message"]) == (
        400,
        "metadata.managedFields must be nil",
    )
    forced = server.url + base + "/scaled/scale?fieldManager=m&force=true"
    applied = admin.patch(forced, config, headers=apply)
    assert (applied.status_code, applied.json()["spec"]) == (200, {"replicas": 1})
    scaled = admin.get(server.url + base + "/scaled").json()
    assert scaled["spec"]["replicas"] == 1
    owners = [e for e in scaled["metadata"]["managedFields"] if e.get("subresource") == "scale"]
    assert owners == [
        {
            "manager": "m",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}},
            "subresource": "scale",
        }
    ]
