"""A scheduler's writes, as kube-apiserver v1.36 answered the same requests (reference):
``pods/binding`` with the Binding's metadata, and ``pods/eviction`` in either version."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.answers import status as failure
from tests.e2e.conftest import Server, registry_prefix
from tests.e2e.test_list import make_namespace

MERGE = {"Content-Type": "application/merge-patch+json"}


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
    }


def _binding(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, **meta},
        "target": {"kind": "Node", "name": "n1"},
    }


def test_a_binding_places_the_pod_as_kube_does(server: Server, admin: requests.Session) -> None:
    ns = make_namespace(admin, server, "binding").split("/")[4]
    pods = f"{server.url}/api/v1/namespaces/{ns}/pods"
    for name in ("a", "b", "c"):
        assert admin.post(pods, json=_pod(name)).status_code == 201
    assert admin.post(pods, json=_pod("gated", schedulingGates=[{"name": "g"}])).status_code == 201
    # the scheduler's own notes on "b": a nomination and why it could not place it yet
    unschedulable = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/1 nodes are available",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    status = {"status": {"nominatedNodeName": "n9", "conditions": [unschedulable]}}
    assert admin.patch(f"{pods}/b/status", json=status, headers=MERGE).status_code == 200

    meta = {"annotations": {"scheduled-by": "mine"}, "labels": {"app": "b", "zone": "z"}}
    bound = admin.post(f"{pods}/a/binding", json=_binding("a", **meta))
    assert (bound.status_code, bound.json()["status"]) == (201, "Success")
    a = admin.get(f"{pods}/a").json()
    assert a["spec"]["nodeName"] == "n1"
    assert a["metadata"]["annotations"] == {"scheduled-by": "mine"}
    assert a["metadata"]["labels"] == {"app": "b", "zone": "z"}  # PodTopologyLabelsAdmission
    (scheduled,) = a["status"]["conditions"]
    assert list(scheduled) == ["type", "status", "lastProbeTime", "lastTransitionTime"]
    assert (scheduled["type"], scheduled["status"], scheduled["lastProbeTime"]) == (
        "PodScheduled",
        "True",
        None,
    )

    assert admin.post(f"{pods}/b/binding", json=_binding("b")).status_code == 201
    b = admin.get(f"{pods}/b").json()
    assert "nominatedNodeName" not in b["status"]  # ClearingNominatedNodeNameAfterBinding
    (scheduled,) = b["status"]["conditions"]  # replaced whole: no reason, a new transition
    assert scheduled["status"] == "True" and "reason" not in scheduled
    assert scheduled["lastTransitionTime"] != unschedulable["lastTransitionTime"]
    assert "annotations" not in b["metadata"]

    gated = admin.post(f"{pods}/gated/binding", json=_binding("gated"))
    assert gated.json() == failure(
        409,
        "Conflict",
        'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty '
        ".spec.schedulingGates",
        {"name": "gated", "kind": "pods/binding"},
    )


def test_a_binding_carries_preconditions(server: Server, admin: requests.Session) -> None:
    """A Binding's uid and resourceVersion are preconditions on the pod, checked before
    anything else, and refused in the words of kube's storage."""
    ns = make_namespace(admin, server, "binding-pre").split("/")[4]
    pods = f"{server.url}/api/v1/namespaces/{ns}/pods"
    created = admin.post(pods, json=_pod("p")).json()["metadata"]
    assert server.data_dir is not None
    key = f"{registry_prefix(server.data_dir)}/pods/{ns}/p"  # on etcd, its run's own
    for given, what, found in (
        ({"uid": "other"}, "UID in precondition: other", f"UID in object meta: {created['uid']}"),
        (
            {"resourceVersion": "1"},
            "ResourceVersion in precondition: 1",
            f"ResourceVersion in object meta: {created['resourceVersion']}",
        ),
    ):
        refused = admin.post(f"{pods}/p/binding", json=_binding("p", **given))
        assert refused.json() == failure(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on pods "p": StorageError: invalid object, '
            f"Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition "
            f"failed: {what}, {found}",
            {"name": "p", "kind": "pods"},
        )
    assert "nodeName" not in admin.get(f"{pods}/p").json()["spec"]
    matching = {"uid": created["uid"], "resourceVersion": created["resourceVersion"]}
    assert admin.post(f"{pods}/p/binding", json=_binding("p", **matching)).status_code == 201


def test_an_eviction_is_taken_in_either_version(server: Server, admin: requests.Session) -> None:
    ns = make_namespace(admin, server, "eviction-versions").split("/")[4]
    pods = f"{server.url}/api/v1/namespaces/{ns}/pods"
    assert admin.post(pods, json=_pod("p")).status_code == 201

    def evict(version: str, **extra: Any) -> requests.Response:
        body = {"apiVersion": version, "kind": "Eviction", "metadata": {"name": "p"}, **extra}
        return admin.post(f"{pods}/p/eviction", json=body)

    dry = {"deleteOptions": {"dryRun": ["All"]}}
    assert evict("policy/v1beta1", **dry).status_code == 201  # kube's AcceptsGroupVersion
    assert admin.get(f"{pods}/p").status_code == 200
    assert evict("policy/v2").json() == failure(
        400,
        "BadRequest",
        'Eviction in version "v2" cannot be handled as a Eviction: no kind "Eviction" is '
        'registered for version "policy/v2" in scheme "pkg/api/legacyscheme/scheme.go:30"',
    )
    # decoded, and refused, in the version it was sent in
    assert evict("policy/v1beta1", deleteOptions="x").json() == failure(
        400,
        "BadRequest",
        'Eviction in version "v1beta1" cannot be handled as a Eviction: json: cannot '
        "unmarshal string into Go struct field Eviction.deleteOptions of type v1.DeleteOptions",
    )
    other = {"apiVersion": "policy/v1beta1", "kind": "Binding", "metadata": {"name": "p"}}
    assert admin.post(f"{pods}/p/eviction", json=other).json() == failure(
        400,
        "BadRequest",
        'Binding in version "v1beta1" cannot be handled as a Eviction: no kind "Binding" is '
        'registered for version "policy/v1beta1" in scheme "pkg/api/legacyscheme/scheme.go:30"',
    )
    assert evict("policy/v1beta1").status_code == 201
    assert admin.get(f"{pods}/p").status_code == 404  # a pending pod goes at once
