"""Hostile names, numbers and patches on a live server: kube-apiserver v1.36's status,
reason and message (each recorded against it), and nothing changed.  Before, a 5000-digit
number was a 500, a name of ``..`` a 404, and JSON patches were refused where kube's
evanphx/json-patch applies them."""

from __future__ import annotations

import json
import uuid

import pytest
import requests

from tests.e2e.answers import status, unknown
from tests.e2e.conftest import Server
from tests.e2e.crds import crd_manifest, create_crd, crontab, ns_path

BIG = "9" * 5000
JSON, YAML = "application/json", "application/yaml"
MERGE, STRATEGIC = "application/merge-patch+json", "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
REJECTED = "the server rejected our request due to an error in our request"


@pytest.fixture
def ns(server: Server, admin: requests.Session) -> str:
    name = f"hostile-{uuid.uuid4().hex[:8]}"
    made = admin.post(
        server.url + "/api/v1/namespaces", json={"metadata": {"name": name}}, timeout=10
    )
    assert made.status_code == 201
    return name


@pytest.fixture
def target(server: Server, admin: requests.Session, ns: str) -> str:
    """A ConfigMap's URL; the tests check it is unchanged after a refusal."""
    base = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
    made = admin.post(base, json={"metadata": {"name": "cm"}, "data": {"a": "1"}}, timeout=10)
    assert made.status_code == 201
    return base + "/cm"


def send(
    admin: requests.Session, method: str, url: str, data: bytes, media: str
) -> requests.Response:
    return admin.request(method, url, data=data, headers={"Content-Type": media}, timeout=10)


def test_numbers_of_thousands_of_digits(
    server: Server, admin: requests.Session, ns: str, target: str
) -> None:
    base = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
    before = admin.get(target, timeout=10).json()
    body = f'{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"n","generation":{BIG}}}}}'
    made = send(admin, "POST", base, body.encode(), JSON)
    assert made.status_code == 400
    assert made.json() == status(
        400,
        "BadRequest",
        f'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        f"number {BIG} into Go struct field ObjectMeta.metadata.generation of type int64",
    )
    yaml_body = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nn\n  generation: {BIG}\n"
    made = send(admin, "POST", base, yaml_body.encode(), YAML)
    assert made.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "string into Go struct field ObjectMeta.metadata.generation of type int64"
    )
    patched = send(admin, "PATCH", target, f'{{"data":{{"x":{BIG}}}}}'.encode(), MERGE)
    assert patched.status_code == 400
    assert patched.json()["message"] == (
        f"error decoding patch: json: cannot unmarshal number {BIG} into Go value of type float64"
    )
    gone = admin.delete(target, data=f'{{"gracePeriodSeconds":{BIG}}}', timeout=10)
    assert gone.status_code == 400
    assert gone.json()["message"] == (
        f"json: cannot unmarshal number {BIG} into Go struct field "
        "DeleteOptions.gracePeriodSeconds of type int64"
    )
    assert admin.get(base + "/n", timeout=10).status_code == 404
    assert admin.get(target, timeout=10).json() == before


@pytest.mark.parametrize(
    ("name", "problem"),
    [("%2E%2E", "may not be '..'"), ("%2E", "may not be '.'"), ("a%25b", "may not contain '%'")],
)
def test_names_that_are_no_path_segment(
    admin: requests.Session, target: str, name: str, problem: str
) -> None:
    url = target.rsplit("/", 1)[0] + "/" + name
    shown = requests.utils.unquote(name)  # sent escaped: clients resolve a bare ".."
    expected = status(400, "BadRequest", f'Name parameter invalid: "{shown}": {problem}')
    body = f'{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{shown}"}}}}'.encode()
    for method, data, media in [
        ("GET", b"", JSON),
        ("DELETE", b"", JSON),
        ("PUT", body, JSON),
        ("PATCH", b"{{{", MERGE),
    ]:
        answer = send(admin, method, url, data, media)
        assert (method, answer.status_code, answer.json()) == (method, 400, expected)


