"""Attacker-shaped request bodies get kube-apiserver's answer, change nothing, and leave the
server serving (issue 14, decoding limits).  One server, CBOR on, for the module."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import orjson
import pytest
import requests
import yaml

from platform_api.codec.bounds import SAFE_DEPTH
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import crd_manifest, create_crd, version

CM = "/api/v1/namespaces/default/configmaps"
SUMMARY = '({"apiVersion":"v1","kind":"Con ...)'
YAML_SUMMARY = "(61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 ...)"
UNRECOGNIZED = "the object provided is unrecognized (must be of type ConfigMap): "
JSON, YAML = "application/json", "application/yaml"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(
        tmp_path_factory.mktemp("hostile"), "--feature-gates=CBORServingAndStorage=true"
    )
    yield running
    running.stop()


@pytest.fixture(scope="module")
def http(served: Server) -> requests.Session:
    session = session_for(served, cert=served.admin_cert)
    session.headers["Accept"] = JSON
    made = session.post(
        served.url + CM,
        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "target"}},
    )
    assert made.status_code == 201
    return session


def nest(depth: int) -> str:
    return "[" * depth + "]" * depth


def cm(name: str, rest: str = "") -> bytes:
    return f'{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}}{rest}}}'.encode()


def laughs(kind: str = "ConfigMap") -> bytes:
    doc = f"apiVersion: v1\nkind: {kind}\nmetadata:\n  name: lol\n"
    doc += 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    prev = "a"
    for name in "bcdefghi":
        doc += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        prev = name
    return doc.encode()


def refused(
    http: requests.Session, served: Server, method: str, path: str, ctype: str, body: bytes
) -> str:
    """Send, expect kube's 400 within a second; then a normal request still works."""
    started = time.monotonic()
    answer = http.request(method, served.url + path, data=body, headers={"Content-Type": ctype})
    assert time.monotonic() - started < 1.5
    assert answer.status_code == 400, answer.text
    status = answer.json()
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "BadRequest", 400)
    assert http.get(served.url + CM + "/target").status_code == 200
    return str(status["message"])


def answered_meanwhile(
    http: requests.Session, served: Server, writes: list[tuple[str, str, str, bytes]]
) -> list[requests.Response]:
    """The answers to ``writes``, sent in turn from another connection while this one
    GETs a small object: the server answers it meanwhile, more than a few times."""
    answers: list[requests.Response] = []

    def send() -> None:
        session = session_for(served, cert=served.admin_cert)
        for method, path, ctype, body in writes:
            headers = {"Content-Type": ctype}
            answers.append(session.request(method, served.url + path, data=body, headers=headers))

    sender = threading.Thread(target=send)
    sender.start()
    served_meanwhile = 0
    while sender.is_alive():
        assert http.get(served.url + CM + "/target").status_code == 200
        served_meanwhile += 1
    assert served_meanwhile > 3
    return answers


@pytest.mark.parametrize("depth", [10_000, 100_000])
def test_deep_json_create(http: requests.Session, served: Server, depth: int) -> None:
    body = cm("deep", ',"data":' + nest(depth))
    message = refused(http, served, "POST", CM, JSON, body)
    assert message == (
        f"{UNRECOGNIZED}couldn't get version/kind; json parse error: exceeded max depth {SUMMARY}"
    )
    assert http.get(served.url + CM + "/deep").status_code == 404


def test_deep_json_review(http: requests.Session, served: Server) -> None:
    body = (
        '{"apiVersion":"authorization.platform.io/v1","kind":"SelfSubjectAccessReview","spec":'
        + nest(10_001)
        + "}"
    ).encode()
    path = "/apis/authorization.platform.io/v1/selfsubjectaccessreviews"
    assert refused(http, served, "POST", path, JSON, body) == (
        "the object provided is unrecognized (must be of type SelfSubjectAccessReview): "
        "couldn't get version/kind; json parse error: exceeded max depth "
        '({"apiVersion":"authorization.p ...)'
    )


