"""Request bodies as kube-apiserver decodes them: YAML through go-yaml v2 into Go maps,
written as sorted JSON, then decoded; custom resources through the unstructured decoder;
the body's apiVersion through ParseGroupVersion.  Every expected answer is the reference
kube-apiserver v1.36's to the same request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import crd_manifest, create_crd, version

CM = "/api/v1/namespaces/default/configmaps"
YAML = {"Content-Type": "application/yaml"}
JSON = {"Content-Type": "application/json"}
GROUP = "yaml.example.com"
SCALED = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "name": {"type": "string"}},
        },
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
    },
}
SCALE = {
    "status": {},
    "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("yaml"))
    admin = session_for(running, cert=running.admin_cert)
    manifest = crd_manifest(GROUP, "Widget", "widgets", versions=[version("v1", schema=SCALED)])
    manifest["spec"]["versions"][0]["subresources"] = SCALE
    create_crd(admin, running, manifest)
    yield running
    running.stop()


@pytest.fixture
def http(served: Server) -> requests.Session:
    return session_for(served, cert=served.admin_cert)


def answer(response: requests.Response) -> tuple[int, str, str]:
    status = response.json()
    return response.status_code, status.get("reason", ""), status.get("message", "")


NAME_REQUIRED = (
    'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
)


@pytest.mark.parametrize("body", [b"", b"\n", b"  \n\n"])
def test_an_empty_yaml_document_is_an_empty_object(
    http: requests.Session, served: Server, body: bytes
) -> None:
    made = http.post(served.url + CM + "?dryRun=All", data=body, headers=YAML)
    assert answer(made) == (422, "Invalid", NAME_REQUIRED)


DUPLICATES = (
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yw\n  nam: x\n  name: yw\n"
    b"data: {k: v, k: w}\nzz: 1\ndata: {}\n"
)


def test_repeated_keys_are_yaml_strict_errors(http: requests.Session, served: Server) -> None:
    """yaml.v2's complaint by line (any map's keys), before the unknown fields: one
    refusal together, or one warning a line."""
    strict = http.post(served.url + CM + "?fieldValidation=Strict", data=DUPLICATES, headers=YAML)
    assert answer(strict) == (
        400,
        "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'yaml: unmarshal errors:\n  line 6: key "name" already set in map\n'
        '  line 7: key "k" already set in map\n  line 9: key "data" already set in map, '
        'unknown field "metadata.nam", unknown field "zz"',
    )
    warned = http.post(served.url + CM + "?fieldValidation=Warn", data=DUPLICATES, headers=YAML)
    assert warned.status_code == 201, warned.text
    assert warned.headers["Warning"] == (
        '299 - "line 6: key \\"name\\" already set in map", '
        '299 - "line 7: key \\"k\\" already set in map", '
        '299 - "line 9: key \\"data\\" already set in map", '
        '299 - "unknown field \\"metadata.nam\\"", 299 - "unknown field \\"zz\\""'
    )
    assert "data" not in warned.json()  # the last data, empty, as kube keeps it
    assert http.get(served.url + CM + "/yw").status_code == 200


def test_type_errors_in_sorted_key_order(http: requests.Session, served: Server) -> None:
    """The JSON kube decodes has every map's keys sorted: annotations before labels."""
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yo\n  labels: {x: y}\n"
    made = http.post(served.url + CM, data=body + b"  annotations: {x: 1}\n", headers=YAML)
    assert answer(made) == (
        400,
        "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "number into Go struct field ObjectMeta.metadata.annotations of type string",
    )
    assert http.get(served.url + CM + "/yo").status_code == 404


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"a: 1\nb:\n  c: *abels\n", "yaml: unknown anchor 'abels' referenced"),
        (
            b"a: {? {b: [1, x, null, 1.5, {2: y}]} : 1}",
            'yaml: invalid map key: map[interface {}]interface {}{"b":[]interface {}{1, "x", '
            "interface {}(nil), 1.5, map[interface {}]interface {}{2:true}}}",
        ),
    ],
)
def test_yaml_refusals(http: requests.Session, served: Server, body: bytes, problem: str) -> None:
    made = http.post(served.url + CM, data=body, headers=YAML)
    code, reason, message = answer(made)
    assert (code, reason) == (400, "BadRequest")
    lead = "the object provided is unrecognized (must be of type ConfigMap): "
    assert message == f"{lead}{problem} ({body.hex()[:60]}{' ...' if len(body) > 30 else ''})"


