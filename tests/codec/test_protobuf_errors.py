"""Bad bodies and unsupported kinds: the error texts kube gives, and the wire's corner cases."""

from __future__ import annotations

import pytest

from platform_api.codec.protobuf import (
    PREFIX,
    NotRegisteredError,
    ProtobufError,
    decode,
    encode,
    supports,
)
from platform_api.codec.protobuf_values import varint


def envelope(api_version: bytes, kind: bytes, raw: bytes | None = None) -> bytes:
    meta = b"\x0a" + varint(len(api_version)) + api_version + b"\x12" + varint(len(kind)) + kind
    body = b"\x0a" + varint(len(meta)) + meta
    if raw is not None:
        body += b"\x12" + varint(len(raw)) + raw
    return PREFIX + body


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "empty data"),
        (PREFIX, "empty body"),
        (
            b"abcd",
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
        ),
        (PREFIX + b"\x0a\x0f\x0a\x02v1\x12\x09ConfigMap\x12\x03\x0a\x01", "unexpected EOF"),
        (
            envelope(b"v1", b""),
            "Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:\"v1\", Kind:\"\"}'",
        ),
        (
            envelope(b"", b"ConfigMap"),
            "Object 'apiVersion' is missing in 'runtime.TypeMeta{APIVersion:\"\", Kind:\"ConfigMap\"}'",
        ),
        (
            envelope(b"v1", b"Nopee"),
            'no kind "Nopee" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"',
        ),
        (
            envelope(b"v1", b"ConfigMap", b"\x00\x01"),
            "proto: ConfigMap: illegal tag 0 (wire type 0)",
        ),
        (envelope(b"v1", b"ConfigMap", b"\x10\x01"), "proto: wrong wireType = 0 for field Data"),
        (envelope(b"v1", b"ConfigMap", b"\x12\x05ab"), "unexpected EOF"),
        (envelope(b"v1", b"ConfigMap", b"\x0a\x02\x0a"), "unexpected EOF"),
    ],
)
def test_decode_errors(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError) as e:
        decode(body)
    assert str(e.value) == message


def test_the_request_type_fills_in_what_the_envelope_lacks() -> None:
    """kube's copyKindDefaults: a body without TypeMeta takes the URL's type."""
    body = PREFIX + b"\x0a\x02\x0a\x00" + b"\x12\x05\x0a\x03\x0a\x01a"
    assert decode(body, "v1", "ConfigMap") == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "a"},
    }


def test_unknown_fields_are_skipped_and_packed_numbers_read() -> None:
    unknown = b"\xf8\x07\x01" + b"\xfa\x07\x02hi" + b"\xfd\x07abcd" + b"\xf9\x07" + b"12345678"
    body = envelope(b"v1", b"ConfigMap", unknown + b"\x0a\x03\x0a\x01a")
    assert decode(body)["metadata"] == {"name": "a"}
    # PodPortForwardOptions.ports is repeated int32: gogo writes it unpacked, reads both.
    packed = b"\x0a\x03\x50\xac\x02"
    assert decode(envelope(b"v1", b"PodPortForwardOptions", packed))["ports"] == [80, 300]
    unpacked = b"\x08\x50\x08\xac\x02"
    assert decode(envelope(b"v1", b"PodPortForwardOptions", unpacked))["ports"] == [80, 300]


def test_encode_refuses_kinds_without_a_message() -> None:
    for api_version, kind in [
        ("meta.platform.io/v1", "Table"),
        ("example.com/v1", "Widget"),
        ("v1", ""),
    ]:
        assert not supports(api_version, kind)
        with pytest.raises(NotRegisteredError) as e:
            encode({"apiVersion": api_version, "kind": kind})
        assert (e.value.api_version, e.value.kind) == (api_version, kind)


def test_encode_reports_values_of_the_wrong_type() -> None:
    with pytest.raises(ProtobufError, match=r"^cannot encode ConfigMap as Protobuf: "):
        encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 5}})
    with pytest.raises(ProtobufError, match="RFC 3339"):
        encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"creationTimestamp": "x"}})