@pytest.mark.parametrize(
    ("ctype", "message"),
    [
        ("application/merge-patch+json", "error decoding patch: invalid character '[' exceeded max depth"),
        ("application/strategic-merge-patch+json", "invalid character '[' exceeded max depth"),
    ],
)  # fmt: skip
def test_deep_patches(http: requests.Session, served: Server, ctype: str, message: str) -> None:
    body = ('{"data":{"a":' + nest(10_001) + "}}").encode()
    assert refused(http, served, "PATCH", CM + "/target", ctype, body) == message


def test_deep_json_patch(http: requests.Session, served: Server) -> None:
    body = ('[{"op":"add","path":"/data/x","value":' + nest(10_001) + "}]").encode()
    message = refused(http, served, "PATCH", CM + "/target", "application/json-patch+json", body)
    assert message == "error decoding patch: invalid character '[' exceeded max depth"


def test_deep_and_aliased_apply(http: requests.Session, served: Server) -> None:
    path, ctype = CM + "/target?fieldManager=m", "application/apply-patch+yaml"
    lead = "error decoding YAML: error converting YAML to JSON: yaml: "
    deep_json = cm("target", ',"data":' + nest(10_001))
    assert refused(http, served, "PATCH", path, ctype, deep_json) == (
        lead + "exceeded max depth of 10000"
    )
    deep_yaml = b"apiVersion: v1\nkind: ConfigMap\ndata: " + nest(10_001).encode() + b"\n"
    assert refused(http, served, "PATCH", path, ctype, deep_yaml) == (
        lead + "line 3: exceeded max depth of 10000"
    )
    assert refused(http, served, "PATCH", path, ctype, laughs()) == (
        lead + "document contains excessive aliasing"
    )


def test_deep_delete_options(http: requests.Session, served: Server) -> None:
    body = ('{"kind":"DeleteOptions","apiVersion":"v1","x":' + nest(10_001) + "}").encode()
    message = refused(http, served, "DELETE", CM + "/target", JSON, body)
    assert message == "couldn't get version/kind; json parse error: exceeded max depth"
    message = refused(http, served, "DELETE", CM + "/target", YAML, laughs("DeleteOptions"))
    assert message == "yaml: document contains excessive aliasing"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (laughs(), "yaml: document contains excessive aliasing"),
        (
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata: "
            + nest(100_000).encode(),
            "yaml: line 5: exceeded max depth of 10000",
        ),
        (
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  ~: a\n",
            'unsupported map key of type: %!s(<nil>), key: <nil>, value: "a"',
        ),
        (
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  ? [a, b]\n  : c\n",
            'yaml: invalid map key: []interface {}{"a", "b"}',
        ),
        (
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  a: !!int abc\n",
            "yaml: cannot decode !!str `abc` as a !!int",
        ),
        (
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  a: .inf\n",
            "json: unsupported value: +Inf",
        ),
        (
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  a: b: c\n",
            "yaml: line 6: mapping values are not allowed in this context",
        ),
    ],
    ids=["laughs", "deep", "null-key", "list-key", "bad-int", "inf", "syntax"],
)
def test_hostile_yaml_create(
    http: requests.Session, served: Server, body: bytes, problem: str
) -> None:
    assert refused(http, served, "POST", CM, YAML, body) == (
        f"{UNRECOGNIZED}{problem} {YAML_SUMMARY}"
    )
    assert http.get(served.url + CM + "/lol").status_code == 404


