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
    scaled = admin.get(server.url + base + "/scaled").json()
    assert scaled["spec"]["replicas"] == 0
    # Zero replicas are none on the Scale (Go's omitempty): the PUT took them from
    # kubectl and owns nothing; with no owner a write through the Scale records nobody.
    assert not [e for e in scaled["metadata"]["managedFields"] if e.get("subresource") == "scale"]
    r = admin.patch(
        server.url + base + "/scaled/scale",
        json={"spec": {"replicas": 3}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200
    # Server-side apply to the Scale: its owners are the object's owners of the replicas
    # (none: kube's before-first-apply takes what the Scale holds), and the apply's
    # entry lands on the object (kube's answers).
    config = b'{"apiVersion":"autoscaling/v1","kind":"Scale","spec":{"replicas":1}}'
    apply = {"Content-Type": "application/apply-patch+yaml"}
    refused = admin.patch(server.url + base + "/scaled/scale?fieldManager=m", config, headers=apply)
    assert (refused.status_code, refused.json()["message"]) == (
        409,
        'Apply failed with 1 conflict: conflict with "before-first-apply" with subresource '
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


def test_scale_patches_as_kube_reads_them(server: Server, admin: requests.Session) -> None:
    """A patch of a Scale sees the object's owners of its replicas (kube's ScaleHandler),
    which its refusals quote; a strategic patch's number fills the int32 as kube's
    converter does; a missing object is a 404 whatever the patch; and an applied null
    claims and clears a field (the reference's answers, each)."""
    base = server.url + "/apis/apps/v1/namespaces/default/deployments"
    body = deployment("owned")
    body["spec"]["replicas"] = 2
    assert admin.post(base + "?fieldManager=maker", json=body).status_code == 201
    merge = {"Content-Type": "application/merge-patch+json"}
    smp = {"Content-Type": "application/strategic-merge-patch+json"}
    apply = {"Content-Type": "application/apply-patch+yaml"}
    r = admin.patch(base + "/owned/scale?dryRun=All", data=b'{"spec":3}', headers=merge)
    assert (r.status_code, r.json()["reason"]) == (422, "Invalid")
    message = r.json()["message"]
    assert (
        '\\"creationTimestamp\\":\\"'
        in message.split('\\"managedFields\\":[{\\"manager\\":\\"maker\\",')[0]
    )
    assert (
        '\\"operation\\":\\"Update\\",\\"apiVersion\\":\\"autoscaling/v1\\",\\"time\\":' in message
    )
    assert message.endswith(
        '": json: cannot unmarshal number into Go struct field Scale.spec of type v1.ScaleSpec'
    )
    r = admin.patch(base + "/owned/scale", data=b'{"spec":{"replicas":2147483648}}', headers=smp)
    assert (r.status_code, r.json()["message"]) == (
        422,
        'Scale.autoscaling "owned" is invalid: spec.replicas: Invalid value: -2147483648: '
        "must be greater than or equal to 0",
    )
    r = admin.patch(base + "/owned/scale", data=b'{"spec":{"replicas":3e0}}', headers=smp)
    assert (r.status_code, r.json()["spec"]) == (200, {"replicas": 3})
    for data, headers in ((b"{bad", merge), (b"{bad", smp), (b"a: [", apply)):
        for sub in ("scale", "status"):
            r = admin.patch(f"{base}/missing/{sub}?fieldManager=m", data=data, headers=headers)
            assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
                404,
                "NotFound",
                'deployments.apps "missing" not found',
            )
    scale = b'{"apiVersion":"autoscaling/v1","kind":"Scale","spec":%s}'
    r = admin.patch(base + "/owned/scale?fieldManager=m", data=scale % b"null", headers=apply)
    assert (r.status_code, r.json()["spec"]) == (200, {"replicas": 3})  # null: no opinion
    r = admin.patch(
        base + "/owned/scale?fieldManager=m", data=scale % b'{"replicas":null}', headers=apply
    )
    assert (r.status_code, r.json()["message"]) == (
        409,
        'Apply failed with 1 conflict: conflict with "python-requests" with subresource '
        '"scale" using autoscaling/v1: .spec.replicas',
    )
    config = b'{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":null}}'
    r = admin.patch(base + "/owned?fieldManager=m&force=true", data=config, headers=apply)
    assert (r.status_code, r.json()["spec"]["replicas"]) == (200, 1)  # cleared, defaulted
    owned = [e["fieldsV1"] for e in r.json()["metadata"]["managedFields"] if e["manager"] == "m"]
    assert owned == [{"f:spec": {"f:replicas": {}}}]