def test_a_name_holding_a_slash_is_two_segments(admin: requests.Session, target: str) -> None:
    answer = admin.get(target.rsplit("/", 1)[0] + "/a%2Fb", timeout=10)
    assert answer.status_code == 404
    assert answer.json() == status(
        404, "NotFound", "the server could not find the requested resource", {}
    )


def test_not_found_names_are_quoted_as_go_quotes_them(admin: requests.Session, target: str) -> None:
    answer = admin.get(target.rsplit("/", 1)[0] + "/a%01%7F%C2%80b", timeout=10)
    assert answer.status_code == 404
    assert answer.json() == status(
        404,
        "NotFound",
        'configmaps "a\\x01\\x7f\\u0080b" not found',
        {"name": "a\x01\x7f\x80b", "kind": "configmaps"},
    )


def test_a_bad_patch_of_a_missing_object_is_not_found(admin: requests.Session, target: str) -> None:
    missing = target.rsplit("/", 1)[0] + "/missing"
    for media in (MERGE, STRATEGIC, JSON_PATCH):
        answer = send(admin, "PATCH", missing, b"{{{", media)
        assert answer.status_code == 404
        assert answer.json() == status(
            404,
            "NotFound",
            'configmaps "missing" not found',
            {"name": "missing", "kind": "configmaps"},
        )


def test_json_patch_applies_as_kube_applies_it(admin: requests.Session, target: str) -> None:
    operations = (
        b'[{"op":"replace","path":"/data/b","value":"2"},'  # a missing key: added
        b'{"op":"add","path":"/data/c"},'  # no value: null, so ""
        b'{"op":"add","path":"/metadata/finalizers","value":["x/a"]},'
        b'{"op":"add","path":"/metadata/finalizers/00","value":"x/b"},'
        b'{"op":"add","path":"/metadata/finalizers/-1","value":"x/c"}]'
    )
    answer = send(admin, "PATCH", target + "?dryRun=All", operations, JSON_PATCH)
    assert answer.status_code == 200
    got = answer.json()
    assert got["data"] == {"a": "1", "b": "2", "c": ""}
    assert got["metadata"]["finalizers"] == ["x/b", "x/a", "x/c"]


def test_json_patch_refusals(admin: requests.Session, target: str) -> None:
    before = admin.get(target, timeout=10).json()
    answer = send(admin, "PATCH", target, b'[{"op":"remove","path":"/data/none"}]', JSON_PATCH)
    assert answer.status_code == 422
    assert answer.json() == status(422, "Invalid", REJECTED, {})
    answer = send(admin, "PATCH", target, b'[{"op":5,"path":"/data/x"}]', JSON_PATCH)
    assert answer.json() == status(
        400,
        "BadRequest",
        "error decoding patch: json: cannot unmarshal number into Go struct field "
        "jsonPatchOp.op of type string",
    )
    answer = send(admin, "PATCH", target + "?fieldValidation=Ignore", b"[5]", JSON_PATCH)
    assert answer.json() == status(
        400, "BadRequest", "json: cannot unmarshal number into Patch.0 of type jsonpatch.Operation"
    )
    assert admin.get(target, timeout=10).json() == before


def test_json_patch_strict_problems(admin: requests.Session, target: str) -> None:
    operations = b'[{"op":"add","path":"/data/q","path":"/data/r","value":"v","foo":1}]'
    answer = send(admin, "PATCH", target + "?dryRun=All", operations, JSON_PATCH)
    assert answer.status_code == 200
    assert answer.headers["Warning"] == (
        '299 - "json patch duplicate field \\"[0].path\\"", '
        '299 - "json patch unknown field \\"[0].foo\\""'
    )
    strict = send(admin, "PATCH", target + "?fieldValidation=Strict", operations, JSON_PATCH)
    assert strict.status_code == 422
    assert strict.json()["message"].endswith(
        ': strict decoding error: json patch duplicate field "[0].path", '
        'json patch unknown field "[0].foo"'
    )