def test_large_yaml_bodies_parse_off_the_reactor(http: requests.Session, served: Server) -> None:
    """A 3 MB YAML body takes PyYAML seconds: it is parsed on a thread, so the server
    answers other requests meanwhile, and the body gets the answer a small one would."""
    items = b"".join(b"  - 1\n" for _ in range(500_000))
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  x:\n" + items
    (answer,) = answered_meanwhile(http, served, [("POST", CM, YAML, body)])
    assert (answer.status_code, answer.json()["reason"]) == (400, "BadRequest")
    assert answer.json()["message"].startswith(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "array into Go struct field ConfigMap.data of type string"
    )
    # A large valid body, with a key given twice: created, with kube's strict warning.
    pairs = b"".join(b"  k%d: v\n" % i for i in range(10_000))
    doc = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bigok\ndata:\n" + pairs
    made = http.post(served.url + CM, data=doc + b"  k7: again\n", headers={"Content-Type": YAML})
    assert made.status_code == 201, made.text[:300]
    assert len(made.json()["data"]) == 10_000 and made.json()["data"]["k7"] == "again"
    # yaml.v2's strict complaint, by line, as the reference words it for a YAML body
    assert made.headers["Warning"] == '299 - "line 10006: key \\"k7\\" already set in map"'


def test_large_json_writes_run_off_the_reactor(http: requests.Session, served: Server) -> None:
    """Every step of a write walks each of a large object's fields (decoding, ownership,
    patching): for bodies over 64 KiB they run on a thread, so the server answers others
    meanwhile, and each write gets the answer a small one would."""
    data = {f"k{i:05d}": "v" for i in range(20_000)}
    path = CM + "/large"
    apply = "application/apply-patch+yaml"
    writes = [
        ("POST", CM, JSON, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "large"}, "data": data}),
        ("PUT", path, JSON, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "large"}, "data": {**data, "k00000": "w"}}),
        ("PATCH", path, "application/merge-patch+json", {"data": {**data, "extra": "x"}}),
        ("PATCH", path + "?fieldManager=m&force=true", apply, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "large"}, "data": {"k00001": "m", "pad": "p" * 70_000}}),
        ("POST", CM, JSON, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"}, "data": {**data, "k00002": 5}}),
    ]  # fmt: skip
    answers = answered_meanwhile(
        http,
        served,
        [(method, where, ctype, orjson.dumps(body)) for method, where, ctype, body in writes],
    )
    assert [a.status_code for a in answers] == [201, 200, 200, 200, 400], answers[-1].text[:300]
    bad = answers[-1].json()
    assert (bad["reason"], bad["message"]) == (
        "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "number into Go struct field ConfigMap.data of type string",
    )
    final = http.get(served.url + path).json()
    assert len(final["data"]) == 20_002
    assert (final["data"]["k00000"], final["data"]["k00001"], final["data"]["extra"]) == (
        "v",
        "m",
        "x",
    )
    owners = [(e["manager"], e["operation"]) for e in final["metadata"]["managedFields"]]
    assert owners == [("m", "Apply"), ("python-requests", "Update")]  # kube sorts Apply first
    assert http.get(served.url + CM + "/bad").status_code == 404
    # Written as YAML and as a table on a thread too (large): the same object, the same list.
    as_yaml = http.get(served.url + path, headers={"Accept": YAML})
    assert as_yaml.headers["Content-Type"] == YAML
    assert yaml.safe_load(as_yaml.content) == final
    listed = http.get(served.url + CM, headers={"Accept": YAML})
    names = [item["metadata"]["name"] for item in yaml.safe_load(listed.content)["items"]]
    assert "large" in names and "target" in names
    table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    rows = http.get(served.url + CM, headers={"Accept": table}).json()["rows"]
    assert ["large", 20_002] in [row["cells"][:2] for row in rows]