def test_kinds_in_every_group_version_and_unversioned_kinds() -> None:
    assert supports("apps/v1", "DeleteOptions")
    assert supports("meta.platform.io/v1", "DeleteOptions")
    assert supports("apps/v1", "WatchEvent")
    assert supports("meta.platform.io/v1", "PartialObjectMetadataList")
    assert supports("v1", "Status")
    assert supports("apps/v1", "Status")  # unversioned: decodes under any version
    assert supports("rbac.authorization.k8s.io/v1", "Role")  # upstream names work too


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_deeply_nested_bodies_are_refused() -> None:
    schema = b""
    for _ in range(5000):
        schema = field(28, schema)  # JSONSchemaProps.not
    version = field(4, field(1, schema))  # schema.openAPIV3Schema
    crd = field(2, field(7, version))  # spec.versions[0]
    body = envelope(b"apiextensions.platform.io/v1", b"CustomResourceDefinition", crd)
    with pytest.raises(ProtobufError, match=r"^proto: message nested too deeply$"):
        decode(body)
    shallow = field(2, field(7, field(4, field(1, field(28, b"")))))
    body = envelope(b"apiextensions.platform.io/v1", b"CustomResourceDefinition", shallow)
    version_out = decode(body)["spec"]["versions"][0]
    assert version_out["schema"] == {"openAPIV3Schema": {"not": {}}}


META = field(1, field(1, b"pbx"))  # ObjectMeta{name: pbx}
SELECTOR = field(2, field(1, field(1, b"app") + field(2, b"a")))
TEMPLATE = field(3, field(1, field(11, field(1, b"app") + field(2, b"a"))))


@pytest.mark.parametrize(
    ("raw", "kind", "message"),
    [
        # gogo's generated code: its checks in its order, Go's field names (reference)
        (META + field(2, b"\x30\x01"), "Pod", "proto: wrong wireType = 0 for field DNSPolicy"),
        (b"\x08\x01", "Pod", "proto: wrong wireType = 0 for field ObjectMeta"),
        (META + b"\x0c", "ConfigMap", "proto: ConfigMap: wiretype end group for non-group"),
        (META + b"\x7c", "ConfigMap", "proto: ConfigMap: wiretype end group for non-group"),
        (META + b"\x7b\x08\x01", "ConfigMap", "unexpected EOF"),  # a group never closed
        (META + b"\x7b\x0f\x7c", "ConfigMap", "proto: illegal wireType 7"),
        # a map entry reads within the whole message; the next starts where it said it ends
        (META + b"\x1a\x05\x0a\x01b\x12\x02\x00\x01", "ConfigMap", "proto: ConfigMap: illegal tag 0 (wire type 0)"),
        (META + b"\x12\x04\x0a\x01k\x1a\x05abcdefg", "ConfigMap", "unexpected EOF"),
        (META + b"\x12" + varint(1 << 63) + b"ab", "ConfigMap", "proto: negative length found during unmarshaling"),
        (META + b"\x12" + varint((1 << 63) - 1) + b"ab", "ConfigMap", "proto: negative length found during unmarshaling"),
        (META + varint(1 << 34) + b"\x01", "ConfigMap", "proto: ConfigMap: illegal tag -2147483648 (wire type 17179869184)"),
    ],
)  # fmt: skip
def test_decode_errors_as_gogo_finds_them(raw: bytes, kind: str, message: str) -> None:
    with pytest.raises(ProtobufError) as e:
        decode(envelope(b"v1", kind.encode(), raw))
    assert str(e.value) == message
    assert e.value.typed == ("v1", kind)  # read past the envelope: kube names its type


def test_errors_before_the_type_is_read_name_none() -> None:
    with pytest.raises(ProtobufError) as e:
        decode(PREFIX + b"\x0a\x05\x0a\x02v1")
    assert (str(e.value), e.value.typed) == ("unexpected EOF", None)


def test_what_gogo_takes_as_kube_stores_it() -> None:
    """As the reference stored each (dry run): a closed group skipped, a key under another
    wire type, a message said twice merged, an int32 losing the bits past 32."""
    group = META + b"\x7b\x08\x01\x7c" + field(2, field(1, b"k") + field(2, b"v"))
    assert decode(envelope(b"v1", b"ConfigMap", group))["data"] == {"k": "v"}
    varint_key = META + field(2, b"\x08\x01a\x12\x01b")
    assert decode(envelope(b"v1", b"ConfigMap", varint_key))["data"] == {"a": "b"}
    twice = META + field(1, field(11, field(1, b"l") + field(2, b"x")))
    metadata = decode(envelope(b"v1", b"ConfigMap", twice))["metadata"]
    assert (metadata["name"], metadata["labels"]) == ("pbx", {"l": "x"})
    for replicas, read in (((1 << 32) + 3, 3), ((1 << 64) - 2, -2)):
        spec = field(2, b"\x08" + varint(replicas) + SELECTOR + TEMPLATE)
        body = envelope(b"apps/v1", b"Deployment", META + spec)
        assert decode(body)["spec"]["replicas"] == read


def test_typemeta_said_twice_is_merged() -> None:
    body = PREFIX + field(1, field(1, b"v1") + field(2, b"Nope")) + field(1, field(1, b"v2"))
    with pytest.raises(NotRegisteredError) as e:
        decode(body + field(2, META))
    assert e.value.typed == ("v2", "Nope")
