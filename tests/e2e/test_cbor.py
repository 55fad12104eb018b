"""CBOR on the wire (gate CBORServingAndStorage): kube v1.36's answers, byte for byte where
they are fixed, and 415/406 while the gate is off."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import cbor2
import pytest
import requests

from tests.e2e.answers import status
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import crd_manifest, create_crd, crontab

P = b"\xd9\xd9\xf7"
CBOR = "application/cbor"
CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server(
        tmp_path_factory.mktemp("cbor") / "data", "--feature-gates=CBORServingAndStorage=true"
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin_cbor(gated: Server) -> requests.Session:
    return session_for(gated, cert=gated.admin_cert)


def body(obj: Any) -> bytes:
    return P + cbor2.dumps(obj)


def cm(name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


def plain(value: Any) -> Any:
    """What a CBOR answer says, with byte strings read as text (as kube's clients do)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, dict) or hasattr(value, "items"):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def test_create_get_and_list_in_cbor(gated: Server, admin_cbor: requests.Session) -> None:
    headers = {"Content-Type": CBOR, "Accept": CBOR}
    r = admin_cbor.post(gated.url + CM, data=body(cm("c1", data={"a": "b"})), headers=headers)
    assert (r.status_code, r.headers["Content-Type"]) == (201, CBOR)
    assert r.content.startswith(P + b"\xa4")  # self-described; a map of four
    created = cbor2.loads(r.content)
    assert created[b"data"] == {b"a": b"b"}  # strings as byte strings, keys too
    r = admin_cbor.get(gated.url + CM + "/c1", headers={"Accept": CBOR})
    assert plain(cbor2.loads(r.content)) == plain(created)
    r = admin_cbor.get(gated.url + CM, headers={"Accept": CBOR})
    listed = plain(cbor2.loads(r.content))
    assert (listed["kind"], [i["metadata"]["name"] for i in listed["items"]]) == (
        "ConfigMapList",
        ["c1"],
    )
    r = admin_cbor.put(
        gated.url + CM + "/c1", data=body(cm("c1", data={"a": "c"})), headers={"Content-Type": CBOR}
    )
    assert (r.status_code, r.json()["data"]) == (200, {"a": "c"})


def test_secret_bytes_travel_raw(gated: Server, admin_cbor: requests.Session) -> None:
    secrets = gated.url + "/api/v1/namespaces/default/secrets"
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s1"},
        "data": {"a": cbor2.CBORTag(22, b"\x00\x01hi")},
    }
    r = admin_cbor.post(secrets, data=body(secret), headers={"Content-Type": CBOR})
    assert (r.status_code, r.json()["data"]) == (201, {"a": "AAFoaQ=="})
    r = admin_cbor.get(secrets + "/s1", headers={"Accept": CBOR})
    assert cbor2.loads(r.content)[b"data"] == {b"a": cbor2.CBORTag(22, b"\x00\x01hi")}


def test_watch_is_a_cbor_sequence(gated: Server, admin_cbor: requests.Session) -> None:
    admin_cbor.post(gated.url + CM, json=cm("w1"))
    r = admin_cbor.get(
        gated.url + CM,
        params={"watch": "1", "timeoutSeconds": "1", "fieldSelector": "metadata.name=w1"},
        headers={"Accept": CBOR},
    )
    assert (r.status_code, r.headers["Content-Type"]) == (200, "application/cbor-seq")
    assert r.content.startswith(P + b"\xa2\x44type\x45ADDED\x46object" + P)
    decoder = cbor2.CBORDecoder(io.BytesIO(r.content))
    event = plain(decoder.decode())
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "w1")


def test_apply_and_delete_in_cbor(gated: Server, admin_cbor: requests.Session) -> None:
    url = gated.url + CM + "/applied"
    apply = {"Content-Type": "application/apply-patch+cbor"}
    r = admin_cbor.patch(url, data=body(cm("applied", data={"x": "y"})), headers=apply)
    assert r.status_code == 422  # the field manager is required, as for YAML
    r = admin_cbor.patch(
        url + "?fieldManager=me", data=body(cm("applied", data={"x": "y"})), headers=apply
    )
    assert (r.status_code, r.json()["data"]) == (201, {"x": "y"})
    assert r.json()["metadata"]["managedFields"][0]["operation"] == "Apply"
    r = admin_cbor.patch(url + "?fieldManager=me", data=body([1]), headers=apply)
    assert r.json() == status(
        400,
        "BadRequest",
        "error decoding YAML: cbor: cannot unmarshal array into Go value of type "
        "map[string]interface {}",
    )
    r = admin_cbor.patch(
        url, data=body({"data": {}}), headers={"Content-Type": "application/merge-patch+cbor"}
    )
    assert r.json() == {
        **status(415, "UnsupportedMediaType", "415: Unsupported Media Type"),
        "details": {},
    }
    options = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    r = admin_cbor.delete(url, data=body(options), headers={"Content-Type": CBOR, "Accept": CBOR})
    deleted = plain(cbor2.loads(r.content))
    assert (r.status_code, deleted["kind"], deleted["status"]) == (200, "Status", "Success")


