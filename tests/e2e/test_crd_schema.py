"""Custom resources through their schema, with kube v1.36's answers to the same requests."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import (
    CRDS,
    MERGE,
    crd_manifest,
    create_crd,
    delete_crd,
    eventually,
    namespace,
    version,
)

GROUP = "schema.example.com"
GIZMO_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {
                    "rule": "self.minReplicas <= self.replicas",
                    "message": "replicas must be at least minReplicas",
                    "fieldPath": ".replicas",
                    "reason": "FieldValueForbidden",
                },
                {
                    "rule": "self.replicas <= 100",
                    "messageExpression": "self.replicas > 1000 ? 'far too many' : 'too many'",
                },
            ],
            "properties": {
                "replicas": {"type": "integer", "minimum": 0},
                "minReplicas": {"type": "integer", "default": 1},
                "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
                "name": {
                    "type": "string",
                    "maxLength": 5,
                    "pattern": "^[a-z]+$",
                    "x-kubernetes-validations": [{"rule": "self != 'nope'"}],
                },
                "immutable": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {"rule": "self == oldSelf", "message": "is immutable"}
                    ],
                },
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "ports": {
                    "type": "array",
                    "maxItems": 10,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string", "maxLength": 10},
                            "port": {"type": "integer"},
                        },
                    },
                    "x-kubernetes-validations": [
                        {"rule": "self == oldSelf", "message": "ports are immutable"}
                    ],
                },
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}
NOT_CHECKED = (
    "<nil>: Invalid value: null: some validation rules were not checked because the object "
    "was invalid; correct the existing errors to complete validation"
)


def gizmo_crd(schema: dict | None = None) -> dict:
    return {
        "apiVersion": "apiextensions.platform.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gizmos.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": schema or GIZMO_SCHEMA},
                }
            ],
        },
    }


def gizmo(object_name: str, **spec: object) -> dict:
    meta = {"name": object_name}
    return {"apiVersion": f"{GROUP}/v1", "kind": "Gizmo", "metadata": meta, "spec": spec}


@pytest.fixture(scope="module")
def gizmos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    root = tmp_path_factory.mktemp("gizmos")
    (root / "tokens.csv").write_text("t-gina,gina,1\n")
    server = start_server(
        root / "data",
        "--authorization-mode",
        "RBAC",
        "--token-auth-file",
        str(root / "tokens.csv"),
    )
    admin = session_for(server, cert=server.admin_cert)
    create_crd(admin, server, gizmo_crd())
    ns = namespace(admin, server, "gizmos")
    yield server, f"{server.url}/apis/{GROUP}/v1/namespaces/{ns}/gizmos"
    server.stop()


@pytest.fixture
def admin(gizmos: tuple[Server, str]) -> requests.Session:
    return session_for(gizmos[0], cert=gizmos[0].admin_cert)


def test_unknown_fields_are_pruned_with_warnings(
    gizmos: tuple[Server, str], admin: requests.Session
) -> None:
    _, url = gizmos
    body = gizmo("a", replicas=3, extra=1, free={"x": {"y": 1}})
    body["bogus"] = True
    r = admin.post(url + "?fieldValidation=Warn", json=body)
    assert r.status_code == 201, r.text
    created = r.json()
    assert "bogus" not in created
    # Defaults filled in; keys sorted, as kube writes its Go maps.
    assert list(created["spec"].items()) == [
        ("free", {"x": {"y": 1}}),
        ("minReplicas", 1),
        ("mode", "fast"),
        ("replicas", 3),
    ]
    assert (
        r.headers["Warning"]
        == '299 - "unknown field \\"bogus\\"", 299 - "unknown field \\"spec.extra\\""'
    )
    body["metadata"]["name"] = "b"
    r = admin.post(url + "?fieldValidation=Strict", json=body)
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        400,
        "BadRequest",
        'Gizmo in version "v1" cannot be handled as a Gizmo: strict decoding error: '
        'unknown field "bogus", unknown field "spec.extra"',
    )
    # A strict merge patch is refused showing the patched map as kube holds it: not yet
    # pruned, every level's keys sorted (the reference's answer).
    patched = admin.patch(
        url + "/a?fieldValidation=Strict",
        json={"spec": {"extra": 1}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    cause = patched.json()["details"]["causes"][0]["message"]
    quoted, problem = cause.removeprefix("Invalid value: ").split(": strict decoding error: ")
    shown = json.loads(quoted)  # the patched object's JSON, as the message quotes it
    assert problem == 'unknown field "spec.extra"'
    assert '"spec":{"extra":1,"free":' in shown
    assert shown.index('"apiVersion"') < shown.index('"kind"') < shown.index('"metadata"')
    assert (
        shown.index('"creationTimestamp"') < shown.index('"managedFields"') < shown.index('"name"')
    )


# Floats of a custom resource as written and as kube v1.36 answers them (JSON bodies):
# encoding/json's forms, plain from 1e-6 up to 1e21, where orjson writes exponents
# below 1e-5 and from 1e16; an integer past int64 is a float64.
FLOATS_SENT = (
    b'{"a":1.5e-6,"b":1e19,"c":1.5e20,"d":9.99e-6,"e":1e-7,"f":1e21,"g":123.5,'
    b'"h":1e16,"i":12345678901234567890,"j":1e-5,"k":"1e-6 stays text"}'
)
FLOATS_ANSWERED = (
    b'"free":{"a":0.0000015,"b":10000000000000000000,"c":150000000000000000000,'
    b'"d":0.00000999,"e":1e-7,"f":1e+21,"g":123.5,"h":10000000000000000,'
    b'"i":12345678901234567000,"j":0.00001,"k":"1e-6 stays text"}'
)


def test_floats_are_answered_as_kube_writes_them(
    gizmos: tuple[Server, str], admin: requests.Session
) -> None:
    _, url = gizmos
    head = b'{"apiVersion":"%s/v1","kind":"Gizmo","metadata":{"name":"floats"},' % GROUP.encode()
    body = head + b'"spec":{"replicas":1,"free":%s}}' % FLOATS_SENT
    r = admin.post(url, data=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert FLOATS_ANSWERED in r.content
    revision = r.json()["metadata"]["resourceVersion"]
    assert FLOATS_ANSWERED in admin.get(f"{url}/floats").content
    assert FLOATS_ANSWERED in admin.get(url).content
    events = admin.get(
        url,
        params={"watch": "1", "resourceVersion": "0", "timeoutSeconds": "1"},
        stream=False,
    ).content
    assert FLOATS_ANSWERED in events and revision.encode() in events
    r = admin.get(f"{url}/floats", headers={"Accept": "application/yaml"})
    assert "a: 1.5e-06\n" in r.text and "b: 10000000000000000000\n" in r.text  # Go's YAML


def test_schema_errors_then_rules(gizmos: tuple[Server, str], admin: requests.Session) -> None:
    _, url = gizmos
    r = admin.post(
        url, json=gizmo("c", replicas=-1, mode="medium", name="TOOLONGX", tags=["a", "a"])
    )
    assert (r.status_code, r.json()["reason"]) == (422, "Invalid")
    # kube visits a schema's properties in Go map order (random); stored, a CRD's
    # properties are sorted (a Go map written), and they are visited in that order here.
    assert r.json()["message"] == (
        'Gizmo.schema.example.com "c" is invalid: [spec.mode: Unsupported value: "medium": '
        'supported values: "fast", "slow", spec.name: Too long: may not be more than 5 bytes, '
        "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or "
        f'equal to 0, spec.tags[1]: Duplicate value: "a", {NOT_CHECKED}]'
    )
    r = admin.post(url, json=gizmo("f", replicas="x"))
    assert r.json()["details"]["causes"][0] == {
        "reason": "FieldValueTypeInvalid",
        "message": 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        "field": "spec.replicas",
    }


def test_cel_rules(gizmos: tuple[Server, str], admin: requests.Session) -> None:
    _, url = gizmos
    r = admin.post(url, json=gizmo("d", replicas=1, minReplicas=5))
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: replicas must be at least minReplicas",
            "field": "spec.replicas",
        }
    ]
    r = admin.post(url, json=gizmo("e", replicas=101, name="nope"))
    assert r.json()["message"] == (
        'Gizmo.schema.example.com "e" is invalid: [spec: Invalid value: too many, '
        "spec.name: Invalid value: \"nope\": failed rule: self != 'nope']"
    )
    assert admin.post(url, json=gizmo("g", replicas=2, immutable="one")).status_code == 201
    r = admin.patch(url + "/g", json={"spec": {"immutable": "two"}}, headers=MERGE)
    assert (r.status_code, r.json()["message"]) == (
        422,
        'Gizmo.schema.example.com "g" is invalid: spec.immutable: Invalid value: "two": '
        "is immutable",
    )
    # Ratcheting: an unchanged value that breaks a rule does not block other changes.
    r = admin.patch(url + "/g", json={"spec": {"replicas": 3}}, headers=MERGE)
    assert r.status_code == 200, r.text


def test_immutable_map_lists_may_be_reordered(
    gizmos: tuple[Server, str], admin: requests.Session
) -> None:
    """``self == oldSelf`` on a map-list compares entries by key, as kube's CEL values do:
    an update that only reorders them passes; one that changes an entry does not."""
    _, url = gizmos
    ports = [{"name": "a", "port": 1}, {"name": "b", "port": 2}]
    assert admin.post(url, json=gizmo("p", replicas=1, ports=ports)).status_code == 201
    r = admin.patch(url + "/p", json={"spec": {"ports": ports[::-1]}}, headers=MERGE)
    assert (r.status_code, r.json()["spec"]["ports"]) == (200, ports[::-1])
    changed = [{"name": "b", "port": 3}, {"name": "a", "port": 1}]
    r = admin.patch(url + "/p", json={"spec": {"ports": changed}}, headers=MERGE)
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        422,
        "Invalid",
        'Gizmo.schema.example.com "p" is invalid: spec.ports: Invalid value: ports are immutable',
    )


def test_a_costly_rule_is_refused_with_the_crd(
    admin: requests.Session, gizmos: tuple[Server, str]
) -> None:
    server, _ = gizmos
    schema = copy.deepcopy(GIZMO_SCHEMA)
    schema["properties"]["spec"]["x-kubernetes-validations"][1]["messageExpression"] = (
        "'too many: ' + string(self.replicas)"
    )
    manifest = gizmo_crd(schema)
    manifest["metadata"]["name"] = f"costly.{GROUP}"
    manifest["spec"]["names"] = {"plural": "costly", "singular": "costly", "kind": "Costly"}
    r = admin.post(server.url + CRDS, json=manifest)
    assert (r.status_code, r.json()["reason"]) == (422, "Invalid")
    at = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[1]"
    assert r.json()["message"] == (
        f'CustomResourceDefinition.apiextensions.platform.io "costly.{GROUP}" is invalid: '
        f"[{at}.messageExpression: Forbidden: estimated messageExpression cost exceeds budget "
        "by factor of more than 100x (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared), "
        f"{at}.messageExpression: Forbidden: contributed to estimated rule cost total exceeding "
        "cost limit for entire OpenAPIv3 schema, spec.validation.openAPIV3Schema: Forbidden: "
        "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds "
        "budget by factor of more than 100x (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)]"
    )
    assert admin.get(f"{server.url}{CRDS}/costly.{GROUP}").status_code == 404


def test_new_defaults_apply_to_objects_read_later(
    gizmos: tuple[Server, str], admin: requests.Session
) -> None:
    server, url = gizmos
    assert admin.post(url, json=gizmo("old", replicas=4)).status_code == 201
    crd = admin.get(f"{server.url}{CRDS}/gizmos.{GROUP}").json()
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    props["properties"]["color"] = {"type": "string", "default": "blue"}
    r = admin.put(f"{server.url}{CRDS}/gizmos.{GROUP}", json=crd)
    assert r.status_code == 200, r.text
    eventually(lambda: admin.get(url + "/old").json()["spec"].get("color") == "blue")


def test_roles_grant_custom_resources(gizmos: tuple[Server, str], admin: requests.Session) -> None:
    server, url = gizmos
    gina = session_for(server, token="t-gina")
    assert gina.get(url).status_code == 403
    ns = url.split("/namespaces/")[1].split("/")[0]
    rbac = f"{server.url}/apis/rbac.authorization.platform.io/v1/namespaces/{ns}"
    role = {
        "apiVersion": "rbac.authorization.platform.io/v1",
        "kind": "Role",
        "metadata": {"name": "gizmo-reader"},
        "rules": [{"apiGroups": [GROUP], "resources": ["gizmos"], "verbs": ["get", "list"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.platform.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "gina-reads"},
        "roleRef": {
            "apiGroup": "rbac.authorization.platform.io",
            "kind": "Role",
            "name": "gizmo-reader",
        },
        "subjects": [
            {"kind": "User", "apiGroup": "rbac.authorization.platform.io", "name": "gina"}
        ],
    }
    assert admin.post(rbac + "/roles", json=role).status_code == 201
    assert admin.post(rbac + "/rolebindings", json=binding).status_code == 201
    eventually(lambda: gina.get(url).status_code == 200)
    r = gina.post(url, json=gizmo("by-gina", replicas=1))
    assert (r.status_code, r.json()["message"]) == (
        403,
        f'gizmos.{GROUP} is forbidden: User "gina" cannot create resource "gizmos" in API '
        f'group "{GROUP}" in the namespace "{ns}"',
    )


def test_instances_follow_namespaces_and_owners(
    gizmos: tuple[Server, str], admin: requests.Session
) -> None:
    server, _ = gizmos
    ns = namespace(admin, server, "gizmos-gone")
    url = f"{server.url}/apis/{GROUP}/v1/namespaces/{ns}/gizmos"
    owner = admin.post(url, json=gizmo("owner", replicas=1)).json()
    dependent = gizmo("dependent", replicas=1)
    dependent["metadata"]["ownerReferences"] = [
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Gizmo",
            "name": "owner",
            "uid": owner["metadata"]["uid"],
        }
    ]
    assert admin.post(url, json=dependent).status_code == 201
    assert admin.delete(url + "/owner").status_code == 200
    eventually(lambda: admin.get(url + "/dependent").status_code == 404)  # garbage collected
    assert admin.post(url, json=gizmo("left", replicas=1)).status_code == 201
    assert admin.delete(f"{server.url}/api/v1/namespaces/{ns}").status_code == 200
    eventually(lambda: admin.get(f"{server.url}/api/v1/namespaces/{ns}").status_code == 404)
    assert admin.get(url).json()["items"] == []


def test_ownership_follows_a_changed_schema(
    gizmos: tuple[Server, str], admin: requests.Session
) -> None:
    """As the reference answered: once a CRD marks a list a set, an apply owns its items
    (kube's field manager is built again with the CRD's new schema); once it makes it
    atomic again, entries owning its items are cut back to the list."""
    server, _ = gizmos
    tags = {"type": "array", "items": {"type": "string"}}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {}}}}
    schema["properties"]["spec"]["properties"]["tags"] = tags
    crd = crd_manifest(
        GROUP, kind="Tagged", plural="taggeds", versions=[version("v1", schema=schema)]
    )
    create_crd(admin, server, crd)
    url = f"{server.url}/apis/{GROUP}/v1/namespaces/gizmos/taggeds"
    apply = {"Content-Type": "application/apply-patch+yaml"}

    def applied(name: str) -> dict:
        body = {"apiVersion": f"{GROUP}/v1", "kind": "Tagged", "metadata": {"name": name}}
        body["spec"] = {"tags": ["x"]}
        r = admin.patch(f"{url}/{name}?fieldManager=a", json=body, headers=apply)
        assert r.status_code == 201, r.text
        return r.json()["metadata"]["managedFields"][0]["fieldsV1"]

    assert applied("before") == {"f:spec": {"f:tags": {}}}
    crd = admin.get(f"{server.url}{CRDS}/taggeds.{GROUP}").json()
    tags_now = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    tags_now["properties"]["tags"]["x-kubernetes-list-type"] = "set"
    r = admin.put(f"{server.url}{CRDS}/taggeds.{GROUP}", json=crd)
    assert r.status_code == 200, r.text
    eventually(lambda: applied_set(admin, url))
    assert applied("after") == {"f:spec": {"f:tags": {'v:"x"': {}}}}
    # and back: the next write cuts an entry's items of what is now atomic to the list
    crd = admin.get(f"{server.url}{CRDS}/taggeds.{GROUP}").json()
    tags_now = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    del tags_now["properties"]["tags"]["x-kubernetes-list-type"]
    assert admin.put(f"{server.url}{CRDS}/taggeds.{GROUP}", json=crd).status_code == 200
    eventually(lambda: not applied_set(admin, url))
    labels = {"metadata": {"labels": {"x": "y"}}}
    r = admin.patch(f"{url}/after?fieldManager=m", json=labels, headers=MERGE)
    assert [e["fieldsV1"] for e in r.json()["metadata"]["managedFields"]] == [
        {"f:spec": {"f:tags": {}}},
        {"f:metadata": {"f:labels": {".": {}, "f:x": {}}}},
    ]
    delete_crd(admin, server, f"taggeds.{GROUP}")


def applied_set(admin: requests.Session, url: str) -> bool:
    """Whether an apply's ownership reads the tags as a set (the schema's change
    reaches the handlers within moments)."""
    body = {"apiVersion": f"{GROUP}/v1", "kind": "Tagged", "metadata": {"name": "probe"}}
    body["spec"] = {"tags": [str(time.monotonic())]}
    headers = {"Content-Type": "application/apply-patch+yaml"}
    r = admin.patch(f"{url}/probe?fieldManager=probe", json=body, headers=headers)
    return r.json()["metadata"]["managedFields"][0]["fieldsV1"] != {"f:spec": {"f:tags": {}}}


def test_a_negative_max_properties_refuses_every_object(
    admin: requests.Session, gizmos: tuple[Server, str]
) -> None:
    """kube accepts ``maxProperties: -1`` and then refuses any spec as ``has too many
    items`` (field.TooMany's words for a negative limit; the reference's answer)."""
    server, _ = gizmos
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "maxProperties": -1}},
    }
    manifest = gizmo_crd(schema)
    manifest["metadata"]["name"] = f"nomore.{GROUP}"
    manifest["spec"]["names"] = {"plural": "nomore", "singular": "nomore", "kind": "NoMore"}
    create_crd(admin, server, manifest)
    try:
        url = f"{server.url}/apis/{GROUP}/v1/namespaces/gizmos/nomore"
        body = {"apiVersion": f"{GROUP}/v1", "kind": "NoMore", "metadata": {"name": "n"}}
        eventually(lambda: admin.get(url).status_code == 200)
        r = admin.post(url, json={**body, "spec": {}})
        assert r.status_code == 422
        assert r.json()["message"] == (
            f'NoMore.{GROUP} "n" is invalid: spec: Too many: 0: has too many items'
        )
        assert r.json()["details"]["causes"] == [
            {
                "reason": "FieldValueTooMany",
                "message": "Too many: 0: has too many items",
                "field": "spec",
            }
        ]
        assert admin.get(f"{url}/n").status_code == 404
    finally:
        delete_crd(admin, server, f"nomore.{GROUP}")