def test_yaml_tags_and_documents(http: requests.Session, served: Server) -> None:
    doc = (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tags\ndata:\n  a: !foo 12\n"
        b"  b: !!binary aGVsbG8=\n  c: !!python/name:os.system\n"
        b"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\n"
    )
    made = http.post(served.url + CM, data=doc, headers={"Content-Type": YAML})
    assert made.status_code == 201, made.text
    assert made.json()["data"] == {"a": "12", "b": "hello", "c": ""}
    assert http.get(served.url + CM + "/second").status_code == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n","generation":1e400}}',
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
            "number 1e400 into Go struct field ObjectMeta.metadata.generation of type int64",
        ),
        (
            cm("n", ',"data":{"a":-Infinity}'),
            f"{UNRECOGNIZED}couldn't get version/kind; json parse error: invalid character 'I' "
            f"in numeric literal {SUMMARY}",
        ),
        (
            b"\xef\xbb\xbf" + cm("n"),
            f"{UNRECOGNIZED}couldn't get version/kind; json parse error: invalid character "
            "'\\ufeff' looking for beginning of value "
            "(efbbbf7b2261706956657273696f6e223a227631222c226b696e64223a22 ...)",
        ),
        # Go's scanner, as the reference words it (2026-12-06)
        (
            cm("n")[:-9],
            f"{UNRECOGNIZED}couldn't get version/kind; json parse error: unexpected end of JSON "
            f"input {SUMMARY}",
        ),
        (
            cm("n", ',"data":{"a":"\\q"}'),
            f"{UNRECOGNIZED}couldn't get version/kind; json parse error: invalid escape sequence "
            f"`\\q` in string {SUMMARY}",
        ),
        (
            cm("n", ',"data":{"a" 1}'),
            f"{UNRECOGNIZED}couldn't get version/kind; json parse error: invalid character '1' "
            f"after object key {SUMMARY}",
        ),
    ],
    ids=["1e400", "-Infinity", "BOM", "cut", "escape", "colon"],
)
def test_hostile_json_numbers_and_bom(
    http: requests.Session, served: Server, body: bytes, message: str
) -> None:
    assert refused(http, served, "POST", CM, JSON, body) == message
    assert http.get(served.url + CM + "/n").status_code == 404


def test_merge_patch_number_past_float64(http: requests.Session, served: Server) -> None:
    body = b'{"metadata":{"generation":1e400}}'
    message = refused(http, served, "PATCH", CM + "/target", "application/merge-patch+json", body)
    assert message == (
        "error decoding patch: json: cannot unmarshal number 1e400 into Go value of type float64"
    )


@pytest.mark.parametrize(
    ("ctype", "body", "message"),
    [
        # kube decodes patches with encoding/json v1's own scanner (reference, 2026-12-06)
        (
            "application/merge-patch+json",
            b'{"data":{"a":1.}}',
            "error decoding patch: invalid character '}' after decimal point in numeric literal",
        ),
        (
            "application/json-patch+json",
            b'[{"op":"add","path":"/data","value":nul',
            "error decoding patch: invalid character ' ' in literal null (expecting 'l')",
        ),
        (
            "application/strategic-merge-patch+json",
            b'{"data":{"a":"x\x11"}}',
            "invalid character '\\x11' in string literal",
        ),
    ],
    ids=["merge", "json", "strategic"],
)
def test_patch_syntax_errors_in_the_v1_scanners_words(
    http: requests.Session, served: Server, ctype: str, body: bytes, message: str
) -> None:
    assert refused(http, served, "PATCH", CM + "/target", ctype, body) == message
    assert "data" not in http.get(served.url + CM + "/target").json()


def test_invalid_text_is_replaced_as_go_does(http: requests.Session, served: Server) -> None:
    body = cm("text", ',"data":{"a":"@ ok","b":"x\\ud800y"}').replace(b"@", b"\xff")
    made = http.post(served.url + CM, data=body, headers={"Content-Type": JSON})
    assert made.status_code == 201, made.text
    assert made.json()["data"] == {"a": "\ufffd ok", "b": "x\ufffdy"}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            bytes.fromhex("d9d9f7a1646461746181") + b"\x81" * 100_000,
            "unable to determine group/version/kind: cbor: exceeded max nested level 200",
        ),
        (bytes.fromhex("d9d9f7a17afffffff06162"), "unable to determine group/version/kind: unexpected EOF"),
    ],
    ids=["deep", "short"],
)  # fmt: skip
def test_hostile_cbor(http: requests.Session, served: Server, body: bytes, problem: str) -> None:
    message = refused(http, served, "POST", CM, "application/cbor", body)
    assert message.startswith(f"{UNRECOGNIZED}{problem} (d9d9f7")


