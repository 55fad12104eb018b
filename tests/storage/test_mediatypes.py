"""Values in etcd: written in --storage-media-type, read back whatever they were written in."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.storage import mediatypes

CONFIGMAP: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "a", "namespace": "ns", "uid": "u", "labels": {"x": "y"}},
    "data": {"k": "v"},
}
WIDGET: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w"},
    "spec": {"size": 3, "ratio": 0.5},
}


@pytest.mark.parametrize("media_type", mediatypes.ALLOWED)
@pytest.mark.parametrize("obj", [CONFIGMAP, WIDGET], ids=["configmap", "custom"])
def test_every_media_type_reads_back_as_written(media_type: str, obj: dict[str, Any]) -> None:
    assert mediatypes.decode(mediatypes.encode(obj, media_type)) == obj


def test_protobuf_for_kinds_with_a_message_json_for_the_rest() -> None:
    assert mediatypes.encode(CONFIGMAP, mediatypes.PROTOBUF).startswith(b"k8s\x00")
    assert mediatypes.encode(WIDGET, mediatypes.PROTOBUF).startswith(b'{"apiVersion"')
    assert mediatypes.encode(CONFIGMAP, mediatypes.JSON).startswith(b"{")
    assert mediatypes.encode(CONFIGMAP, mediatypes.YAML).startswith(b"apiVersion: v1\n")


@pytest.mark.parametrize("value", [b"k8s\x00\xff\xff", b"{not json", b"- [unclosed"])
def test_an_undecodable_value_is_a_value_error(value: bytes) -> None:
    with pytest.raises(ValueError):
        mediatypes.decode(value)


_TYPE_META = (
    "couldn't get version/kind; json parse error: json: cannot unmarshal string into Go "
    'value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)


# What the reference kube-apiserver v1.36 answered a GET of each value put under its
# ConfigMaps with etcdctl (2026-12-05): a value neither Protobuf nor a JSON object that YAML
# does not read as an object goes through kube's last, base64-wrapped storage decoder,
# whose failure is the one reported; valid base64 is decoded again, without the wrapper.
@pytest.mark.parametrize(
    ("value", "message"),
    [
        (b"just words", "illegal base64 data at input byte 4"),
        (b"[1, 2]", "illegal base64 data at input byte 0"),
        (b"  [1]", "illegal base64 data at input byte 0"),
        (b"5", "illegal base64 data at input byte 0"),
        (b"abc", "illegal base64 data at input byte 0"),
        (b"justwords", "illegal base64 data at input byte 8"),
        (b"a===", "illegal base64 data at input byte 1"),
        (b"abc=d", "illegal base64 data at input byte 4"),
        (b"kind: 3\nmetadata: [1]\n", "illegal base64 data at input byte 4"),
        (b"true", "yaml: invalid leading UTF-8 octet"),
        (b"abcd", "yaml: invalid leading UTF-8 octet"),
        (b"a\nbcd", "yaml: invalid leading UTF-8 octet"),
        (b"ab==", _TYPE_META),
        (b"null", "Object 'Kind' is missing in 'null'"),  # with no type to read it into
        (
            b'{"kind":"ConfigMap","apiVersion":"v1","metadata":"x"}',
            "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type "
            "v1.ObjectMeta",
        ),
    ],
)
def test_a_value_that_is_no_object_says_so_as_go_would(value: bytes, message: str) -> None:
    """``etcdctl put`` stores any bytes: what reading them fails with reaches clients."""
    with pytest.raises(ValueError) as raised:
        mediatypes.decode(value)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            b"just words",
            "json: cannot unmarshal string into Go value of type map[string]interface {}",
        ),
        (b"[1, 2]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
    ],
)
def test_a_custom_resources_value_has_no_base64_fallback(value: bytes, message: str) -> None:
    """Only built-in kinds' storage decoders end with the base64-wrapped one."""
    with pytest.raises(ValueError) as raised:
        mediatypes.decode(value, builtin=False)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":5}}',
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of "
            "type string",
        ),
        (
            b'{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":"3"}}',
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of "
            "type int32",
        ),
    ],
)
def test_a_built_in_kind_in_text_is_decoded_into_its_type(value: bytes, message: str) -> None:
    """As kube's storage decodes a JSON value into its Go type: a wrong type is Go's
    error; unknown fields and nulls are dropped.  A custom resource is a map: kept."""
    with pytest.raises(ValueError) as raised:
        mediatypes.decode(value)
    assert str(raised.value) == message
    read = mediatypes.decode(
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":null},"extra":1}'
    )
    assert read == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
    widget = b'{"apiVersion":"example.com/v1","kind":"Widget","spec":{"size":"3"},"extra":1}'
    assert mediatypes.decode(widget) == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "spec": {"size": "3"},
        "extra": 1,
    }


_EMPTY = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {}}


@pytest.mark.parametrize(
    ("value", "read"),
    [
        (b"null", _EMPTY),
        (b"{}", _EMPTY),
        (b"kind: ConfigMap\ndata: {a: b}\n", _EMPTY),
        (b'{"kind":"ConfigMap","metadata":{"name":"n","uid":"u"},"data":{"a":"b"}}', _EMPTY),
        (
            b'{"apiVersion":"v1","metadata":{"name":"n"},"data":{"a":"b"}}',
            {
                "kind": "ConfigMap",
                "apiVersion": "v1",
                "metadata": {"name": "n"},
                "data": {"a": "b"},
            },
        ),
        (b'{"apiVersion":"v1"}', {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {}}),
    ],
)
def test_a_value_that_names_no_type_is_read_into_its_resources(
    value: bytes, read: dict[str, object]
) -> None:
    """As kube-apiserver v1.36 read these under /registry/configmaps (etcdctl put): the
    kind is the resource's, and with no apiVersion nothing of the value is kept (it is
    decoded into kube's internal version, whose fields have no JSON names)."""
    assert mediatypes.decode(value, typed=("v1", "ConfigMap")) == read


def test_null_metadata_is_the_zero_object_meta() -> None:
    assert mediatypes.decode(b'{"kind":"ConfigMap","metadata":null}') == {
        "kind": "ConfigMap",
        "metadata": {},
    }


def test_a_statefulset_read_from_protobuf_names_its_claim_templates_kind() -> None:
    """kube's conversion gives each volume claim template TypeMeta, first, which no
    Protobuf message carries: read back from etcd, a StatefulSet has it again (without
    it, an update compared the stored templates with defaulted ones and refused a
    ``kubectl set image`` as a change of a forbidden field)."""
    spec = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
        "volumeMode": "Filesystem",
    }
    claim = {"metadata": {"name": "data"}, "spec": spec, "status": {"phase": "Pending"}}
    typed = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", **claim}
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {"serviceName": "db", "volumeClaimTemplates": [typed]},
    }
    stored = mediatypes.encode(sts, mediatypes.PROTOBUF)
    assert stored.startswith(b"k8s\x00")
    read = mediatypes.decode(stored)
    assert read["spec"]["volumeClaimTemplates"] == [typed]
    assert list(read["spec"]["volumeClaimTemplates"][0])[:2] == ["kind", "apiVersion"]
