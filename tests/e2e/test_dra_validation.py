"""resource.platform.io/v1 writes through the real server, answered as kube-apiserver
v1.36 answered the same requests (reference; a few of the cases recorded in
tests/registry/fixtures/dra_validation_kube.json, which the registry tests replay in
full): the status code, reason, and exact message or stored object."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server

FIXTURE = Path(__file__).parents[1] / "registry" / "fixtures" / "dra_validation_kube.json"
KUBE = json.loads(
    FIXTURE.read_text()
    .replace("resource.k8s.io", "resource.platform.io")
    .replace("kubernetes.io", "platform.io")
)
CASES = {c["name"]: c for c in KUBE["cases"]}
PLURALS = {
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "ResourceSlice": "resourceslices",
}
ADMIN_NAMESPACE = "dra-admin"
Obj = dict[str, Any]
PICKED = [
    "dc-full",
    "dc-multi",
    "rc-full",
    "rc-multi",
    "rc-constraints",
    "rc-admin-default-ns",
    "rc-admin-labeled-ns",
    "rc-count-string",
    "rct-meta-forbidden",
    "rs-full",
    "rs-attr-union-two",
    "rs-selector-two",
    "rs-capacity-policy-bad1",
    "rs-per-device-bad",
    "dc-upd-selectors",
    "rc-upd-spec",
    "rc-st-allocate",
    "rc-st-alloc-change",
    "rc-st-dealloc-drops-devices",
    "rc-st-devices-bad",
    "rc-st-deleted-new-reservation",
    "rct-upd-spec-invalid",
    "rs-upd-immutable",
]


def _url(server: Server, case: Obj, name: str = "", sub: str = "") -> str:
    url = server.url + "/apis/resource.platform.io/v1"
    if case["kind"] in ("ResourceClaim", "ResourceClaimTemplate"):
        url += f"/namespaces/{case.get('namespace', 'default')}"
    url += "/" + PLURALS[case["kind"]]
    return url + "".join(f"/{part}" for part in (name, sub) if part)


def _named(body: Obj, name: str) -> Obj:
    body = copy.deepcopy(body)
    body["metadata"]["name"] = name
    return body


def _shown(obj: Obj) -> Obj:
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        meta.pop(key, None)
    if "deletionTimestamp" in meta:
        meta["deletionTimestamp"] = "<t>"
    return obj


@pytest.fixture
def admin_namespace(server: Server, admin: requests.Session) -> None:
    labels = {"resource.platform.io/admin-access": "true"}
    body = {"metadata": {"name": ADMIN_NAMESPACE, "labels": labels}}
    made = admin.post(server.url + "/api/v1/namespaces", json=body)
    assert made.status_code in (201, 409), made.text


def _replay(server: Server, admin: requests.Session, case: Obj) -> requests.Response:
    if case["op"] == "create":
        return admin.post(_url(server, case) + "?dryRun=All", json=case["body"])
    name = case["objectName"]
    made = admin.post(_url(server, case), json=_named(case["old"], name))
    assert made.status_code == 201, made.text
    for step, body in case["steps"]:
        if step == "delete":
            done = admin.delete(_url(server, case, name))
        else:
            done = admin.put(_url(server, case, name, step), json=_named(body, name))
        assert done.status_code < 300, done.text
    url = _url(server, case, name, case.get("subresource", ""))
    return admin.put(url + "?dryRun=All", json=_named(case["body"], name))


def _cleanup(server: Server, admin: requests.Session, case: Obj) -> None:
    if case["op"] != "update":
        return
    url = _url(server, case, case["objectName"])
    admin.patch(
        url,
        data=json.dumps({"metadata": {"finalizers": None}}),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    admin.delete(url)


@pytest.mark.parametrize("name", PICKED)
def test_dra_writes_are_answered_as_kube_answered_them(
    server: Server, admin: requests.Session, admin_namespace: None, name: str
) -> None:
    case = CASES[name]
    try:
        got = _replay(server, admin, case)
    finally:
        _cleanup(server, admin, case)
    assert got.status_code == case["status"], got.text
    body = got.json()
    if case["status"] >= 300:
        reason = "Invalid" if case["status"] == 422 else "BadRequest"
        assert (body["reason"], body["message"]) == (reason, case["message"])
    else:
        assert _shown(body) == case["object"]