def test_protobuf_length_past_the_body(http: requests.Session, served: Server) -> None:
    body = b"k8s\x00\x0a\xff\xff\xff\x0fab"
    message = refused(http, served, "POST", CM, "application/vnd.kubernetes.protobuf", body)
    assert message == f"{UNRECOGNIZED}unexpected EOF (6b3873000affffff0f6162)"


BLOBS = "/apis/hostile.example.com/v1/namespaces/default/blobs"


@pytest.fixture(scope="module")
def blobs(http: requests.Session, served: Server) -> str:
    """A custom type whose spec keeps any JSON: the one place deep bodies are stored."""
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    manifest = crd_manifest(
        "hostile.example.com", "Blob", "blobs", versions=[version("v1", schema=schema)]
    )
    create_crd(http, served, manifest)
    return served.url + BLOBS


def blob(name: str, spec: str) -> bytes:
    return (
        f'{{"apiVersion":"hostile.example.com/v1","kind":"Blob","metadata":{{"name":"{name}"}},'
        f'"spec":{spec}}}'
    ).encode()


def test_custom_resource_numbers(http: requests.Session, served: Server, blobs: str) -> None:
    body = blob("f", '{"a":1e400}')
    assert refused(http, served, "POST", BLOBS, JSON, body) == (
        'Blob in version "v1" cannot be handled as a Blob: json: cannot unmarshal number 1e400 '
        "into Go value of type float64"
    )
    made = http.post(
        blobs, data=blob("big", '{"a":99999999999999999999}'), headers={"Content-Type": JSON}
    )
    assert made.status_code == 201, made.text
    assert made.json()["spec"] == {"a": 1e20}


