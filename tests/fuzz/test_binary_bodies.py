"""Property tests of the binary body decoders (Protobuf, as kubectl writes, and CBOR):
any bytes, and any damage to a valid body, meet only the decoders' own errors, and the
whole decoding path of a write turns them into a Status."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from platform_api.authentication.user import UserInfo
from platform_api.codec import cbor, protobuf
from platform_api.context import Context
from platform_api.endpoints.body import decode_object
from platform_api.errors import StatusError
from platform_api.scheme.catalog import builtin_scheme

SCHEME = builtin_scheme()
CONFIGMAPS = SCHEME.lookup("", "v1", "configmaps")
PODS = SCHEME.lookup("", "v1", "pods")
PROTOBUF = "application/vnd.kubernetes.protobuf"
CBOR = "application/cbor"
_TEXT = st.text(max_size=8)
Obj = dict[str, Any]
ADMIN = UserInfo("admin", groups=("system:masters",))


def _configmap(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name or "x", "labels": {"a": "b"}},
        "data": data,
    }


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "ports": [{"containerPort": 80}],
                "resources": {"limits": {"cpu": "1"}},
            }
        ]
    },
}
VALID = [protobuf.encode(_configmap("cm", {"k": "v"})), protobuf.encode(POD)]


def _damaged(body: bytes, at: int, how: int, byte: int) -> bytes:
    """``body`` with one byte changed, dropped or added at ``at``, or cut there."""
    at %= len(body) + 1
    if how == 0:
        return body[:at] + bytes([byte]) + body[at + 1 :]
    if how == 1:
        return body[:at] + body[at + 1 :]
    if how == 2:
        return body[:at] + bytes([byte]) + body[at:]
    return body[:at]


def _write(body: bytes, media: str, rt: Any) -> Obj:
    """A write's whole decoding path: the object, or a StatusError."""
    return decode_object(
        body, media, rt, SCHEME.schemas, Context(ADMIN), "Strict", serves_cbor=True
    )


def _decode_protobuf(data: bytes, kind: str = "ConfigMap") -> None:
    try:
        out = protobuf.decode(data, "v1", kind)
    except protobuf.ProtobufError:
        return
    assert isinstance(out, dict)


@given(st.binary(max_size=200))
@example(b"k8s\x00")
@example(b"k8s\x00\n\x00")
@example(b"k8s\x00\x12\xff\xff\xff\xff\x0f")
def test_any_bytes_are_a_protobuf_error_or_an_object(data: bytes) -> None:
    _decode_protobuf(b"k8s\x00" + data)
    _decode_protobuf(data)


@given(
    st.sampled_from(VALID),
    st.integers(0, 10_000),
    st.integers(0, 3),
    st.integers(0, 255),
    st.integers(0, 255),
)
def test_a_damaged_protobuf_body_is_a_protobuf_error_or_an_object(
    body: bytes, at: int, how: int, byte: int, second: int
) -> None:
    damaged = _damaged(_damaged(body, at, how, byte), at * 7 + 3, how, second)
    _decode_protobuf(damaged, "Pod" if body is VALID[1] else "ConfigMap")


@given(_TEXT, st.dictionaries(_TEXT, st.text(max_size=20), max_size=4))
def test_a_configmap_comes_back_from_protobuf_as_written(name: str, data: dict[str, str]) -> None:
    obj = _configmap(name, data)
    back = protobuf.decode(protobuf.encode(obj), "v1", "ConfigMap")
    assert (back["metadata"]["name"], back.get("data") or {}) == (obj["metadata"]["name"], data)


@given(st.binary(max_size=200))
@example(b"\xd9\xd9\xf7")  # the self-described CBOR tag alone
@example(b"\xbf")  # an indefinite map never closed
@example(b"\x9b\xff\xff\xff\xff\xff\xff\xff\xff")  # an array claiming 2**64 - 1 items
def test_any_bytes_are_a_cbor_error_or_a_value(data: bytes) -> None:
    with contextlib.suppress(cbor.CBORError):
        cbor.decode(data)


@given(st.sampled_from([PROTOBUF, CBOR]), st.binary(max_size=120))
def test_a_write_of_any_binary_body_is_a_status_error_or_an_object(media: str, data: bytes) -> None:
    body = (b"k8s\x00" + data) if media == PROTOBUF else data
    try:
        obj = _write(body, media, CONFIGMAPS)
    except StatusError as e:
        assert 400 <= e.code < 500, e.message
        return
    assert obj["kind"] == "ConfigMap"


@given(st.integers(0, 10_000), st.integers(0, 3), st.integers(0, 255))
def test_a_damaged_pod_write_is_a_bad_request_or_a_pod(at: int, how: int, byte: int) -> None:
    try:
        obj = _write(_damaged(VALID[1], at, how, byte), PROTOBUF, PODS)
    except StatusError as e:
        assert 400 <= e.code < 500, e.message
        return
    assert obj["kind"] == "Pod"


def test_a_quantity_that_is_not_utf8_is_refused_in_kubes_words() -> None:
    """Found by the damaged-Pod property: Go's Quantity reads the bytes as a string and
    fails to parse them (it was a UnicodeDecodeError here, a 500); recorded from
    kube-apiserver v1.36."""
    container = {"name": "c", "image": "busybox", "resources": {"limits": {"cpu": "7"}}}
    pod = {**POD, "spec": {"containers": [container]}}
    body = protobuf.encode(pod)
    assert body.count(b"\n\x017") == 1  # the Quantity message: its string field, "7"
    try:
        _write(body.replace(b"\n\x017", b"\n\x01\x80"), PROTOBUF, PODS)
    except StatusError as e:
        assert (e.code, e.reason, e.message) == (
            400,
            "BadRequest",
            'Pod in version "v1" cannot be handled as a Pod: quantities must match the '
            "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        )
    else:
        raise AssertionError("decoded")