def widget(body: str) -> bytes:
    head = f'{{"apiVersion":"{GROUP}/v1","kind":"Widget","metadata":{{"name":"w"}},"spec":'
    return (head + body + "}").encode()


def test_whole_floats_of_json_custom_resources_are_float64(
    http: requests.Session, served: Server
) -> None:
    """A JSON 3.0 is Go's float64 through validation (a "number", no int64 for the scale
    sub-resource) and written as 3; YAML's goes through JSON's 3, an integer."""
    url = f"{served.url}/apis/{GROUP}/v1/namespaces/default/widgets"
    for spec, problem in [
        (
            '{"name":3.0}',
            'spec.name: Invalid value: "number": spec.name in body must be of '
            'type string: "number"',
        ),
        (
            '{"replicas":2.0}',
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: "
            "2 is of the type float64, expected int64",
        ),
    ]:
        made = http.post(url, data=widget(spec), headers=JSON)
        assert answer(made) == (422, "Invalid", f'Widget.{GROUP} "w" is invalid: {problem}')
    made = http.post(url, data=widget_yaml("{name: 3.0}"), headers=YAML)
    assert answer(made)[2] == (
        f'Widget.{GROUP} "w" is invalid: spec.name: Invalid value: "integer": spec.name in '
        'body must be of type string: "integer"'
    )
    made = http.post(url, data=widget_yaml("{replicas: 2.0}"), headers=YAML)
    assert made.status_code == 201, made.text
    assert b'"spec":{"replicas":2}' in made.content


def widget_yaml(spec: str) -> bytes:
    return f"apiVersion: {GROUP}/v1\nkind: Widget\nmetadata: {{name: w}}\nspec: {spec}\n".encode()


WIDGETS = f"/apis/{GROUP}/v1/namespaces/default/widgets?dryRun=All&fieldValidation="
KIND_MISSING = "Object 'Kind' is missing in "


@pytest.mark.parametrize(
    ("body", "level", "message"),
    [
        (
            b'{"apiVersion": "yaml.example.com/v2"}',
            "Ignore",
            'Widget in version "v2" cannot be handled as a Widget: '
            f"""{KIND_MISSING}'{{"apiVersion": "yaml.example.com/v2"}}'""",
        ),
        (
            b'{"apiVersion": "/"}',
            "Ignore",
            f"""Widget in version "v1" cannot be handled as a Widget: {KIND_MISSING}'{{"apiVersion": "/"}}'""",
        ),
        (
            b"{}",
            "Strict",
            f"the object provided is unrecognized (must be of type Widget): {KIND_MISSING}'{{}}' ({{}})",
        ),
        (
            b"null",
            "Warn",
            "the object provided is unrecognized (must be of type Widget): "
            f"{KIND_MISSING}'null' (6e756c6c)",
        ),
        (
            b'{"apiVersion": null, "kind": "Other", "metadata": {"name": "x"}}',
            "Strict",
            'Other in version "" cannot be handled as a Widget: .apiVersion accessor error: '
            "<nil> is of the type <nil>, expected string",
        ),
        (
            b'{"apiVersion": "a/b/c"}',
            "Strict",
            "the object provided is unrecognized (must be of type Widget): unexpected "
            'GroupVersion string: a/b/c ({"apiVersion": "a/b/c"})',
        ),
        (
            b'{"apiVersion": "Widget", "kind": "Widget", "metadata": ["a"]}',
            "Strict",
            'Widget in version "Widget" cannot be handled as a Widget: json: cannot unmarshal '
            "array into Go value of type v1.ObjectMeta",
        ),
    ],
)
def test_custom_resource_type_meta(
    http: requests.Session, served: Server, body: bytes, level: str, message: str
) -> None:
    """What kube's unstructured decoder and its handler answer a custom resource body
    whose kind or version is missing or malformed (a non-strict decode names the type it
    defaulted; the metadata is coerced before the version is compared)."""
    sent = http.post(served.url + WIDGETS + level, data=body, headers=JSON)
    assert answer(sent) == (400, "BadRequest", message)


