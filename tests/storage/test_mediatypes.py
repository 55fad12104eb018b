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