def test_merge_patch_shapes(admin: requests.Session, target: str) -> None:
    before = admin.get(target, timeout=10).json()
    answer = send(admin, "PATCH", target, b"null", MERGE)
    assert answer.json() == status(400, "BadRequest", "Invalid JSON Patch")
    answer = send(admin, "PATCH", target, b"[1]", MERGE)
    assert answer.json() == status(
        400,
        "BadRequest",
        "error decoding patch: json: cannot unmarshal array into Go value of type "
        "map[string]interface {}",
    )
    answer = send(admin, "PATCH", target + "?fieldValidation=Ignore", b"[1]", MERGE)
    problem = (
        "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go "
        'value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
        'Kind string "json:\\"kind,omitempty\\"" }'
    )
    assert answer.status_code == 422
    assert answer.json()["message"] == f' "" is invalid: patch: Invalid value: "[1]": {problem}'
    answer = send(admin, "PATCH", target, b"{{{", STRATEGIC)
    assert answer.json() == status(
        400, "BadRequest", "invalid character '{' looking for beginning of object key string"
    )
    assert admin.get(target, timeout=10).json() == before


def test_odd_options(admin: requests.Session, target: str) -> None:
    base = target.rsplit("/", 1)[0]
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fm"}}'
    answer = send(admin, "POST", base + "?dryRun=All&fieldManager=a%01b", body, JSON)
    detail = 'Invalid value: "a\\x01b": invalid character U+0001 (at position 1)'
    assert answer.json() == status(
        422,
        "Invalid",
        f'CreateOptions.meta.platform.io "" is invalid: fieldManager: {detail}',
        {
            "group": "meta.platform.io",
            "kind": "CreateOptions",
            "causes": [{"reason": "FieldValueInvalid", "message": detail, "field": "fieldManager"}],
        },
    )
    # a negative timeout: kube's watch timer fires before the first event; so does one
    # whose nanoseconds wrap negative in Go's time.Duration(n) * time.Second
    for seconds in ("-5", "9223372037", "9223372036854775807"):
        watched = admin.get(base + f"?watch=1&timeoutSeconds={seconds}", timeout=10)
        assert (watched.status_code, watched.content) == (200, b""), seconds


EXPORT = "the export parameter, deprecated since v1.14, is no longer supported"


@pytest.mark.parametrize(
    ("query", "code"),
    [
        # as kube-apiserver v1.36 answered each: only 0 and false (any case) read false,
        # and only the first of several values counts
        ("export=1", 400),
        ("export=", 400),
        ("export=no", 400),
        ("export=true&export=false", 400),
        ("export=1&resourceVersion=abc", 400),  # before the options are read
        ("export=FALSE", 200),
        ("export=0", 200),
        ("export=false&export=true", 200),
    ],
)
def test_a_get_refuses_the_export_parameter(
    admin: requests.Session, target: str, query: str, code: int
) -> None:
    answer = admin.get(f"{target}?{query}", timeout=10)
    assert answer.status_code == code
    if code == 400:
        assert answer.json() == status(400, "BadRequest", EXPORT)
    else:
        assert answer.json()["data"] == {"a": "1"}