def test_a_custom_resource_of_another_kind_is_not_pruned(
    http: requests.Session, served: Server
) -> None:
    body = {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    sent = http.post(served.url + WIDGETS + "Warn", json={**body, "bogus": 1})
    assert answer(sent) == (
        422,
        "Invalid",
        f'Gadget.{GROUP} "g" is invalid: kind: Invalid value: "Gadget": must be Widget',
    )
    assert "Warning" not in sent.headers
    # its metadata is still coerced, and what that drops is reported
    body["metadata"]["bogus"] = 1
    sent = http.post(served.url + WIDGETS + "Warn", json=body)
    assert sent.status_code == 422
    assert sent.headers["Warning"] == '299 - "unknown field \\"metadata.bogus\\""'


@pytest.mark.parametrize(
    ("api_version", "code", "message"),
    [
        ("/v1", 422, NAME_REQUIRED),
        ("/", 422, NAME_REQUIRED),
        (
            "v1/",
            400,
            "ConfigMap in version \"\" cannot be handled as a ConfigMap: Object 'apiVersion' "
            """is missing in '{"apiVersion": "v1/", "kind": "ConfigMap"}'""",
        ),
        (
            "a/b/c",
            400,
            "the object provided is unrecognized (must be of type ConfigMap): unexpected "
            'GroupVersion string: a/b/c ({"apiVersion": "a/b/c", "kind" ...)',
        ),
    ],
)
def test_group_versions_with_empty_parts(
    http: requests.Session, served: Server, api_version: str, code: int, message: str
) -> None:
    """kube's ParseGroupVersion: ``/v1`` is v1, ``/`` nothing, ``v1/`` a group alone."""
    body = {"apiVersion": api_version, "kind": "ConfigMap"}
    sent = http.post(served.url + CM + "?dryRun=All", json=body)
    assert answer(sent) == (code, "Invalid" if code == 422 else "BadRequest", message)


def test_a_custom_resource_put_naming_another_uid(http: requests.Session, served: Server) -> None:
    """kube's storage error names a custom resource's key without the storage prefix
    (a built-in kind's has it: test_patch_identity)."""
    url = f"{served.url}/apis/{GROUP}/v1/namespaces/default/widgets"
    made = http.post(url, data=widget_yaml("{replicas: 1}").replace(b"w}", b"k}"), headers=YAML)
    assert made.status_code == 201, made.text
    meta = made.json()["metadata"]
    sent = {**made.json(), "metadata": {**meta, "uid": "other"}}
    refused = http.put(f"{url}/k", json=sent)
    assert answer(refused) == (
        409,
        "Conflict",
        f'Operation cannot be fulfilled on widgets.{GROUP} "k": StorageError: invalid object, '
        f"Code: 4, Key: /{GROUP}/widgets/default/k, ResourceVersion: 0, AdditionalErrorMsg: "
        f"Precondition failed: UID in precondition: other, UID in object meta: {meta['uid']}",
    )


APPLY = {"Content-Type": "application/apply-patch+yaml"}


@pytest.mark.parametrize(
    ("managed", "code", "message"),
    [
        ("[]", 400, "metadata.managedFields must be nil"),
        ("[{}]", 400, "metadata.managedFields must be nil"),
        (
            '""',
            500,
            "failed to create typed patch object (/ap; /v1, Kind=ConfigMap): "
            ".metadata.managedFields: expected list, got &{}",
        ),
        (
            "[1]",
            500,
            "failed to create typed patch object (/ap; /v1, Kind=ConfigMap): "
            ".metadata.managedFields[0]: expected map, got &{1}",
        ),
    ],
)
def test_an_applied_configurations_managed_fields(
    http: requests.Session, served: Server, managed: str, code: int, message: str
) -> None:
    """Only a list of objects is managedFields to kube's check; the rest is the schema's."""
    config = f'{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"ap","managedFields":{managed}}}}}'
    sent = http.patch(served.url + CM + "/ap?fieldManager=m", data=config, headers=APPLY)
    assert (sent.status_code, sent.json()["message"]) == (code, message)


def test_an_applied_null_is_kept_in_a_custom_resource(
    http: requests.Session, served: Server
) -> None:
    """No request decoder reads an apply's result: the null stays for validation to see
    (a built-in kind's Go value has no field there)."""
    url = f"{served.url}/apis/{GROUP}/v1/namespaces/default/widgets/an?fieldManager=m"
    config = {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "an"}}
    sent = http.patch(url, json={**config, "spec": {"name": None}}, headers=APPLY)
    assert answer(sent) == (
        422,
        "Invalid",
        f'Widget.{GROUP} "an" is invalid: spec.name: Invalid value: "null": spec.name in body '
        'must be of type string: "null"',
    )
    sent = http.patch(url, json={**config, "spec": {"replicas": None}}, headers=APPLY)
    assert answer(sent)[2].endswith(
        ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: <nil> is of the type "
        "<nil>, expected int64]"
    )
