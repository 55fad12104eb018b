"""JSON -> Protobuf -> JSON loses nothing, for every kind this server serves, as it serves it."""

from __future__ import annotations

import pathlib
from typing import Any

import orjson
import pytest

from platform_api.codec.protobuf import decode, encode, supports
from platform_api.codec.protobuf_wire import split_envelope
from platform_api.scheme.builtin import BUILTIN_TYPES
from platform_api.scheme.types import group_version, rebrand_group
from tests.codec.handmade import OBJECTS

KUBE = pathlib.Path(__file__).parent / "kube"
# Kinds kube serves under a subresource, with the fixture that shows them.
SUBRESOURCE_KINDS = {
    ("autoscaling/v1", "Scale"): "deployment-scale",
    ("v1", "Binding"): "binding",
    ("policy/v1", "Eviction"): "eviction",
    ("authentication.platform.io/v1", "TokenRequest"): "tokenrequest",
}

# Connect subresources' kinds: their options come in the query, never in a body.
CONNECT_OPTIONS = {
    "PodAttachOptions",
    "PodExecOptions",
    "PodPortForwardOptions",
    "PodProxyOptions",
    "ServiceProxyOptions",
    "NodeProxyOptions",
}


def branded(obj: dict[str, Any]) -> dict[str, Any]:
    """A kube fixture as this server writes it: ``*.platform.io`` in ``apiVersion``."""
    group, _, version = obj["apiVersion"].rpartition("/")
    return {**obj, "apiVersion": group_version(rebrand_group(group), version)}


def fixtures() -> dict[str, dict[str, Any]]:
    out = {name: branded(obj) for name, obj in OBJECTS.items()}
    for path in sorted(KUBE.glob("*.json")):
        if path.stem != "objects":
            out[path.stem] = branded(orjson.loads(path.read_bytes()))
    # TypeMeta that kube's JSON shows but no message carries (test_protobuf_kube).
    for template in out["statefulset"]["spec"]["volumeClaimTemplates"]:
        del template["kind"], template["apiVersion"]
    for item in out["partialobjectmetadatalist"]["items"]:
        del item["kind"], item["apiVersion"]
    return out


FIXTURES = fixtures()
BY_KIND = {(obj["apiVersion"], obj["kind"]): name for name, obj in FIXTURES.items()}


@pytest.mark.parametrize("rt", BUILTIN_TYPES, ids=lambda rt: f"{rt.api_version}/{rt.kind}")
def test_every_served_kind_has_a_message_and_a_fixture(rt: Any) -> None:
    assert supports(rt.api_version, rt.kind)
    assert supports(rt.api_version, rt.list_kind) == (rt.verbs != ("create",))  # reviews: none
    assert (rt.api_version, rt.kind) in BY_KIND
    for sub in rt.subresources:
        if sub.kind != rt.kind and sub.kind not in CONNECT_OPTIONS:
            api_version = group_version(sub.group, sub.version) if sub.version else "v1"
            assert supports(api_version, sub.kind)
            assert SUBRESOURCE_KINDS[(api_version, sub.kind)] in FIXTURES


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_round_trip(name: str) -> None:
    obj = FIXTURES[name]
    encoded = encode(obj)
    assert split_envelope(encoded)[:2] == (obj["apiVersion"], obj["kind"])
    decoded = decode(encoded)
    assert decoded == obj
    if name not in OBJECTS:  # kube's own JSON: same key order too
        assert orjson.dumps(decoded) == orjson.dumps(obj)


def test_list_of_every_item_kind_round_trips() -> None:
    for rt in BUILTIN_TYPES:
        item = dict(FIXTURES[BY_KIND[(rt.api_version, rt.kind)]])
        del item["kind"], item["apiVersion"]  # typed list items carry no TypeMeta
        listed = {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": {"resourceVersion": "7", "continue": "c", "remainingItemCount": 0},
            "items": [item, item],
        }
        if rt.verbs == ("create",):
            continue  # reviews have no list
        assert decode(encode(listed)) == listed


def test_absent_and_null_fields_round_trip_as_go_writes_them() -> None:
    cm = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}}
    assert decode(encode(cm)) == cm
    # Go's zero values: null is the zero time; an absent struct comes back as {}.
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"creationTimestamp": None}}
    assert decode(encode(pod)) == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {},
        "spec": {"containers": None},
        "status": {},
    }


def test_omitempty_zero_values_are_dropped_pointers_keep_theirs() -> None:
    deployment = {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "d", "generateName": "", "generation": 0},
        "spec": {"replicas": 0, "paused": False, "minReadySeconds": 0},
    }
    decoded = decode(encode(deployment))
    assert decoded["metadata"] == {"name": "d"}
    assert decoded["spec"]["replicas"] == 0
    assert "paused" not in decoded["spec"]
    assert "minReadySeconds" not in decoded["spec"]


def test_keys_come_back_in_go_field_order() -> None:
    cm = {"data": {"b": "2", "a": "1"}, "metadata": {"namespace": "n", "name": "c"}}
    decoded = decode(encode({"apiVersion": "v1", "kind": "ConfigMap", **cm}))
    assert list(decoded) == ["kind", "apiVersion", "metadata", "data"]
    assert list(decoded["metadata"]) == ["name", "namespace"]
    assert list(decoded["data"]) == ["b", "a"]  # map order is the sender's


def test_unknown_json_fields_are_dropped() -> None:
    cm = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "bogus": 1}, "x": 2}
    assert decode(encode(cm)) == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "c"},
    }