def test_custom_resource_depth_bound(http: requests.Session, served: Server, blobs: str) -> None:
    """The deepest body this server stores (SAFE_DEPTH) round-trips every way it is read;
    one level more is refused with kube's answer."""
    deepest = SAFE_DEPTH - 1  # the body itself is one level
    made = http.post(blobs, data=blob("deepest", '{"a":' * deepest + "1" + "}" * deepest))
    assert made.status_code == 201, made.text
    applied = http.patch(
        blobs + "/deepest?fieldManager=m",
        data=blob("deepest", '{"b":' * deepest + "1" + "}" * deepest),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert applied.status_code == 200, applied.text
    for accept in (JSON, YAML, "application/cbor"):
        assert http.get(blobs, headers={"Accept": accept}).status_code == 200
        assert http.get(blobs + "/deepest", headers={"Accept": accept}).status_code == 200
    watched = http.get(blobs + "?watch=1&timeoutSeconds=1")
    assert watched.status_code == 200 and b"deepest" in watched.content
    body = blob("deeper", '{"a":' * (deepest + 1) + "1" + "}" * (deepest + 1))
    assert refused(http, served, "POST", BLOBS, JSON, body) == (
        "the object provided is unrecognized (must be of type Blob): couldn't get version/kind; "
        'json parse error: exceeded max depth ({"apiVersion":"hostile.example ...)'
    )


def _varint(n: int) -> bytes:
    out = b""
    while n > 0x7F:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def deep_crd_protobuf(depth: int) -> bytes:
    """A CRD in Protobuf whose schema nests ``not`` ``depth`` times (JSONSchemaProps is the
    one recursive message: field 28)."""
    props = _field(5, b"object")
    for _ in range(depth):
        props = _field(28, props)
    version = _field(1, b"v1") + b"\x10\x01\x18\x01" + _field(4, _field(1, props))
    names = _field(1, b"things") + _field(2, b"thing") + _field(4, b"Thing")
    spec = _field(1, b"pb.example.com") + _field(3, names) + _field(4, b"Namespaced")
    obj = _field(1, _field(1, b"things.pb.example.com")) + _field(2, spec + _field(7, version))
    kind = _field(1, b"apiextensions.platform.io/v1") + _field(2, b"CustomResourceDefinition")
    return b"k8s\x00" + _field(1, kind) + _field(2, obj)


@pytest.mark.parametrize("depth", [400, 5000])  # past SAFE_DEPTH; past recursion
def test_deep_protobuf(http: requests.Session, served: Server, depth: int) -> None:
    path = "/apis/apiextensions.platform.io/v1/customresourcedefinitions"
    body = deep_crd_protobuf(depth)
    message = refused(http, served, "POST", path, "application/vnd.kubernetes.protobuf", body)
    assert message == (
        "the object provided is unrecognized (must be of type CustomResourceDefinition): "
        f"proto: message nested too deeply ({body[:30].hex()} ...)"
    )
    assert http.get(served.url + path + "/things.pb.example.com").status_code == 404


def test_free_form_numbers_of_built_in_kinds(http: requests.Session, served: Server) -> None:
    """A CRD's ``example`` is free-form JSON: Go's interface{} numbers, as in kube."""
    path = "/apis/apiextensions.platform.io/v1/customresourcedefinitions?dryRun=All"
    schema = {"type": "object", "properties": {"n": {"type": "number", "example": 0}}}
    manifest = orjson.dumps(
        crd_manifest("numbers.example.com", "Num", "nums", versions=[version("v1", schema=schema)])
    )
    big = manifest.replace(b'"example":0', b'"example":99999999999999999999')
    made = http.post(served.url + path, data=big, headers={"Content-Type": JSON})
    assert made.status_code == 201, made.text
    props = made.json()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    assert props["n"]["example"] == 1e20
    past = manifest.replace(b'"example":0', b'"example":1e400')
    assert refused(http, served, "POST", path, JSON, past) == (
        'CustomResourceDefinition in version "v1" cannot be handled as a '
        "CustomResourceDefinition: json: cannot unmarshal number 1e400 into Go value of type "
        "float64"
    )


def test_yaml_numbers_of_custom_resources(
    http: requests.Session, served: Server, blobs: str
) -> None:
    huge = "1" + "0" * 400
    doc = (
        "apiVersion: hostile.example.com/v1\nkind: Blob\nmetadata:\n  name: ynum\n"
        f"spec:\n  big: 99999999999999999999\n  huge: {huge}\n"
    )
    made = http.post(blobs, data=doc.encode(), headers={"Content-Type": YAML})
    assert made.status_code == 201, made.text
    assert made.json()["spec"] == {"big": 1e20, "huge": huge}


def protobuf_cm(raw: bytes, kind: bytes = b"ConfigMap") -> bytes:
    return b"k8s\x00" + _field(1, _field(1, b"v1") + _field(2, kind)) + _field(2, raw)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # read past the envelope, kube names the body's type (reference, 2026-12-06)
        (
            protobuf_cm(_field(1, _field(1, b"pb"))[:-1]),
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: unexpected EOF',
        ),
        (
            protobuf_cm(b"\x08\x01"),
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: proto: wrong wireType '
            "= 0 for field ObjectMeta",
        ),
        (
            protobuf_cm(b"", b"Secr\t"),
            'Secr\t in version "v1" cannot be handled as a ConfigMap: no kind "Secr\\t" is '
            'registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"',
        ),
    ],
    ids=["cut", "wire-type", "kind"],
)
def test_protobuf_bodies_refused_for_their_type(
    http: requests.Session, served: Server, body: bytes, message: str
) -> None:
    assert refused(http, served, "POST", CM, "application/vnd.kubernetes.protobuf", body) == message
