"""What a write cannot change: its object's type, name and uid, and the resourceVersion
it names.  Each answer is the one kube-apiserver v1.36 gave to the same request; the
object is unchanged after each refusal."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
import requests

from tests.e2e.answers import status, unknown
from tests.e2e.conftest import Server, registry_prefix
from tests.e2e.crds import crd_manifest, create_crd, crontab, ns_path

CM = "/api/v1/namespaces/default/configmaps"
JSON_PATCH = "application/json-patch+json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
UNDETERMINABLE = (
    "the name of the object ({} based on URL) was undeterminable: name must be provided"
)


def patch(admin: requests.Session, url: str, kind: str, body: Any) -> requests.Response:
    return admin.patch(url, data=json.dumps(body), headers={"Content-Type": kind})


def shown_and_detail(answer: requests.Response) -> tuple[dict[str, Any], str]:
    """The patched document a 422 ``patch: Invalid value`` shows, and why it failed."""
    body = answer.json()
    assert (answer.status_code, body["reason"]) == (422, "Invalid")
    cause = body["details"]["causes"][0]
    assert cause["field"] == "patch"
    value, _, detail = cause["message"].removeprefix("Invalid value: ").partition('": ')
    return json.loads(json.loads(value + '"')), detail


@pytest.fixture
def made(server: Server, admin: requests.Session, request: pytest.FixtureRequest) -> str:
    name = "p-" + hashlib.sha1(request.node.name.encode()).hexdigest()[:12]
    created = admin.post(server.url + CM, json={"metadata": {"name": name}, "data": {"a": "b"}})
    assert created.status_code == 201
    return f"{server.url}{CM}/{name}"


def unchanged(admin: requests.Session, url: str) -> None:
    got = admin.get(url).json()
    assert (got["apiVersion"], got["kind"], got["data"]) == ("v1", "ConfigMap", {"a": "b"})


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        (JSON_PATCH, [{"op": "remove", "path": "/apiVersion"}]),
        (JSON_PATCH, [{"op": "replace", "path": "/apiVersion", "value": ""}]),
        (MERGE, {"apiVersion": None}),
        (MERGE, {"metadata": {"name": None}}),
        (MERGE, {"metadata": None}),
        (JSON_PATCH, [{"op": "remove", "path": "/metadata"}]),
        (STRATEGIC, {"$retainKeys": ["data"]}),  # keeps data only: no metadata
    ],
)
def test_a_patch_that_leaves_no_name_is_refused(
    admin: requests.Session, made: str, kind: str, body: Any
) -> None:
    name = made.rsplit("/", 1)[1]
    refused = patch(admin, made, kind, body)
    assert refused.status_code == 400
    assert refused.json() == status(400, "BadRequest", UNDETERMINABLE.format(name))
    unchanged(admin, made)


def test_a_patch_that_drops_the_api_version_has_no_field_kube_knows(
    server: Server, admin: requests.Session, made: str
) -> None:
    """kube decodes a patched object with no apiVersion as a kind with no fields: every
    other top-level field is an unknown one, a warning (then no name: a 400) or, Strict,
    the refusal (the reference's answers)."""
    name = made.rsplit("/", 1)[1]
    body = [{"op": "remove", "path": "/apiVersion", "extra": 1}]
    warned = patch(admin, made, JSON_PATCH, body)
    assert warned.json() == status(400, "BadRequest", UNDETERMINABLE.format(name))
    assert warned.headers["Warning"] == (
        '299 - "json patch unknown field \\"[0].extra\\"", '
        '299 - "unknown field \\"data\\"", 299 - "unknown field \\"metadata\\""'
    )
    strict = patch(admin, made + "?fieldValidation=Strict", JSON_PATCH, body)
    shown, detail = shown_and_detail(strict)
    assert list(shown) == ["data", "kind", "metadata"]
    assert detail == (
        'strict decoding error: json patch unknown field "[0].extra", unknown field "data", '
        'unknown field "metadata"'
    )
    # a kind the patch nulls is quoted null, where the decoder takes the resource's
    nulled = [{"op": "replace", "path": "/data/a", "value": 0}, {"op": "add", "path": "/kind"}]
    shown, detail = shown_and_detail(patch(admin, made, JSON_PATCH, nulled))
    assert (shown["kind"], shown["data"]) == (None, {"a": 0})
    assert (
        detail == "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
    )
    unchanged(admin, made)


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        (MERGE, {"kind": None}),
        (JSON_PATCH, [{"op": "replace", "path": "/kind", "value": ""}]),
        (STRATEGIC, {"kind": "Secret", "apiVersion": "apps/v1"}),  # the converter ignores both
        (STRATEGIC, {"apiVersion": None}),
        (STRATEGIC, {"$retainKeys": ["data", "metadata"]}),
    ],
)
def test_the_type_a_patch_drops_or_ignores_is_the_resources(
    admin: requests.Session, made: str, kind: str, body: Any
) -> None:
    patched = patch(admin, made, kind, body)
    assert patched.status_code == 200
    assert (patched.json()["apiVersion"], patched.json()["kind"]) == ("v1", "ConfigMap")
    unchanged(admin, made)


