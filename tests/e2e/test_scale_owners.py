"""Who owns what after writes through a Scale and applies to a defaulting CRD, as
kube-apiserver v1.36 answered the same sequences (reference, 2026-12-07): the Scale's
owners are the object's owners of its replicas (kube's ScaleHandler), nothing is
recorded when nobody owned them, an Update owner that keeps them comes back as an entry
of its own, and what a CRD's schema defaults belongs to no applier."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import MERGE, crd_manifest, create_crd, version
from tests.e2e.test_list import make_namespace
from tests.e2e.test_workloads import deployment

APPLY = {"Content-Type": "application/apply-patch+yaml"}
GROUP = "owners.example.com"
SCALE = {
    "specReplicasPath": ".spec.replicas",
    "statusReplicasPath": ".status.replicas",
    "labelSelectorPath": ".status.selector",
}
SPEC = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer"},
        "image": {"type": "string"},
        "mode": {"type": "string", "default": "auto"},
    },
}
STATUS = {"type": "object", "properties": {"replicas": {"type": "integer"}}}
SCHEMA = {"type": "object", "properties": {"spec": SPEC, "status": STATUS}}


def _owners(obj: dict[str, Any]) -> list[tuple[str, str, str, bool, dict]]:
    """(manager, operation, apiVersion, has a time, fields) per entry, in order; what a
    controller writes to the status is left out."""
    return [
        (e["manager"], e["operation"], e["apiVersion"], "time" in e, e["fieldsV1"])
        for e in obj["metadata"]["managedFields"]
        if e.get("subresource") != "status"
    ]


def _crd(server: Server, admin: requests.Session) -> str:
    subresources = {"status": {}, "scale": SCALE}
    versions = [
        version(v, storage=v == "v1", schema=SCHEMA, subresources=subresources)
        for v in ("v1", "v2")
    ]
    create_crd(admin, server, crd_manifest(GROUP, versions=versions))
    ns = make_namespace(admin, server, "scale-owners").split("/")[4]
    return f"{server.url}/apis/{GROUP}/{{}}/namespaces/{ns}/crontabs"


def _cron(v: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {"apiVersion": f"{GROUP}/{v}", "kind": "CronTab", "metadata": {"name": name}}
    return {**body, "spec": spec}


def test_custom_resource_owners(server: Server, admin: requests.Session) -> None:
    base = _crd(server, admin)
    v1, v2 = base.format("v1"), base.format("v2")

    # The schema's default is set, and owned by no applier (create and update alike).
    r = admin.patch(f"{v1}/a?fieldManager=m", json=_cron("v1", "a", image="x"), headers=APPLY)
    assert r.status_code == 201
    assert r.json()["spec"] == {"image": "x", "mode": "auto"}
    assert _owners(r.json()) == [("m", "Apply", f"{GROUP}/v1", True, {"f:spec": {"f:image": {}}})]
    r = admin.patch(f"{v1}/a?fieldManager=m", json=_cron("v1", "a", replicas=2), headers=APPLY)
    assert r.json()["spec"] == {"mode": "auto", "replicas": 2}
    assert _owners(r.json()) == [
        ("m", "Apply", f"{GROUP}/v1", True, {"f:spec": {"f:replicas": {}}})
    ]

    # An apply that releases everything takes the spec away, defaults and all; the
    # replicas a Scale writes bring it back, defaulted as kube reads it.
    bare = _cron("v1", "a")
    del bare["spec"]
    r = admin.patch(f"{v1}/a?fieldManager=m", json=bare, headers=APPLY)
    assert (r.status_code, "spec" in r.json()) == (200, False)
    body = {"spec": {"replicas": 2}}
    assert admin.patch(f"{v1}/a/scale?fieldManager=sc", json=body, headers=MERGE).ok
    assert admin.get(f"{v1}/a").json()["spec"] == {"mode": "auto", "replicas": 2}

    # Nobody owns b's replicas (it has none): a write through its Scale records nobody.
    admin.patch(f"{v1}/b?fieldManager=m", json=_cron("v1", "b", image="x"), headers=APPLY)
    body = {"spec": {"replicas": 4}}
    r = admin.patch(f"{v2}/b/scale?fieldManager=sc", json=body, headers=MERGE)
    assert (r.status_code, r.json()["spec"]) == (200, {"replicas": 4})
    b = admin.get(f"{v1}/b").json()
    assert b["spec"]["replicas"] == 4
    assert _owners(b) == [("m", "Apply", f"{GROUP}/v1", True, {"f:spec": {"f:image": {}}})]

    # An Update owner the Scale leaves owning them: its replicas come back on their own,
    # in the request's version and without a time, beside the rest of its entry.
    admin.post(v1 + "?fieldManager=cr", json=_cron("v1", "c", image="b"))
    spec = {"spec": {"replicas": 2, "image": "a"}}
    admin.patch(f"{v1}/c?fieldManager=mp", json=spec, headers=MERGE)
    body = {"spec": {"replicas": 2}}
    assert admin.patch(f"{v2}/c/scale?fieldManager=sc", json=body, headers=MERGE).ok
    assert _owners(admin.get(f"{v1}/c").json()) == [
        ("mp", "Update", f"{GROUP}/v2", False, {"f:spec": {"f:replicas": {}}}),
        ("cr", "Update", f"{GROUP}/v1", True, {"f:spec": {".": {}, "f:mode": {}}}),
        ("mp", "Update", f"{GROUP}/v1", True, {"f:spec": {"f:image": {}}}),
    ]
    # ... and a change takes them, for the Scale's writer in the request's version
    body = {"spec": {"replicas": 3}}
    assert admin.patch(f"{v2}/c/scale?fieldManager=sc", json=body, headers=MERGE).ok
    assert _owners(admin.get(f"{v1}/c").json()) == [
        ("sc", "Update", f"{GROUP}/v2", False, {"f:spec": {"f:replicas": {}}}),
        ("cr", "Update", f"{GROUP}/v1", True, {"f:spec": {".": {}, "f:mode": {}}}),
        ("mp", "Update", f"{GROUP}/v1", True, {"f:spec": {"f:image": {}}}),
    ]
    # A Scale write that changes nothing but an entry's time keeps the old time and
    # writes nothing (kube's IgnoreManagedFieldsTimestampsTransformer; had the entry moved
    # in the list, an Update before it, the write would have been made, as in kube).
    admin.patch(f"{v1}/d?fieldManager=m", json=_cron("v1", "d", image="b"), headers=APPLY)
    body = {"spec": {"replicas": 3}}
    assert admin.patch(f"{v1}/d?fieldManager=mp", json=body, headers=MERGE).ok
    before = admin.get(f"{v1}/d").json()["metadata"]
    r = admin.patch(f"{v1}/d/scale?fieldManager=sc", json=body, headers=MERGE)
    assert (r.status_code, r.json()["metadata"]["resourceVersion"]) == (
        200,
        before["resourceVersion"],
    )
    assert admin.get(f"{v1}/d").json()["metadata"] == before
    # Zero replicas are no replicas on a Scale (Go's omitempty): nobody owns them then.
    body = {"spec": {"replicas": 0}}
    assert admin.patch(f"{v1}/c/scale?fieldManager=zero", json=body, headers=MERGE).ok
    managers = {o[0] for o in _owners(admin.get(f"{v1}/c").json())}
    assert managers == {"cr", "mp"}


def test_a_deployments_creator_keeps_its_replicas_apart(
    server: Server, admin: requests.Session
) -> None:
    ns = make_namespace(admin, server, "scale-split").split("/")[4]
    base = f"{server.url}/apis/apps/v1/namespaces/{ns}/deployments"
    dep = deployment("d")
    dep["spec"]["replicas"] = 2
    assert admin.post(base + "?fieldManager=cr", json=dep).status_code == 201
    body = {"spec": {"replicas": 2}}
    r = admin.patch(f"{base}/d/scale?fieldManager=m", json=body, headers=MERGE)
    assert r.status_code == 200
    # read as the Scale write left it: the deployment controller may write its status
    # at any moment after, and that write folds the entries together again (below)
    revision = r.json()["metadata"]["resourceVersion"]
    exact = f"{base}?resourceVersion={revision}&resourceVersionMatch=Exact"
    [scaled] = admin.get(exact + "&fieldSelector=metadata.name%3Dd").json()["items"]
    owners = _owners(scaled)
    assert owners[0] == ("cr", "Update", "apps/v1", False, {"f:spec": {"f:replicas": {}}})
    assert [o[:4] for o in owners[1:]] == [("cr", "Update", "apps/v1", True)]
    assert "f:replicas" not in owners[1][4]["f:spec"]
    # Any later write decodes the entries by manager, and the later one wins (kube's
    # DecodeManagedFields): the creator's entry keeps its time and loses the replicas.
    status = {"status": {"observedGeneration": 1}}
    assert admin.patch(f"{base}/d/status?fieldManager=st", json=status, headers=MERGE).ok
    owners = _owners(admin.get(f"{base}/d").json())
    assert [o[:4] for o in owners] == [("cr", "Update", "apps/v1", True)]
    assert "f:replicas" not in owners[0][4]["f:spec"]