def test_errors_are_answered_in_cbor_but_406_in_json(
    gated: Server, admin_cbor: requests.Session
) -> None:
    r = admin_cbor.get(gated.url + CM + "/nope", headers={"Accept": CBOR})
    assert (r.status_code, r.headers["Content-Type"]) == (404, CBOR)
    assert plain(cbor2.loads(r.content))["message"] == 'configmaps "nope" not found'
    r = admin_cbor.get(gated.url + CM, headers={"Accept": CBOR + ";as=Table;g=meta.k8s.io;v=v1"})
    assert (r.status_code, r.headers["Content-Type"]) == (406, "application/json")
    assert r.json()["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.platform.protobuf, application/cbor"
    )
    r = admin_cbor.post(gated.url + CM, data=b"x", headers={"Content-Type": "text/plain"})
    assert r.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.platform.protobuf, application/cbor"
    )


def duplicate_kind() -> bytes:
    pairs = [("apiVersion", "v1"), ("kind", "ConfigMap"), ("kind", "ConfigMap")]
    return P + b"\xa3" + b"".join(cbor2.dumps(k) + cbor2.dumps(v) for k, v in pairs)


BAD = [
    (
        duplicate_kind(),
        "the object provided is unrecognized (must be of type ConfigMap): unable to determine "
        'group/version/kind: cbor: found duplicate map key "kind" at map element index 2 '
        "(d9d9f7a36a61706956657273696f6e627631646b696e6469436f6e666967 ...)",
    ),
    (
        body(cm("c3", data={"a": float("nan")})),
        "the object provided is unrecognized (must be of type ConfigMap): unable to determine "
        "group/version/kind: cbor: data item of cbor type primitives is not accepted by "
        "protocol: floating-point NaN (d9d9f7a46a61706956657273696f6e627631646b696e6469436f6e666967 ...)",
    ),
    (
        body(cm("c4", data={"a": 1.5})),
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal '
        "primitives into Go struct field v1.ConfigMap.data of type string",
    ),
    (
        P + b"\xa1\x63abc",
        "the object provided is unrecognized (must be of type ConfigMap): unable to determine "
        "group/version/kind: unexpected EOF (d9d9f7a163616263)",
    ),
    (
        body(cm("c10", data={"a": cbor2.undefined})),
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: data item of cbor type '
        "primitives is not accepted by protocol: simple value 23 is not recognized",
    ),
    (
        body([1, 2]),
        "the object provided is unrecognized (must be of type ConfigMap): unable to determine "
        "group/version/kind: cbor: cannot unmarshal array into Go value of type v1.TypeMeta "
        "(cannot decode CBOR array to struct without toarray option) (d9d9f7820102)",
    ),
    (
        b"",
        "the object provided is unrecognized (must be of type ConfigMap): unable to determine "
        "group/version/kind: EOF (<empty>)",
    ),
]


@pytest.mark.parametrize(("data", "message"), BAD)
def test_undecodable_bodies(
    gated: Server, admin_cbor: requests.Session, data: bytes, message: str
) -> None:
    def stored() -> list[tuple[str, str]]:
        # The items, not the list's resourceVersion: controllers may write elsewhere.
        items = admin_cbor.get(gated.url + CM).json()["items"]
        return [(i["metadata"]["name"], i["metadata"]["resourceVersion"]) for i in items]

    before = stored()
    r = admin_cbor.post(gated.url + CM, data=data, headers={"Content-Type": CBOR})
    assert r.json() == status(400, "BadRequest", message)
    assert stored() == before


def test_unknown_fields_by_position(gated: Server, admin_cbor: requests.Session) -> None:
    headers = {"Content-Type": CBOR}
    r = admin_cbor.post(
        gated.url + CM + "?fieldValidation=Strict", data=body(cm("c6", bogus=1)), headers=headers
    )
    assert r.json() == status(
        400,
        "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        "cbor: found unknown field at map element index 3",
    )
    r = admin_cbor.post(
        gated.url + CM + "?fieldValidation=Warn", data=body(cm("c7", bogus=1)), headers=headers
    )
    assert r.status_code == 201
    assert r.headers["Warning"] == '299 - "cbor: found unknown field at map element index 3"'


def test_custom_resources_in_cbor(gated: Server, admin_cbor: requests.Session) -> None:
    group = "cbor.example.com"
    create_crd(admin_cbor, gated, crd_manifest(group))
    url = f"{gated.url}/apis/{group}/v1/namespaces/default/crontabs"
    item = {**crontab("c1", group), "bogus": 1}
    r = admin_cbor.post(
        url + "?fieldValidation=Strict",
        data=body(item),
        headers={"Content-Type": CBOR, "Accept": CBOR},
    )
    # kube's custom-resource decoder prunes unknown fields of CBOR bodies without a word.
    assert (r.status_code, r.headers.get("Warning")) == (201, None)
    created = plain(cbor2.loads(r.content))
    assert "bogus" not in created and created["kind"] == "CronTab"


def test_without_the_gate_cbor_is_refused(server: Server, admin: requests.Session) -> None:
    r = admin.post(server.url + CM, data=body(cm("off")), headers={"Content-Type": CBOR})
    assert r.json() == status(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.platform.protobuf",
    )
    r = admin.get(server.url + CM, headers={"Accept": CBOR})
    assert (r.status_code, r.headers["Content-Type"]) == (406, "application/json")
    r = admin.patch(
        server.url + CM + "/off?fieldManager=m",
        data=body(cm("off")),
        headers={"Content-Type": "application/apply-patch+cbor"},
    )
    assert (r.status_code, r.json()["message"]) == (415, "415: Unsupported Media Type")