def test_a_patch_to_another_type_is_refused_as_kubes_decoder_refuses_it(
    admin: requests.Session, made: str
) -> None:
    # decoded as a Secret first: its data is not base64
    shown, detail = shown_and_detail(patch(admin, made, MERGE, {"kind": "Secret"}))
    assert (shown["kind"], detail) == ("Secret", "illegal base64 data at input byte 0")
    _, detail = shown_and_detail(patch(admin, made, MERGE, {"kind": "Secret", "data": None}))
    assert detail == "converting (v1.Secret) to (core.ConfigMap): unknown conversion"
    _, detail = shown_and_detail(patch(admin, made, MERGE, {"apiVersion": "v2"}))
    scheme = "pkg/api/legacyscheme/scheme.go:30"
    assert detail == f'no kind "ConfigMap" is registered for version "v2" in scheme "{scheme}"'
    move = [{"op": "replace", "path": "/apiVersion", "value": "apps/v1"}]
    _, detail = shown_and_detail(patch(admin, made, JSON_PATCH, move))
    assert detail == f'no kind "ConfigMap" is registered for version "apps/v1" in scheme "{scheme}"'
    _, detail = shown_and_detail(patch(admin, made, MERGE, {"apiVersion": 5}))
    assert detail == (
        "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go "
        "struct field .apiVersion of type string"
    )
    unchanged(admin, made)


def test_a_body_whose_type_fields_are_no_strings_is_unrecognized(
    server: Server, admin: requests.Session
) -> None:
    for field, value, named in (("apiVersion", 5, "number"), ("kind", [1], "array")):
        body = {field: value, "metadata": {"name": "typed"}}
        sent = json.dumps(body, separators=(",", ":"))
        refused = admin.post(server.url + CM, data=sent)
        summary = sent[:30]
        assert refused.json() == status(
            400,
            "BadRequest",
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
            f"version/kind; json parse error: json: cannot unmarshal {named} into Go struct "
            f"field .{field} of type string ({summary} ...)",
        )


def test_a_custom_resource_patch_keeps_its_type(server: Server, admin: requests.Session) -> None:
    group = "identity.example.com"
    create_crd(admin, server, crd_manifest(group))
    base = server.url + ns_path(group, "default")
    assert admin.post(base, json=crontab("c1", group)).status_code == 201
    url = base + "/c1"
    for body in ([{"op": "remove", "path": "/apiVersion"}], {"apiVersion": ""}):
        kind = JSON_PATCH if isinstance(body, list) else MERGE
        missing = patch(admin, url, kind, body)
        assert missing.status_code == 500
        message = "Object 'apiVersion' is missing in 'object has no apiVersion field'"
        assert missing.json()["message"] == "Internal error occurred: " + message
    shown, detail = shown_and_detail(patch(admin, url, MERGE, {"kind": None}))
    text = json.dumps(shown, separators=(",", ":"), sort_keys=True)  # a Go map's order
    assert detail == f"Object 'Kind' is missing in '{text}'"
    assert "kind" not in shown and list(shown) == sorted(shown)
    elsewhere = patch(admin, url, MERGE, {"apiVersion": "other.example.com/v1"})
    assert elsewhere.json()["message"] == (
        'CronTab.other.example.com "c1" is invalid: apiVersion: Invalid value: '
        f'"other.example.com/v1": must be {group}/v1'
    )
    nameless = patch(admin, url, MERGE, {"metadata": {"name": None}})
    assert nameless.json() == status(400, "BadRequest", UNDETERMINABLE.format("c1"))
    got = admin.get(url).json()
    assert (got["apiVersion"], got["kind"]) == (f"{group}/v1", "CronTab")