def test_export_is_refused_by_every_plain_get_and_only_there(
    server: Server, admin: requests.Session, target: str
) -> None:
    """kube's GetResource checks it (objects, their status and scale, absent ones too),
    after the answer's type is agreed; a list ignores it."""
    apps = f"{server.url}/apis/apps/v1/namespaces/{target.split('/')[-3]}/deployments"
    labels = {"a": "b"}
    template = {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    spec = {"selector": {"matchLabels": labels}, "template": template}
    made = admin.post(apps, json={"metadata": {"name": "d"}, "spec": spec}, timeout=10)
    assert made.status_code == 201
    for url in (target.rsplit("/", 1)[0] + "/absent", apps + "/d/status", apps + "/d/scale"):
        answer = admin.get(url + "?export=1", timeout=10)
        assert answer.json() == status(400, "BadRequest", EXPORT), url
    listed = admin.get(target.rsplit("/", 1)[0] + "?export=1", timeout=10)
    assert listed.status_code == 200
    unacceptable = admin.get(target + "?export=1", headers={"Accept": "text/bogus"}, timeout=10)
    assert (unacceptable.status_code, unacceptable.json()["reason"]) == (406, "NotAcceptable")


def test_a_watch_timeout_that_wraps_to_zero_is_the_default(
    admin: requests.Session, target: str
) -> None:
    """-1<<63 seconds is 0 ns in Go: kube's default timer (minutes), not one at once."""
    base = target.rsplit("/", 1)[0]
    url = base + "?watch=1&timeoutSeconds=-9223372036854775808"
    with admin.get(url, stream=True, timeout=10) as watched:
        assert watched.status_code == 200
        first = next(watched.iter_lines())
    event = json.loads(first)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "cm")


APPLY = "application/apply-patch+yaml"


def test_apply_type_problems_are_kubes_bare_500s(
    server: Server, admin: requests.Session, ns: str, target: str
) -> None:
    before = admin.get(target, timeout=10).json()
    config = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"immutable":"x"}'
    answer = send(admin, "PATCH", target + "?fieldManager=m", config, APPLY)
    assert (answer.status_code, answer.json()) == (
        500,
        unknown(
            "failed to create typed patch object (/cm; /v1, Kind=ConfigMap): "
            ".immutable: expected boolean, got &{x}"
        ),
    )
    assert admin.get(target, timeout=10).json() == before
    deployments = f"{server.url}/apis/apps/v1/namespaces/{ns}/deployments/d"
    template = '"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}'
    for replicas, code in (("3.0", 201), ("2.5", 500)):
        body = (
            '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{'
            f'"replicas":{replicas},"selector":{{"matchLabels":{{"a":"b"}}}},{template}}}}}'
        )
        answer = send(
            admin, "PATCH", deployments + "?fieldManager=m&dryRun=All", body.encode(), APPLY
        )
        assert answer.status_code == code
        if code == 201:
            assert answer.json()["spec"]["replicas"] == 3
        else:
            assert answer.json()["message"] == (
                "failed to convert new object (/d; apps/v1, Kind=Deployment) to proper version: "
                "unable to convert unstructured object to apps/v1, Kind=Deployment: cannot "
                "convert float64 to int32"
            )


CONVERTER = (
    "failed to convert new object (/{name}; /v1, Kind={kind}) to proper version: unable to "
    "convert unstructured object to /v1, Kind={kind}: {problem}"
)


@pytest.mark.parametrize(
    ("kind", "plural", "fields", "problem"),
    [
        # what structured-merge-diff lets through and kube's converter refuses (reference
        # kube-apiserver v1.36, 2026-12-07): a bare 500, nothing written
        (
            "LimitRange",
            "limitranges",
            {"spec": {"limits": [{"type": "Container", "max": {"cpu": "10.0.0.1"}}]}},
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ("Secret", "secrets", {"data": {"a": "!!!"}}, "error decoding from json: "
         "illegal base64 data at input byte 0"),
    ],
)  # fmt: skip
def test_apply_converter_refusals_are_kubes_bare_500s(
    server: Server,
    admin: requests.Session,
    ns: str,
    kind: str,
    plural: str,
    fields: dict[str, object],
    problem: str,
) -> None:
    name = f"conv-{plural}"
    config = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}, **fields}
    url = f"{server.url}/api/v1/namespaces/{ns}/{plural}/{name}?fieldManager=m"
    answer = send(admin, "PATCH", url, json.dumps(config).encode(), APPLY)
    message = CONVERTER.format(name=name, kind=kind, problem=problem)
    assert (answer.status_code, answer.json()) == (500, unknown(message))
    assert admin.get(url.split("?", maxsplit=1)[0], timeout=10).status_code == 404


