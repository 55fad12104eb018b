"""ValidatingAdmissionPolicies deciding writes: denials, reasons, messages, parameters,
warnings; each body as a v1.36 kube-apiserver answered the same requests."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.test_list import make_namespace

API = "/apis/admissionregistration.platform.io/v1"


def create(admin: requests.Session, server: Server, plural: str, body: dict[str, Any]) -> str:
    body = {"apiVersion": API[6:], **body}
    r = admin.post(f"{server.url}{API}/{plural}", json=body)
    assert r.status_code == 201, r.text
    return f"{server.url}{API}/{plural}/{body['metadata']['name']}"


def configmap(name: str, label: str, data: dict[str, str]) -> dict[str, Any]:
    meta = {"name": name, "labels": {"probe": label}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def rules(operations: list[str], resources: tuple[str, ...] = ("configmaps",)) -> list[dict]:
    return [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": operations,
            "resources": list(resources),
        }
    ]


def install(admin: requests.Session, server: Server, policy: dict, binding: str) -> list[str]:
    """The policy and a binding that denies with it; their URLs, to delete in order."""
    name = policy["metadata"]["name"]
    body = {
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": binding},
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    return [
        create(admin, server, "validatingadmissionpolicies", policy),
        create(admin, server, "validatingadmissionpolicybindings", body),
    ]


def denial(name: str, policy: str, binding: str, why: str, reason: str, code: int) -> dict:
    cause = f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {why}"
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'configmaps "{name}" is forbidden: {cause}',
        "reason": reason,
        "details": {"name": name, "kind": "configmaps", "causes": [{"message": cause}]},
        "code": code,
    }


def test_validations_deny_with_their_reason_and_message(
    server: Server, admin: requests.Session
) -> None:
    policy = {
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "vap-keys"},
        "spec": {
            "matchConstraints": {
                "resourceRules": rules(["CREATE", "UPDATE"]),
                "objectSelector": {"matchLabels": {"probe": "vap"}},
            },
            "variables": [{"name": "size", "expression": "size(object.data)"}],
            "validations": [
                {
                    "expression": "variables.size <= 1",
                    "message": "too many keys",
                    "reason": "Forbidden",
                },
                {
                    "expression": "!has(object.data.bad)",
                    "messageExpression": "'key bad is not allowed in ' + object.metadata.name",
                },
                {"expression": "object.data.all(k, k.size() < 10)"},
            ],
        },
    }
    urls = install(admin, server, policy, "vap-keys-binding")
    cms = f"{server.url}/api/v1/namespaces/default/configmaps?dryRun=All"
    two = configmap("a", "vap", {"x": "1", "y": "2"})
    eventually(lambda: admin.post(cms, json=two).status_code == 403)
    r = admin.post(cms, json=two)
    assert r.json() == denial(
        "a", "vap-keys", "vap-keys-binding", "too many keys", "Forbidden", 403
    )
    r = admin.post(cms, json=configmap("b", "vap", {"bad": "1"}))
    why = "key bad is not allowed in b"
    assert r.json() == denial("b", "vap-keys", "vap-keys-binding", why, "Invalid", 422)
    r = admin.post(cms, json=configmap("c", "vap", {"verylongkeyname": "1"}))
    why = "failed expression: object.data.all(k, k.size() < 10)"
    assert r.json() == denial("c", "vap-keys", "vap-keys-binding", why, "Invalid", 422)
    assert admin.post(cms, json=configmap("d", "vap", {"ok": "1"})).status_code == 201
    assert admin.post(cms, json=configmap("e", "other", {"x": "1", "y": "2"})).status_code == 201
    for url in reversed(urls):
        assert admin.delete(url).status_code == 200


def test_parameters_and_warnings(server: Server, admin: requests.Session) -> None:
    policy = {
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "vap-params"},
        "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "resourceRules": rules(["CREATE"]),
                "objectSelector": {"matchLabels": {"probe": "vap2"}},
            },
            "validations": [{"expression": "object.data.missing == params.data.want"}],
        },
    }
    binding = {
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "vap-params-warn"},
        "spec": {
            "policyName": "vap-params",
            "validationActions": ["Warn"],
            "paramRef": {"name": "vap-params", "parameterNotFoundAction": "Deny"},
        },
    }
    urls = [
        create(admin, server, "validatingadmissionpolicies", policy),
        create(admin, server, "validatingadmissionpolicybindings", binding),
    ]
    cms = f"{server.url}/api/v1/namespaces/default/configmaps"
    probe = configmap("p1", "vap2", {"x": "1"})
    eventually(lambda: admin.post(cms + "?dryRun=All", json=probe).status_code == 422)
    r = admin.post(cms + "?dryRun=All", json=probe)
    why = (
        "failed to configure binding: no params found for policy binding with `Deny` "
        "parameterNotFoundAction"
    )
    assert r.json() == denial("p1", "vap-params", "vap-params-warn", why, "Invalid", 422)
    params = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "vap-params"}}
    assert admin.post(cms, json={**params, "data": {"want": "1"}}).status_code == 201
    # An evaluation error (failurePolicy Fail) and a false validation both act as denials,
    # which this binding turns into warnings.
    eventually(lambda: admin.post(cms + "?dryRun=All", json=probe).status_code == 201)
    r = admin.post(cms + "?dryRun=All", json=probe)
    prefix = (
        "Validation failed for ValidatingAdmissionPolicy 'vap-params' with binding "
        "'vap-params-warn': "
    )
    assert r.headers["Warning"] == (
        f"299 - \"{prefix}expression 'object.data.missing == params.data.want' resulted in "
        'error: no such key: missing"'
    )
    r = admin.post(cms + "?dryRun=All", json=configmap("p2", "vap2", {"missing": "2"}))
    assert r.status_code == 201
    assert r.headers["Warning"] == (
        f'299 - "{prefix}failed expression: object.data.missing == params.data.want"'
    )
    for url in reversed(urls):
        assert admin.delete(url).status_code == 200
    assert admin.delete(cms + "/vap-params").status_code == 200


def test_create_subresources_pass_validating_admission(
    server: Server, admin: requests.Session
) -> None:
    """Evictions, bindings and token requests are creates of their own kinds: a policy on
    ``pods/eviction``, ``pods/binding`` or ``serviceaccounts/token`` judges them."""
    make_namespace(admin, server, "vap-subresources")
    base = f"{server.url}/api/v1/namespaces/vap-subresources"
    admin.post(base + "/serviceaccounts", json={"metadata": {"name": "robot"}})
    for name in ("p", "q"):
        pod = {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
        assert admin.post(base + "/pods", json=pod).status_code == 201
    why = "'no ' + request.subResource + ' of ' + request.name + ' (' + object.kind + ')'"
    resources = ("pods/eviction", "pods/binding", "serviceaccounts/token")
    policy = {
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "vap-subresources"},
        "spec": {
            "matchConstraints": {
                "resourceRules": rules(["CREATE"], resources),
                "namespaceSelector": {
                    "matchLabels": {"platform.io/metadata.name": "vap-subresources"}
                },
            },
            "validations": [{"expression": "false", "messageExpression": why}],
        },
    }
    urls = install(admin, server, policy, "vap-subresources")
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}
    bind = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "q"},
        "target": {"kind": "Node", "name": "n1"},
    }
    token = {"apiVersion": "authentication.platform.io/v1", "kind": "TokenRequest", "spec": {}}
    writes = [
        ("pods/p/eviction", eviction, "pods", "p", "no eviction of p (Eviction)"),
        ("pods/q/binding", bind, "pods", "q", "no binding of q (Binding)"),
        (
            "serviceaccounts/robot/token",
            token,
            "serviceaccounts",
            "robot",
            "no token of robot (TokenRequest)",
        ),
    ]
    eventually(lambda: admin.post(f"{base}/pods/p/eviction", json=eviction).status_code == 422)
    for path, body, plural, name, message in writes:
        r = admin.post(f"{base}/{path}", json=body)
        cause = (
            "ValidatingAdmissionPolicy 'vap-subresources' with binding 'vap-subresources' "
            f"denied request: {message}"
        )
        assert r.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f'{plural} "{name}" is forbidden: {cause}',
            "reason": "Invalid",
            "details": {"name": name, "kind": plural, "causes": [{"message": cause}]},
            "code": 422,
        }, path
    pods = admin.get(base + "/pods").json()["items"]  # nothing evicted, nothing bound
    assert sorted((p["metadata"]["name"], p["spec"].get("nodeName")) for p in pods) == [
        ("p", None),
        ("q", None),
    ]
    for url in reversed(urls):
        assert admin.delete(url).status_code == 200


def test_a_delete_has_no_object_and_its_fields_are_missing_keys(
    server: Server, admin: requests.Session
) -> None:
    """On DELETE ``object`` is null: ``has(object.data)`` is false, ``object.data`` is
    cel-go's ``no such key: data`` (the reference's answer, word for word)."""
    policy = {
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "vap-delete"},
        "spec": {
            "matchConstraints": {
                "resourceRules": rules(["DELETE"]),
                "objectSelector": {"matchLabels": {"probe": "vap-delete"}},
            },
            "validations": [
                {"expression": "!has(object.data) || object.data.size() > 100"},
                {"expression": "oldObject.data.size() == 0 || object.data.size() == 0"},
            ],
        },
    }
    urls = install(admin, server, policy, "vap-delete-binding")
    cms = f"{server.url}/api/v1/namespaces/default/configmaps"
    made = admin.post(cms, json=configmap("vd", "vap-delete", {"a": "1"}))
    assert made.status_code == 201, made.text
    eventually(lambda: admin.delete(f"{cms}/vd?dryRun=All").status_code == 422)
    r = admin.delete(f"{cms}/vd")
    why = (
        "expression 'oldObject.data.size() == 0 || object.data.size() == 0' resulted in "
        "error: no such key: data"
    )
    assert r.json() == denial("vd", "vap-delete", "vap-delete-binding", why, "Invalid", 422)
    for url in reversed(urls):
        assert admin.delete(url).status_code == 200
    eventually(lambda: admin.delete(f"{cms}/vd").status_code == 200)