def test_a_scale_write_keeps_its_type_and_name(server: Server, admin: requests.Session) -> None:
    deployments = server.url + "/apis/apps/v1/namespaces/default/deployments"
    labels = {"app": "identity-scaled"}
    template = {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    body = {
        "metadata": {"name": "identity-scaled"},
        "spec": {"selector": {"matchLabels": labels}, "template": template},
    }
    assert admin.post(deployments, json=body).status_code == 201
    scale = deployments + "/identity-scaled/scale"
    nameless = admin.put(scale, json={"spec": {"replicas": 2}})
    assert nameless.json() == status(400, "BadRequest", UNDETERMINABLE.format("identity-scaled"))
    other = admin.put(scale, json={"metadata": {"name": "identity-scaled", "uid": "x"}, "spec": {}})
    assert other.status_code == 409
    key = f"{registry_prefix(server.data_dir)}/deployments/default/identity-scaled"
    assert f"Key: {key}, " in other.json()["message"]
    unreadable = admin.put(
        scale, json={"metadata": {"name": "identity-scaled", "resourceVersion": "x"}}
    )
    assert unreadable.json() == unknown('strconv.ParseUint: parsing "x": invalid syntax')
    for kind, patched in ((MERGE, {"metadata": {"name": None}}), (MERGE, {"apiVersion": None})):
        refused = patch(admin, scale, kind, patched)
        assert refused.json() == status(400, "BadRequest", UNDETERMINABLE.format("identity-scaled"))
    shown, detail = shown_and_detail(patch(admin, scale, MERGE, {"kind": "Other"}))
    scheme = "pkg/api/legacyscheme/scheme.go:30"
    assert (
        detail == f'no kind "Other" is registered for version "autoscaling/v1" in scheme "{scheme}"'
    )
    assert list(shown)[:2] == ["apiVersion", "kind"]  # json-patch's Go map: sorted
    typed = {"kind": "Deployment", "apiVersion": "apps/v1"}
    _, detail = shown_and_detail(patch(admin, scale, MERGE, typed))
    assert detail == "converting (v1.Deployment) to (autoscaling.Scale): unknown conversion"
    ignored = {"kind": "Other", "apiVersion": None, "spec": {"replicas": 3}}
    scaled = patch(admin, scale, STRATEGIC, ignored)
    assert scaled.status_code == 200
    assert (scaled.json()["kind"], scaled.json()["spec"]) == ("Scale", {"replicas": 3})


def test_a_put_naming_another_uid_conflicts_in_kubes_storage_words(
    server: Server, admin: requests.Session, made: str
) -> None:
    name = made.rsplit("/", 1)[1]
    uid = admin.get(made).json()["metadata"]["uid"]
    prefix = registry_prefix(server.data_dir)
    refused = admin.put(made, json={"metadata": {"name": name, "uid": "other"}})
    assert refused.json() == status(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on configmaps "{name}": StorageError: invalid object, '
        f"Code: 4, Key: {prefix}/configmaps/default/{name}, ResourceVersion: 0, "
        f"AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object "
        f"meta: {uid}",
        {"name": name, "kind": "configmaps"},
    )
    # a patch has no precondition: the uid is an immutable field there
    patched = patch(admin, made, MERGE, {"metadata": {"uid": "other"}})
    assert (patched.status_code, patched.json()["reason"]) == (422, "Invalid")
    services = server.url + "/api/v1/namespaces/default/services"
    service = {"metadata": {"name": "identity-keyed"}, "spec": {"ports": [{"port": 80}]}}
    assert admin.post(services, json=service).status_code == 201
    moved = admin.put(
        services + "/identity-keyed",
        json={**service, "metadata": {"name": "identity-keyed", "uid": "x"}},
    )
    assert f"Key: {prefix}/services/specs/default/identity-keyed," in moved.json()["message"]
    # a dry run's key lacks the prefix (kube's dry-run storage checks it first)
    dry = admin.put(made + "?dryRun=All", json={"metadata": {"name": name, "uid": "other"}})
    assert f"Key: /configmaps/default/{name}, ResourceVersion: 0" in dry.json()["message"]
    # a kind created on update checks the uid against the object it would make: none
    endpoints = server.url + "/api/v1/namespaces/default/endpoints/identity-new"
    made_on_put = admin.put(endpoints, json={"metadata": {"name": "identity-new", "uid": "x"}})
    assert made_on_put.json() == status(
        409,
        "Conflict",
        'Operation cannot be fulfilled on endpoints "identity-new": StorageError: invalid '
        f"object, Code: 4, Key: {prefix}/services/endpoints/default/identity-new, "
        "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: x, "
        "UID in object meta: ",
        {"name": "identity-new", "kind": "endpoints"},
    )
    assert admin.get(endpoints).status_code == 404
    unchanged(admin, made)


def test_an_unreadable_resource_version_is_kubes_plain_500(
    admin: requests.Session, made: str
) -> None:
    name = made.rsplit("/", 1)[1]
    for version, why in (
        ("abc", "invalid syntax"),
        ("-1", "invalid syntax"),
        ("99999999999999999999", "value out of range"),
    ):
        expected = unknown(f'strconv.ParseUint: parsing "{version}": {why}')
        assert (
            patch(admin, made, MERGE, {"metadata": {"resourceVersion": version}}).json() == expected
        )
        put = admin.put(
            made, json={"metadata": {"name": name, "resourceVersion": version}, "data": {}}
        )
        assert put.json() == expected
    unchanged(admin, made)
    # "0" names no revision: the write is unconditional, as without one
    assert (
        patch(
            admin, made, MERGE, {"metadata": {"resourceVersion": "0", "selfLink": "/x"}}
        ).status_code
        == 200
    )
    assert "selfLink" not in admin.get(made).json()["metadata"]  # kube clears it on writes


def test_a_strategic_patch_kube_cannot_apply_is_its_plain_500(
    made: str, admin: requests.Session
) -> None:
    """kube passes these merge errors on as they are: no reason, the error's text."""
    refused = patch(admin, made, STRATEGIC, {"data": {"$patch": "bogus"}})
    message = "unknown patch type: bogus in map: map[$patch:bogus]"
    assert (refused.status_code, refused.json()) == (500, unknown(message))
    unchanged(admin, made)


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        (
            {"metadata": {"name": "x"}, "data": 1.5, "$patch": "replace"},
            "map[data:1.5 metadata:map[name:x]]",
        ),
        (
            {"metadata": {"$setElementOrder/finalizers": ["a"], "finalizers": ["a"]}, "data": 1.5},
            "map[data:1.5 metadata:map[]]",
        ),
    ],
)
def test_a_strategic_patch_is_shown_as_the_merge_left_it(
    made: str, admin: requests.Session, body: dict[str, Any], shown: str
) -> None:
    """kube's merge takes its directives (and the lists they ordered) out of the patch
    map in place, and a refusal prints that map (recorded from kube)."""
    refused = patch(admin, made, STRATEGIC, body)
    assert refused.status_code == 422
    message = refused.json()["message"]
    assert (
        message
        == f' "" is invalid: patch: Invalid value: "{shown}": cannot restore map from float64'
    )
    unchanged(admin, made)


