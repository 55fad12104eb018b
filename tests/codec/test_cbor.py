"""CBOR as kube-apiserver v1.36 writes and reads it; error texts as its decoder words them."""

from __future__ import annotations

import cbor2
import pytest

from platform_api.codec.cbor import SELF_DESCRIBED, CBORError, decode, encode, watch_event
from platform_api.scheme.bytefields import byte_fields, for_kind

P = SELF_DESCRIBED


def cm(name: str, **fields: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


def test_writes_the_self_described_tag_and_strings_as_byte_strings() -> None:
    data = encode({"kind": "Status", "code": 404, "details": {}})
    # d9d9f7 | map(3) | bytes(4) "kind" | bytes(6) "Status" | bytes(4) "code" | 404 | ...
    assert data.hex() == (
        "d9d9f7a3"
        + "446b696e64"
        + "46537461747573"
        + "44636f6465"
        + "190194"
        + "4764657461696c73a0"
    )


def test_byte_fields_go_as_tag_22_over_the_raw_bytes() -> None:
    secret = {"kind": "Secret", "data": {"a": "AAFoaQ=="}, "type": "Opaque"}
    decoded = cbor2.loads(encode(secret, byte_fields("io.platform.api.core.v1.Secret")))
    assert decoded[b"data"] == {b"a": cbor2.CBORTag(22, b"\x00\x01hi")}
    assert decoded[b"type"] == b"Opaque"


def test_the_byte_fields_of_kinds_and_lists() -> None:
    assert for_kind("v1", "Secret") == {"data": {"*": True}}
    assert for_kind("v1", "ConfigMapList") == {"items": {"binaryData": {"*": True}}}
    assert for_kind("certificates.platform.io/v1", "CertificateSigningRequest") == {
        "spec": {"request": True},
        "status": {"certificate": True},
    }
    assert for_kind("v1", "Pod") is None
    assert for_kind("stable.example.com/v1", "CronTab") is None  # custom: unstructured


def test_other_values() -> None:
    data = encode({"list": [1, -2, None, True, False, 1.5, "x"]})
    assert cbor2.loads(data) == {b"list": (1, -2, None, True, False, 1.5, b"x")}


# Floats as kube-apiserver v1.36 wrote them in a custom resource's CBOR answer (gate on,
# JSON body in): the narrowest width that holds the value exactly, subnormals too.
KUBE_FLOATS = [
    (1.5, "f93e00"),
    (0.5, "f93800"),
    (65504.0, "f97bff"),  # float16's largest
    (-0.0, "f98000"),
    (2.0**-14, "f90400"),  # float16's smallest normal
    (2.0**-15, "f90200"),  # float16 subnormals
    (2.0**-20, "f90010"),
    (2.0**-24, "f90001"),
    (100000.5, "fa47c35040"),
    (3.4028234663852886e38, "fa7f7fffff"),  # float32's largest
    (2.0**-149, "fa00000001"),  # float32's smallest subnormal
    (0.1, "fb3fb999999999999a"),
    (1e-7, "fb3e7ad7f29abcaf48"),
    (1e300, "fb7e37e43c8800759c"),
    (5e-324, "fb0000000000000001"),
]


@pytest.mark.parametrize(("value", "wire"), KUBE_FLOATS)
def test_floats_take_the_narrowest_exact_width(value: float, wire: str) -> None:
    data = encode({"f": value})
    assert data.hex() == "d9d9f7a14166" + wire
    assert cbor2.loads(data) == {b"f": value}


def test_a_float_that_rounds_to_float16_infinity_is_float32() -> None:
    assert encode([65520.0]).hex() == "d9d9f781fa477ff000"


def test_watch_events_nest_the_object_with_its_own_tag() -> None:
    event = watch_event("ADDED", encode({"a": "b"}))
    assert event.hex() == (
        "d9d9f7a2" + "4474797065" + "45414444454" + "4" + "466f626a656374" + "d9d9f7a1" + "41614162"
    )
    assert cbor2.loads(event) == {b"type": b"ADDED", b"object": {b"a": b"b"}}


def test_reads_text_and_byte_strings_and_later_encoding_tags() -> None:
    body = cm(
        "c1",
        data={
            "text": "t",
            "bytes": b"b",
            "b64": cbor2.CBORTag(22, b"\x00\x01hi"),
            "b64url": cbor2.CBORTag(21, b"\x00\x01\xff"),
            "hex": cbor2.CBORTag(23, b"\x00\x01\xff"),
            "time": cbor2.CBORTag(0, "2020-01-01T00:00:00Z"),
            "other": cbor2.CBORTag(999, "x"),
            "bad": b"\xff\xfe",
        },
    )
    assert decode(P + cbor2.dumps(body))["data"] == {
        "text": "t",
        "bytes": "b",
        "b64": "AAFoaQ==",
        "b64url": "AAH_",
        "hex": "0001ff",
        "time": "2020-01-01T00:00:00Z",
        "other": "x",
        "bad": "\ufffd\ufffd",  # as Go's JSON shows a string's invalid bytes
    }


def test_the_self_described_tag_is_optional_and_maps_come_back_as_dicts() -> None:
    assert decode(cbor2.dumps({"a": [{"b": 1}]})) == {"a": [{"b": 1}]}
    assert decode(bytes.fromhex("d9d9f7a0")) == {}
    assert decode(bytes.fromhex("bf6161f5ff")) == {"a": True}  # indefinite length


def dup_kind() -> bytes:
    pairs = [("apiVersion", "v1"), ("kind", "ConfigMap"), ("kind", "ConfigMap")]
    return P + b"\xa3" + b"".join(cbor2.dumps(k) + cbor2.dumps(v) for k, v in pairs)


@pytest.mark.parametrize(
    ("data", "message", "late"),
    [
        (b"", "EOF", False),
        (P + b"\xa1\x63abc", "unexpected EOF", False),
        (dup_kind(), 'cbor: found duplicate map key "kind" at map element index 2', False),
        (
            P + cbor2.dumps(cm("x", data={"a": float("nan")})),
            "cbor: data item of cbor type primitives is not accepted by protocol: "
            "floating-point NaN",
            False,
        ),
        (
            P + cbor2.dumps(cm("x", data={"a": float("inf")})),
            "cbor: data item of cbor type primitives is not accepted by protocol: "
            "floating-point infinity",
            False,
        ),
        (
            P + cbor2.dumps(cm("x", data={"a": cbor2.CBORTag(2, b"\x01")})),
            "cbor: data item of cbor type tag is not accepted by protocol: bignum",
            False,
        ),
        (
            P + cbor2.dumps(cm("x", data={"a": cbor2.undefined})),
            "cbor: data item of cbor type primitives is not accepted by protocol: "
            "simple value 23 is not recognized",
            True,
        ),
        (P + b"\xa1\x62\xff\xfe\x61x", "cbor: invalid UTF-8 string", False),
        (
            P + cbor2.dumps(cm("c13")) + b"\x00",
            "cbor: 1 bytes of extraneous data starting at index 52",
            False,
        ),
        (
            P + cbor2.dumps(cm("x", data={1: "x"})),
            "cbor: cannot unmarshal positive integer into Go value of type string",
            True,
        ),
        (bytes.fromhex("81" * 500), "cbor: exceeded max nested level 200", False),
        (
            bytes.fromhex("a2416101616102"),
            'cbor: found duplicate map key "a" at map element index 1',
            False,
        ),
    ],
)
def test_refusals(data: bytes, message: str, late: bool) -> None:
    with pytest.raises(CBORError) as caught:
        decode(data)
    assert (str(caught.value), caught.value.late) == (message, late)


def test_shared_references_and_other_cbor2_extensions_are_plain_tags() -> None:
    # Tag 28/29 would build a cyclic list in cbor2; kube knows no such tags.
    assert decode(bytes.fromhex("d81c81d81d00")) == [0]
    assert decode(bytes.fromhex("c1fb41d954fc40000000")) == 1700000000.0  # epoch tag: content
