"""FieldsV1 encoding and path strings."""

from __future__ import annotations

import pytest

from platform_api.fieldmanager.fieldpath import from_fields_v1, path_string, to_fields_v1


def test_members_with_children_carry_a_dot_first() -> None:
    paths = {
        ("f:spec", "f:containers", 'k:{"name":"a"}'),
        ("f:spec", "f:containers", 'k:{"name":"a"}', "f:image"),
        ("f:spec", "f:containers", 'k:{"name":"a"}', "f:name"),
    }
    assert to_fields_v1(paths) == {
        "f:spec": {"f:containers": {'k:{"name":"a"}': {".": {}, "f:image": {}, "f:name": {}}}}
    }


def test_sibling_order_is_fields_keys_values_indexes() -> None:
    paths = {("i:10",), ("i:2",), ('v:"b"',), ('v:"a"',), ('k:{"a":1}',), ("f:z",), ("f:a",)}
    assert list(to_fields_v1(paths)) == [
        "f:a",
        "f:z",
        'k:{"a":1}',
        'v:"a"',
        'v:"b"',
        "i:2",
        "i:10",
    ]


def test_round_trip() -> None:
    fields = {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}
    assert to_fields_v1(from_fields_v1(fields)) == fields


def test_invalid_element_is_refused() -> None:
    with pytest.raises(ValueError):
        from_fields_v1({"k:{not json": {}})
    with pytest.raises(ValueError):
        from_fields_v1({"f:a": 1})
    assert from_fields_v1({"x:y": {}}) == set()  # an unknown type is dropped (SMD)


def test_path_strings() -> None:
    assert path_string(("f:data", "f:a")) == ".data.a"
    key = 'k:{"containerPort":80,"protocol":"TCP"}'
    assert path_string(("f:ports", key, "f:name")) == '.ports[containerPort=80,protocol="TCP"].name'
    assert path_string(("f:finalizers", 'v:"x"')) == '.finalizers[="x"]'
    assert path_string(("f:args", "i:3")) == ".args[3]"