def test_a_strategic_patch_names_unknown_fields_in_sorted_order(
    made: str, admin: requests.Session
) -> None:
    """kube's converter sorts the unknown fields of a strategic patch's result (its own
    walk meets ``metadata.zz`` first): refused so at Strict, warned so at Warn."""
    body = {"metadata": {"zz": 1, "annotations": {"x": "y"}}, "aa": 2, "data": {"c": "d"}}
    refused = patch(admin, made + "?fieldValidation=Strict", STRATEGIC, body)
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        ' "" is invalid: patch: Invalid value: "map[aa:2 data:map[c:d] metadata:map['
        'annotations:map[x:y] zz:1]]": strict decoding error: unknown field "aa", '
        'unknown field "metadata.zz"'
    )
    unchanged(admin, made)
    warned = patch(admin, made + "?fieldValidation=Warn&dryRun=All", STRATEGIC, body)
    assert warned.status_code == 200
    assert warned.headers["Warning"] == (
        '299 - "unknown field \\"aa\\"", 299 - "unknown field \\"metadata.zz\\""'
    )


def test_a_refused_patch_is_quoted_in_json_patch_key_order(
    made: str, admin: requests.Session
) -> None:
    """kube's json-patch library writes the objects a patch reached as Go maps (sorted
    keys) and keeps the rest as stored: the reference quoted these two patches so."""
    merge = patch(admin, made, MERGE, {"metadata": {"labels": {"z": "1", "a": 2}}})
    answer = merge.json()["details"]["causes"][0]["message"]
    assert '\\"metadata\\":{\\"creationTimestamp\\":' in answer  # reached: sorted
    assert '\\"labels\\":{\\"a\\":2,\\"z\\":\\"1\\"}' in answer
    ops = [{"op": "add", "path": "/metadata/labels", "value": {"z": "1", "a": 2}}]
    jsonpatch = patch(admin, made, "application/json-patch+json", ops)
    answer = jsonpatch.json()["details"]["causes"][0]["message"]
    # the value an operation put is written as it came; its parent is sorted
    assert '\\"metadata\\":{\\"creationTimestamp\\":' in answer
    assert '\\"labels\\":{\\"z\\":\\"1\\",\\"a\\":2}' in answer
    unchanged(admin, made)
