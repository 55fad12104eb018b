"""Protobuf bytes written by a real kube-apiserver v1.36 decode to its own JSON, key for key.

The fixtures in ``kube/`` were captured by ``kube/capture.py``: each object read once as
JSON and once as Protobuf at the same resourceVersion.  The comparison is of the JSON
text (orjson, same key order), so omitted vs zero values, ``null`` vs absent, Go's field
order and every special type must come out exactly as kube writes them.
"""

from __future__ import annotations

import pathlib
from typing import Any

import orjson
import pytest

from platform_api.codec.protobuf import (
    PREFIX,
    decode,
    decode_watch_event,
    encode,
    encode_watch_event,
    read_frames,
)
from platform_api.codec.protobuf_wire import split_envelope

KUBE = pathlib.Path(__file__).parent / "kube"
NAMES = sorted(p.stem for p in KUBE.glob("*.pb") if not p.stem.startswith("watch"))


def load(name: str) -> tuple[dict[str, Any], bytes]:
    return orjson.loads((KUBE / f"{name}.json").read_bytes()), (KUBE / f"{name}.pb").read_bytes()


def kube_json(name: str) -> dict[str, Any]:
    """Kube's JSON, less what its Protobuf cannot carry (see the tests below)."""
    obj, _ = load(name)
    if name == "partialobjectmetadatalist":
        for item in obj["items"]:  # TypeMeta of list items is not in the message
            del item["kind"], item["apiVersion"]
    if name == "statefulset":  # defaulted TypeMeta of the claim templates, likewise
        for template in obj["spec"]["volumeClaimTemplates"]:
            del template["kind"], template["apiVersion"]
    return obj


def canonical(name: str, obj: dict[str, Any]) -> bytes:
    if name == "selfsubjectrulesreview":  # kube lists these rules in map order
        for key in ("resourceRules", "nonResourceRules"):
            obj["status"][key].sort(key=orjson.dumps)
    if name == "partialobjectmetadatalist":  # the list was read twice, at two revisions
        obj["metadata"].pop("resourceVersion")
    return orjson.dumps(obj)


def test_the_fixtures_cover_the_captured_set() -> None:
    assert len(NAMES) == 72
    assert all((KUBE / f"{name}.json").exists() for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_kube_protobuf_decodes_to_kube_json(name: str) -> None:
    _, pb = load(name)
    assert canonical(name, decode(pb)) == canonical(name, kube_json(name))


@pytest.mark.parametrize("name", NAMES)
def test_json_round_trips_through_protobuf(name: str) -> None:
    obj = kube_json(name)
    encoded = encode(obj)
    assert encoded.startswith(PREFIX)
    assert orjson.dumps(decode(encoded)) == orjson.dumps(obj)


@pytest.mark.parametrize("name", NAMES)
def test_envelope_matches_kube(name: str) -> None:
    obj, pb = load(name)
    ours = encode(kube_json(name))
    assert split_envelope(ours)[:2] == split_envelope(pb)[:2] == (obj["apiVersion"], obj["kind"])
    assert ours.endswith(b"\x1a\x00\x22\x00")  # contentEncoding and contentType, empty


def test_typemeta_of_list_items_and_claim_templates_is_lost_as_in_kube() -> None:
    decoded = decode(load("statefulset")[1])
    assert decoded["spec"]["volumeClaimTemplates"][0]["metadata"] == {"name": "data"}
    assert "kind" not in decoded["spec"]["volumeClaimTemplates"][0]
    items = decode(load("partialobjectmetadatalist")[1])["items"]
    assert list(items[0]) == ["metadata"]


def test_kube_writes_go_zero_values_that_the_decoder_drops() -> None:
    """gogo writes every non-pointer scalar; omitempty ones must not reach the JSON."""
    _, pb = load("configmap-empty")
    assert b"\x12\x00" in pb  # metadata.generateName = ""
    assert decode(pb)["metadata"] == kube_json("configmap-empty")["metadata"]
    assert "generateName" not in decode(pb)["metadata"]


def test_special_values_as_kube_writes_them() -> None:
    pod = decode(load("pod")[1])
    container = pod["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"cpu": "500m", "memory": "128Mi"}
    assert container["livenessProbe"]["httpGet"]["port"] == "http"  # IntOrString, string
    assert container["readinessProbe"]["tcpSocket"]["port"] == 80  # IntOrString, number
    assert pod["spec"]["volumes"][0] == {
        "name": "data",
        "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"},
    }  # VolumeSource is embedded: its fields sit beside "name"
    lease = decode(load("lease")[1])
    assert lease["spec"]["acquireTime"] == "2024-01-02T03:04:05.123456Z"  # MicroTime
    secret = decode(load("secret")[1])
    assert secret["data"]["empty"] == ""  # []byte, base64
    assert secret["data"]["password"] == "c2VjcmV0"
    review = decode(load("subjectaccessreview")[1])
    assert review["spec"]["extra"] == {"empty": [], "scopes": ["a", "b"]}  # ExtraValue
    rc = decode(load("replicationcontroller")[1])
    assert rc["spec"]["replicas"] == 0  # a pointer keeps its zero
    role = decode(load("role")[1])
    assert role["rules"] is None  # no omitempty: Go's nil slice
    empty = decode(load("ingressclass-list-empty")[1])
    assert empty["items"] == []  # lists: [] as kube's JSON writes it


def test_custom_resource_definition_schema_unions() -> None:
    crd = decode(load("customresourcedefinition")[1])
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    props = props["properties"]
    assert props["strict"]["additionalProperties"] is False
    assert props["labels"]["additionalProperties"] == {"type": "string"}
    assert props["tags"]["items"] == {"type": "string"}
    assert props["size"]["default"] == 1  # raw JSON
    assert props["size"]["maximum"] == 10.5  # double
    assert props["ratio"]["minimum"] == -1.5
    assert props["port"]["x-kubernetes-int-or-string"] is True


def test_controller_revision_raw_extension() -> None:
    revision = decode(load("controllerrevision")[1])
    assert revision["data"]["list"] == [1, 2.5, "x", None, True]


def test_kube_watch_stream() -> None:
    frames = read_frames((KUBE / "watch-configmaps.pb").read_bytes())
    events = [decode_watch_event(frame) for frame in frames]
    assert [(t, o["metadata"].get("name")) for t, o in events] == [
        ("ADDED", "cfg"),
        ("ADDED", "cfg-empty"),
        ("BOOKMARK", None),
        ("ADDED", "watched"),
        ("DELETED", "watched"),
    ]
    assert orjson.dumps(events[0][1]) == orjson.dumps(kube_json("configmap"))
    bookmark = events[2][1]
    assert bookmark["kind"] == "ConfigMap"
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    for (event_type, obj), frame in zip(events, frames, strict=True):
        ours = encode_watch_event(event_type, obj)
        assert int.from_bytes(ours[:4], "big") == len(ours) - 4
        assert decode_watch_event(ours[4:]) == (event_type, obj)
        assert decode_watch_event(frame) == decode_watch_event(ours[4:])