def test_a_quantity_holds_a_scalar_for_structured_merge_diff(
    server: Server, admin: requests.Session, ns: str
) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "l"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": [{"name": "c"}]}}]},
    }
    url = f"{server.url}/api/v1/namespaces/{ns}/limitranges/l?fieldManager=m"
    answer = send(admin, "PATCH", url, json.dumps(config).encode(), APPLY)
    assert (answer.status_code, answer.json()) == (
        500,
        unknown(
            "failed to create typed patch object (/l; /v1, Kind=LimitRange): "
            ".spec.limits[0].max.cpu: expected any scalar, got &{[map[name:c]]}"
        ),
    )


def test_custom_resource_type_meta(server: Server, admin: requests.Session, ns: str) -> None:
    """A custom resource's body is read by kube's unstructured decoder: it needs a kind,
    names its own apiVersion, and a body of another kind is refused by validation."""
    group = f"h{uuid.uuid4().hex[:6]}.example.com"
    create_crd(admin, server, crd_manifest(group))
    base = server.url + ns_path(group, ns)
    body = b'{"apiVersion":"' + group.encode() + b'/v1","metadata":{"name":"x"}}'
    answer = send(admin, "POST", base, body, JSON)
    assert answer.json() == status(
        400,
        "BadRequest",
        "the object provided is unrecognized (must be of type CronTab): Object 'Kind' is "
        f"missing in '{body.decode()}' ({body[:30].decode()} ...)",
    )
    answer = send(admin, "POST", base, b'{"kind":"CronTab","metadata":{"name":"x"}}', JSON)
    assert answer.json()["message"] == (
        f"the API version in the data () does not match the expected API version ({group}/v1)"
    )
    other = crontab("x", group) | {"kind": "Gadget"}
    answer = admin.post(base, json=other, timeout=10)
    assert answer.json() == status(
        422,
        "Invalid",
        f'Gadget.{group} "x" is invalid: kind: Invalid value: "Gadget": must be CronTab',
        {
            "name": "x",
            "group": group,
            "kind": "Gadget",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": 'Invalid value: "Gadget": must be CronTab',
                    "field": "kind",
                }
            ],
        },
    )
    assert admin.get(base + "/x", timeout=10).status_code == 404
    made = admin.post(base, json=crontab("y", group, replicas=2.0), timeout=10)
    assert made.status_code == 201
    assert b'"replicas":2}' in made.content  # Go writes a whole float64 as 2
    answer = send(admin, "PATCH", base + "/y", b'{"spec":{}}', STRATEGIC)
    assert answer.json() == status(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    )


