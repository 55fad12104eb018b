"""Reading an object back into its Go type, as kube's JSON serializer does (the words
of each refusal are the reference kube-apiserver's)."""

from __future__ import annotations

import pytest

from platform_api.scheme.readback import OtherKind, ReadBackError, read_back
from platform_api.scheme.schemas import load_schemas

CONFIGMAP = ("", "v1", "ConfigMap")


def configmap(**fields: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, **fields}


def test_the_type_fills_in_a_missing_kind_and_drops_what_it_lacks() -> None:
    doc = {"metadata": {"name": "c"}, "data": {"a": "1", "b": None}, "spec": 1}
    assert read_back(doc, CONFIGMAP, load_schemas()) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"a": "1", "b": ""},
    }


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            configmap(data={"i": 1}),
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            configmap(kind="Nope"),
            'no kind "Nope" is registered for version "v1" in scheme '
            '"pkg/api/legacyscheme/scheme.go:30"',
        ),
        (
            configmap(apiVersion="apps/v1"),
            'no kind "ConfigMap" is registered for version "apps/v1" in scheme '
            '"pkg/api/legacyscheme/scheme.go:30"',
        ),
        (
            configmap(kind=5),
            "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go "
            "struct field .kind of type string",
        ),
    ],
)
def test_what_the_type_cannot_hold(doc: dict, message: str) -> None:
    with pytest.raises(ReadBackError) as caught:
        read_back(doc, CONFIGMAP, load_schemas())
    assert str(caught.value) == message


def test_strictly_unknown_fields_are_errors() -> None:
    with pytest.raises(ReadBackError) as caught:
        read_back(configmap(spec=1, zzz=2), CONFIGMAP, load_schemas(), strict=True)
    assert str(caught.value) == 'strict decoding error: unknown field "spec", unknown field "zzz"'


def test_another_kind_fails_its_conversion() -> None:
    with pytest.raises(OtherKind) as caught:
        read_back(configmap(kind="Secret", data={"a": "aGk="}), CONFIGMAP, load_schemas())
    assert str(caught.value) == "converting (v1.Secret) to (core.ConfigMap): unknown conversion"


def test_a_custom_resource_needs_only_a_kind() -> None:
    widget = ("example.com", "v1", "Widget")
    doc = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"x": 1}}
    assert read_back(doc, widget, load_schemas()) is doc
    with pytest.raises(ReadBackError) as caught:
        read_back(
            {"apiVersion": "example.com/v1", "spec": {"b": 1, "a": "<"}}, widget, load_schemas()
        )
    assert str(caught.value) == (
        'Object \'Kind\' is missing in \'{"apiVersion":"example.com/v1","spec":{"a":"\\u003c","b":1}}\''
    )
