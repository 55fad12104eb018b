"""storage/v1's VolumeAttachments, VolumeAttributesClasses, CSIStorageCapacities and
StorageClasses, and core/v1's top-level bindings: the same requests kube-apiserver v1.36
answered (reference; tests/registry/fixtures/storage_kinds_kube.json), answered alike."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually

FIXTURE = Path(__file__).parents[1] / "registry" / "fixtures" / "storage_kinds_kube.json"
KUBE = json.loads(FIXTURE.read_text().replace("storage.k8s.io", "storage.platform.io"))
G = "storage.platform.io"
VA = f"/apis/{G}/v1/volumeattachments"
VAC = f"/apis/{G}/v1/volumeattributesclasses"
CAP = f"/apis/{G}/v1/namespaces/default/csistoragecapacities"
SC = f"/apis/{G}/v1/storageclasses"
PODS = "/api/v1/namespaces/default/pods"
BINDINGS = "/api/v1/namespaces/default/bindings"
Obj = dict[str, Any]
CSI = {"csi": {"driver": "d.example.com", "volumeHandle": "h1"}}
INLINE = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], **CSI}
PV1 = {"persistentVolumeName": "pv1"}


def va(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": f"{G}/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": spec,
    }


def attached(name: str, **rest: Any) -> Obj:
    return va(name, attacher="d.example.com", source=PV1, nodeName="n1", **rest)


def vac(name: str, **rest: Any) -> Obj:
    return {
        "apiVersion": f"{G}/v1",
        "kind": "VolumeAttributesClass",
        "metadata": {"name": name},
        **rest,
    }


def cap(name: str, **rest: Any) -> Obj:
    return {
        "apiVersion": f"{G}/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name},
        **rest,
    }


def sc(name: str, **rest: Any) -> Obj:
    return {"apiVersion": f"{G}/v1", "kind": "StorageClass", "metadata": {"name": name}, **rest}


CREATES: dict[str, tuple[str, Obj]] = {
    "va:min": (VA, attached("va1")),
    "va:status-dropped": (VA, {**attached("va2"), "status": {"attached": True}}),
    "va:empty": (VA, va("va3")),
    "va:no-spec": (
        VA,
        {"apiVersion": f"{G}/v1", "kind": "VolumeAttachment", "metadata": {"name": "va4"}},
    ),
    "va:both-sources": (
        VA,
        va(
            "va5",
            attacher="d.example.com",
            source={**PV1, "inlineVolumeSpec": INLINE},
            nodeName="n1",
        ),
    ),
    "va:bad-attacher": (VA, va("va6", attacher="Bad_Driver!", source=PV1, nodeName="n1")),
    "va:long-attacher": (VA, va("va7", attacher="a" * 64, source=PV1, nodeName="n1")),
    "va:bad-node": (VA, va("va8", attacher="d.example.com", source=PV1, nodeName="Bad_Node")),
    "va:bad-pv-name": (
        VA,
        va(
            "va9",
            attacher="d.example.com",
            source={"persistentVolumeName": "Bad/PV"},
            nodeName="n1",
        ),
    ),
    "va:inline": (
        VA,
        va("va10", attacher="d.example.com", source={"inlineVolumeSpec": INLINE}, nodeName="n1"),
    ),
    "va:inline-empty": (
        VA,
        va("va11", attacher="d.example.com", source={"inlineVolumeSpec": {}}, nodeName="n1"),
    ),
    "va:inline-ok": (
        VA,
        va(
            "va12",
            attacher="d.example.com",
            source={"inlineVolumeSpec": {"accessModes": ["ReadWriteOnce"], **CSI}},
            nodeName="n1",
        ),
    ),
    "va:inline-bad": (
        VA,
        va(
            "va13",
            attacher="d.example.com",
            source={
                "inlineVolumeSpec": {
                    "accessModes": ["ReadWriteOnce"],
                    "csi": {"driver": "", "volumeHandle": ""},
                    "hostPath": {"path": "/x"},
                }
            },
            nodeName="n1",
        ),
    ),
    "va:bad-name": (VA, va("Bad_Name", attacher="d.example.com", source=PV1, nodeName="n1")),
    "vac:min": (VAC, vac("gold", driverName="d.example.com", parameters={"iops": "100"})),
    "vac:no-driver": (VAC, vac("silver")),
    "vac:bad-driver": (VAC, vac("bronze", driverName="Bad_Driver!")),
    "vac:empty-param-key": (VAC, vac("tin", driverName="d.example.com", parameters={"": "x"})),
    "vac:many-params": (
        VAC,
        vac("lead", driverName="d.example.com", parameters={f"k{i}": "v" for i in range(513)}),
    ),
    "vac:bad-name": (VAC, vac("Bad_Name", driverName="d.example.com")),
    "vac:long-driver": (VAC, vac("zinc", driverName="d" * 254, parameters={"a": "b"})),
    "vac:big-params": (
        VAC,
        vac("iron", driverName="d.example.com", parameters={"a": "x" * 262144}),
    ),
    "cap:min": (CAP, cap("c1", storageClassName="standard")),
    "cap:full": (
        CAP,
        cap(
            "c2",
            storageClassName="standard",
            capacity="10Gi",
            maximumVolumeSize="1Gi",
            nodeTopology={"matchLabels": {"zone": "a"}},
        ),
    ),
    "cap:no-class": (CAP, cap("c3")),
    "cap:bad-class": (CAP, cap("c4", storageClassName="Bad_Class")),
    "cap:bad-topology-class-capacity": (  # the reference's order: topology first
        CAP,
        cap(
            "c8",
            storageClassName="Bad_SC",
            capacity="-1",
            nodeTopology={"matchLabels": {"Bad Key": "v"}},
        ),
    ),
    "cap:negative": (
        CAP,
        cap("c5", storageClassName="standard", capacity="-1", maximumVolumeSize="-2Gi"),
    ),
    "cap:negative-max": (CAP, cap("c7", storageClassName="standard", maximumVolumeSize="-2Gi")),
    "cap:bad-topology": (
        CAP,
        cap(
            "c6",
            storageClassName="standard",
            nodeTopology={
                "matchLabels": {"bad key!": "a"},
                "matchExpressions": [{"key": "zone", "operator": "In"}],
            },
        ),
    ),
    "cap:bad-name": (CAP, cap("Bad_Name", storageClassName="standard")),
    "sc:min": (SC, sc("s1", provisioner="d.example.com")),
    "sc:full": (
        SC,
        sc(
            "s2",
            provisioner="d.example.com",
            parameters={"a": "b"},
            reclaimPolicy="Retain",
            volumeBindingMode="WaitForFirstConsumer",
            allowVolumeExpansion=True,
            mountOptions=["ro"],
            allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}],
        ),
    ),
    "sc:no-provisioner": (SC, sc("s3")),
    "sc:bad-provisioner": (SC, sc("s4", provisioner="Bad_Prov!")),
    "sc:bad-policy": (
        SC,
        sc("s5", provisioner="d.example.com", reclaimPolicy="Recycle", volumeBindingMode="Later"),
    ),
    "sc:empty-param-key": (SC, sc("s6", provisioner="d.example.com", parameters={"": "x"})),
    "sc:many-params": (
        SC,
        sc("s7", provisioner="d.example.com", parameters={f"k{i}": "v" for i in range(513)}),
    ),
    "sc:bad-topology": (
        SC,
        sc(
            "s8",
            provisioner="d.example.com",
            allowedTopologies=[
                {"matchLabelExpressions": [{"key": "", "values": []}]},
                {"matchLabelExpressions": []},
            ],
        ),
    ),
    "sc:topology-immediate": (
        SC,
        sc(
            "s9",
            provisioner="d.example.com",
            volumeBindingMode="Immediate",
            allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}]}],
        ),
    ),
    "sc:long-provisioner": (SC, sc("s10", provisioner="p" * 64)),
}
EXPECTED = {**KUBE["storage"], **KUBE["storageclasses"]}


def shown(obj: Obj) -> Obj:
    """What the recording kept of a stored object."""
    meta = obj["metadata"]
    rest = {
        k: v
        for k, v in obj.items()
        if k not in ("apiVersion", "kind", "metadata", "spec", "status")
    }
    return {
        "spec": obj.get("spec"),
        "status": obj.get("status"),
        "generation": meta.get("generation"),
        "rest": rest,
    }


def sc_shown(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k != "metadata"}


def answer(got: requests.Response, show: Callable[[Obj], Obj] = shown) -> list[Any]:
    return [
        got.status_code,
        got.json().get("message") if got.status_code >= 300 else show(got.json()),
    ]


@pytest.mark.parametrize("name", list(CREATES))
def test_creates_are_answered_as_kube_answered_them(
    server: Server, admin: requests.Session, name: str
) -> None:
    path, body = CREATES[name]
    got = admin.post(server.url + path + "?dryRun=All", json=body)
    assert answer(got, sc_shown if name.startswith("sc:") else shown) == EXPECTED[name]


def _updates(
    admin: requests.Session,
    url: str,
    body: Obj,
    changes: dict[str, Callable[[Obj], None]],
    label: str,
    show: Callable[[Obj], Obj] = shown,
) -> None:
    assert admin.post(url, json=body).status_code == 201
    name = body["metadata"]["name"]
    try:
        for change, apply in changes.items():
            current = admin.get(f"{url}/{name}").json()
            apply(current)
            assert (
                answer(admin.put(f"{url}/{name}", json=current), show)
                == EXPECTED[f"{label}:{change}"]
            ), change
    finally:
        admin.delete(f"{url}/{name}")


def setting(*keys: str, value: Any) -> Callable[[Obj], None]:
    def apply(obj: Obj) -> None:
        for key in keys[:-1]:
            obj = obj.setdefault(key, {})
        obj[keys[-1]] = value

    return apply


UPDATES: list[tuple[str, Obj, dict[str, Callable[[Obj], None]], str]] = [
    (
        VA,
        attached("vu"),
        {
            "attacher": setting("spec", "attacher", value="e.example.com"),
            "node": setting("spec", "nodeName", value="n2"),
            "status-via-main": setting("status", value={"attached": True}),
            "label": setting("metadata", "labels", value={"a": "b"}),
        },
        "va-update",
    ),
    (
        VAC,
        vac("vu", driverName="d.example.com", parameters={"a": "1"}),
        {
            "driver": setting("driverName", value="e.example.com"),
            "params": setting("parameters", value={"a": "2"}),
            "label": setting("metadata", "labels", value={"a": "b"}),
        },
        "vac-update",
    ),
    (
        CAP,
        cap("cu", storageClassName="standard", capacity="1Gi"),
        {
            "class": setting("storageClassName", value="other"),
            "capacity": setting("capacity", value="2Gi"),
            "topology": setting("nodeTopology", value={"matchLabels": {"z": "b"}}),
        },
        "cap-update",
    ),
    (
        SC,
        sc("su", provisioner="d.example.com", parameters={"a": "1"}),
        {
            "provisioner": setting("provisioner", value="e.example.com"),
            "params": setting("parameters", value={"a": "2"}),
            "policy": setting("reclaimPolicy", value="Retain"),
            "mode": setting("volumeBindingMode", value="WaitForFirstConsumer"),
            "expansion": setting("allowVolumeExpansion", value=True),
            "mount": setting("mountOptions", value=["rw"]),
        },
        "sc:update",
    ),
]


@pytest.mark.parametrize("update", UPDATES, ids=[u[3] for u in UPDATES])
def test_updates_keep_what_kube_keeps(
    server: Server, admin: requests.Session, update: tuple[str, Obj, Any, str]
) -> None:
    path, body, changes, label = update
    _updates(admin, server.url + path, body, changes, label, sc_shown if path == SC else shown)


def test_an_attacher_reports_through_status(server: Server, admin: requests.Session) -> None:
    url = server.url + VA
    made = admin.post(url, json=attached("vs")).json()
    try:
        made["status"] = {
            "attached": True,
            "attachmentMetadata": {"k": "v"},
            "attachError": {"message": "m", "time": "2026-01-01T00:00:00Z"},
        }
        made["spec"]["nodeName"] = "other"  # ignored: status writes change status only
        got = admin.put(url + "/vs/status", json=made)
        assert answer(got) == EXPECTED["va-status"]
        odd = copy.deepcopy(got.json())
        odd["status"]["attachmentMetadata"] = {"": "v"}
        assert answer(admin.put(url + "/vs/status", json=odd)) == EXPECTED["va-status-bad"]
    finally:
        admin.delete(url + "/vs")
    big = admin.post(url, json=attached("vs2")).json()
    try:
        big["status"] = {
            "attached": True,
            "attachmentMetadata": {"k": "v" * 300000},
            "attachError": {"message": "m" * 2000},
            "detachError": {"message": "d" * 1025},
        }
        assert answer(admin.put(url + "/vs2/status", json=big)) == EXPECTED["va-status-big"]
    finally:
        admin.delete(url + "/vs2")


def test_the_top_level_bindings_resource(server: Server, admin: requests.Session) -> None:
    u = server.url
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bp"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    assert admin.post(u + PODS, json=pod).status_code == 201
    try:

        def bind(name: str | None, node: str) -> requests.Response:
            meta = {"name": name} if name else {}
            body = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": meta,
                "target": {"kind": "Node", "name": node},
            }
            return admin.post(u + BINDINGS, json=body)

        first = bind("bp", "n1")
        assert [first.status_code, first.json()] == EXPECTED["binding"]
        assert admin.get(u + PODS + "/bp").json()["spec"]["nodeName"] == EXPECTED["binding-pod"]
        for key, name in (
            ("binding-again", "bp"),
            ("binding-missing", "nope"),
            ("binding-noname", None),
        ):
            got = bind(name, "n2")
            assert [got.status_code, got.json()["message"]] == EXPECTED[key], key
        listed = admin.get(u + BINDINGS)
        assert [listed.status_code, listed.json()["message"]] == EXPECTED["binding-list"]
        # No target: kube's storage fails with a plain error, a 500 without a reason.
        empty = admin.post(u + BINDINGS, json={})
        assert [empty.status_code, empty.json()] == [
            500,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "target.name: Required value",
                "code": 500,
            },
        ]
    finally:
        admin.delete(u + PODS + "/bp?gracePeriodSeconds=0")


def test_a_deleted_claim_waits_for_its_pod_then_goes(
    server: Server, admin: requests.Session
) -> None:
    """The protection controllers run here (kube-controller-manager's, which a bare
    kube-apiserver lacks): the claim's finalizer comes off once no scheduled pod uses it."""
    u = server.url
    claims = "/api/v1/namespaces/default/persistentvolumeclaims"
    body = {
        "metadata": {"name": "guarded"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    assert admin.post(u + claims, json=body).json()["metadata"]["finalizers"] == [
        "platform.io/pvc-protection"
    ]
    volume = {"name": "data", "persistentVolumeClaim": {"claimName": "guarded"}}
    pod = {
        "metadata": {"name": "user"},
        "spec": {
            "nodeName": "n1",
            "containers": [{"name": "c", "image": "i"}],
            "volumes": [volume],
        },
    }
    assert admin.post(u + PODS, json=pod).status_code == 201
    deleting = admin.delete(u + claims + "/guarded")
    assert deleting.status_code == 200 and deleting.json()["metadata"]["deletionTimestamp"]
    time.sleep(0.3)
    assert admin.get(u + claims + "/guarded").status_code == 200  # still in use
    assert admin.delete(u + PODS + "/user?gracePeriodSeconds=0").status_code == 200
    eventually(lambda: admin.get(u + claims + "/guarded").status_code == 404)
