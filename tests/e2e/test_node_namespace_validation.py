"""A refused Node create, a refused Namespace status write and a refused IngressClass
update, end to end: the Status bodies kube-apiserver v1.36 answered (reference; names
branded), and nothing stored or changed."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually

NODES = "/api/v1/nodes"
NAMESPACES = "/api/v1/namespaces"
INGRESS_CLASSES = "/apis/networking.platform.io/v1/ingressclasses"
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
EFFECTS = 'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def _cause(reason: str, field: str, message: str) -> dict[str, str]:
    return {"reason": reason, "message": message, "field": field}


def _invalid(kind: str, name: str, causes: list[dict[str, str]], group: str = "") -> Any:
    texts = [f"{c['field']}: {c['message']}" for c in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details = {"name": name, **({"group": group} if group else {}), "kind": kind}
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified} "{name}" is invalid: {joined}',
        "reason": "Invalid",
        "details": {**details, "causes": causes},
        "code": 422,
    }


def test_a_node_with_bad_taints_cidrs_and_capacity_is_refused(
    server: Server, admin: requests.Session
) -> None:
    name = "e2e-invalid-node"
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "spec": {
            "taints": [{"key": "a", "effect": "Bad"}, {"key": "bad key!", "effect": "NoSchedule"}],
            "podCIDRs": ["nope"],
        },
        "status": {"capacity": {"cpu": "-1"}},
    }
    refused = admin.post(server.url + NODES, json=node)
    assert refused.status_code == 422
    negative = 'Invalid value: "-1": must be greater than or equal to 0'
    assert refused.json() == _invalid(
        "Node",
        name,
        [
            _cause(
                "FieldValueNotSupported",
                "metadata.taints[0].effect",
                f'Unsupported value: "Bad": {EFFECTS}',
            ),
            _cause(
                "FieldValueInvalid",
                "metadata.taints[1].key",
                f'Invalid value: "bad key!": {NAME_PART}',
            ),
            _cause("FieldValueInvalid", "status.capacity.cpu", negative),
            _cause("FieldValueInvalid", "status.allocatable.cpu", negative),
            _cause("FieldValueInvalid", "spec.podCIDRs[0]", f'Invalid value: "nope": {CIDR}'),
        ],
    )
    assert admin.get(f"{server.url}{NODES}/{name}").status_code == 404


def test_an_active_namespace_cannot_say_it_is_terminating(
    server: Server, admin: requests.Session
) -> None:
    name = "e2e-phase"
    created = admin.post(server.url + NAMESPACES, json={"metadata": {"name": name}})
    assert created.status_code == 201, created.text
    stored = created.json()
    write = {**stored, "status": {"phase": "Terminating"}}
    refused = admin.put(f"{server.url}{NAMESPACES}/{name}/status", json=write)
    assert refused.status_code == 422
    detail = "may only be 'Active' if `deletionTimestamp` is empty"
    assert refused.json() == _invalid(
        "Namespace",
        name,
        [_cause("FieldValueInvalid", "status.Phase", f'Invalid value: "Terminating": {detail}')],
    )
    after = admin.get(f"{server.url}{NAMESPACES}/{name}").json()
    assert after["status"] == {"phase": "Active"}
    assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]


def test_an_ingress_class_keeps_its_controller(server: Server, admin: requests.Session) -> None:
    name = "e2e-class"
    body = {"metadata": {"name": name}, "spec": {"controller": "acme.io/foo"}}
    created = admin.post(server.url + INGRESS_CLASSES, json=body)
    assert created.status_code == 201, created.text
    stored = created.json()
    write = {**stored, "spec": {"controller": "acme.io/bar"}}
    refused = admin.put(f"{server.url}{INGRESS_CLASSES}/{name}", json=write)
    assert refused.status_code == 422
    assert refused.json() == _invalid(
        "IngressClass",
        name,
        [
            _cause(
                "FieldValueInvalid",
                "spec.controller",
                'Invalid value: "acme.io/bar": field is immutable',
            )
        ],
        group="networking.platform.io",
    )
    after = admin.get(f"{server.url}{INGRESS_CLASSES}/{name}").json()
    assert after == stored


def test_a_namespace_waits_for_every_spec_finalizer(
    server: Server, admin: requests.Session
) -> None:
    """kube's ShouldDeleteNamespaceDuringUpdate: when the namespace controller has done
    its part ("kubernetes"), a namespace another component still finalizes stays
    Terminating until that one finalizes it too."""
    url = f"{server.url}{NAMESPACES}/two-finalizers"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "two-finalizers"}}
    body["spec"] = {"finalizers": ["kubernetes", "example.com/cleanup"]}
    assert admin.post(f"{server.url}{NAMESPACES}", json=body).status_code == 201
    assert admin.delete(url).status_code == 200

    def left() -> list[str] | None:
        found = admin.get(url).json()
        finalizers: list[str] = found.get("spec", {}).get("finalizers", [])
        return finalizers if finalizers == ["example.com/cleanup"] else None

    eventually(left)
    assert admin.get(url).json()["status"]["phase"] == "Terminating"
    namespace = admin.get(url).json()
    namespace["spec"]["finalizers"] = []
    assert admin.put(f"{url}/finalize", json=namespace).status_code == 200
    eventually(lambda: admin.get(url).status_code == 404)


def test_a_status_write_carries_no_warnings_of_the_main_resource(
    server: Server, admin: requests.Session
) -> None:
    """kube warns of a Node's deprecated externalID on writes of the Node, not of its
    status (answers recorded from kube-apiserver v1.36)."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "warn-n1"}}
    node["spec"] = {"externalID": "x"}
    warning = '299 - "spec.externalID: this field is deprecated, and is unused by Kubernetes"'
    merge = {"Content-Type": "application/merge-patch+json"}
    url = f"{server.url}{NODES}/warn-n1"
    try:
        created = admin.post(f"{server.url}{NODES}", json=node)
        assert (created.status_code, created.headers.get("Warning")) == (201, warning)
        status = admin.patch(
            f"{url}/status", json={"status": {"capacity": {"cpu": "2"}}}, headers=merge
        )
        assert (status.status_code, status.headers.get("Warning")) == (200, None)
        main = admin.patch(url, json={"metadata": {"labels": {"a": "b"}}}, headers=merge)
        assert (main.status_code, main.headers.get("Warning")) == (200, warning)
    finally:
        admin.delete(url)