def test_strategic_patch_types_as_kubes_converter_words_them(
    server: Server, admin: requests.Session, ns: str, target: str
) -> None:
    """``kubectl patch`` sends strategic merge patches; their results go through kube's
    unstructured converter, which names no field and fills integer fields from floats."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    url = f"{server.url}/apis/apps/v1/namespaces/{ns}/deployments"
    assert admin.post(url, json=deployment, timeout=10).status_code == 201
    cases = [
        (
            url + "/d",
            b'{"spec":{"replicas":"3"}}',
            "map[spec:map[replicas:3]]",
            "unrecognized type: int32",
        ),
        (url + "/d", b'{"spec":"x"}', "map[spec:x]", "cannot restore struct from: string"),
        (
            url + "/d",
            b'{"metadata":{"labels":"x"}}',
            "map[metadata:map[labels:x]]",
            "cannot restore map from string",
        ),
        (target, b'{"data":{"a":5}}', "map[data:map[a:5]]", "cannot convert int64 to string"),
        (
            url + "/d",
            b'{"spec":{"replicas":2.5}}',
            "map[spec:map[replicas:2.5]]",
            "cannot convert float64 to int32",
        ),
    ]
    for where, patch, shown, problem in cases:
        answer = send(admin, "PATCH", where, patch, STRATEGIC)
        assert answer.status_code == 422
        assert (
            answer.json()["message"]
            == f' "" is invalid: patch: Invalid value: "{shown}": {problem}'
        )
    answer = send(admin, "PATCH", url + "/d?dryRun=All", b'{"spec":{"replicas":2.0}}', STRATEGIC)
    assert (answer.status_code, answer.json()["spec"]["replicas"]) == (200, 2)


def test_subresource_bodies(server: Server, admin: requests.Session, ns: str, target: str) -> None:
    base = f"{server.url}/apis/apps/v1/namespaces/{ns}/replicasets"
    template = {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    spec = {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "template": template}
    made = admin.post(base, json={"metadata": {"name": "rs"}, "spec": spec}, timeout=10)
    assert made.status_code == 201
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "other"}}
    answer = admin.put(base + "/rs/scale", json={**scale, "spec": {"replicas": 2}}, timeout=10)
    assert answer.json() == status(
        400, "BadRequest", "the name of the object (other) does not match the name on the URL (rs)"
    )
    answer = send(admin, "PATCH", base + "/rs/scale", b'{"spec":{"replicas":"2"}}', MERGE)
    assert answer.status_code == 422
    assert answer.json()["message"].endswith(
        '": json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32'
    )
    assert admin.get(base + "/rs", timeout=10).json()["spec"]["replicas"] == 1
    pods = f"{server.url}/api/v1/namespaces/{ns}/pods/p/binding"
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}}
    answer = admin.post(pods, json={**binding, "target": {"kind": "Pod"}}, timeout=10)
    assert (answer.status_code, answer.json()) == (
        500,
        unknown(
            '[target.kind: Unsupported value: "Pod": supported values: "Node", '
            '"<empty>", target.name: Required value]'
        ),
    )
    # a continue token is read before its clash with a resourceVersion is refused
    answer = admin.get(
        target.rsplit("/", 1)[0] + "?limit=1&resourceVersion=5&continue=abc", timeout=10
    )
    assert answer.json()["message"] == (
        "invalid continue token: continue key is not valid: invalid character 'i' looking for "
        "beginning of value"
    )


@pytest.mark.parametrize(
    ("when", "stored", "problem"),
    [
        # a MicroTime takes exactly six fraction digits and upper-case T and Z
        ("2020-01-01T00:00:00.123456+01:00", "2019-12-31T23:00:00.123456Z", ""),
        ("2020-01-01T00:00:00,123456Z", "2020-01-01T00:00:00.123456Z", ""),
        ("2020-01-01T00:00:00Z", None, 'cannot parse "Z" as ".000000"'),
        ("2020-01-01T00:00:00.123456789Z", None, 'cannot parse "789Z" as "Z07:00"'),
        ("2020-01-01t00:00:00.123456Z", None, 'cannot parse "t00:00:00.123456Z" as "T"'),
        ("2020-02-30T00:00:00.000000Z", None, "day out of range"),
    ],
)
def test_micro_times_read_as_gos_layout_reads_them(
    server: Server, admin: requests.Session, ns: str, when: str, stored: str | None, problem: str
) -> None:
    leases = f"{server.url}/apis/coordination.platform.io/v1/namespaces/{ns}/leases"
    answer = admin.post(leases, json={"metadata": {"name": "l"}, "spec": {"renewTime": when}})
    if stored is not None:
        assert (answer.status_code, answer.json()["spec"]["renewTime"]) == (201, stored)
        return
    layout = ' as "2006-01-02T15:04:05.000000Z07:00": ' if problem.startswith("cannot") else ": "
    message = f'Lease in version "v1" cannot be handled as a Lease: parsing time "{when}"'
    assert answer.json() == status(400, "BadRequest", message + layout + problem)
    assert admin.get(f"{leases}/l").status_code == 404
