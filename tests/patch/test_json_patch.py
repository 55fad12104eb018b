"""JSON Patch with gopkg.in/evanphx/json-patch.v4's semantics, each case recorded from
kube-apiserver v1.36 (a ConfigMap or Namespace patched with ``application/json-patch+json``)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.errors import StatusError
from platform_api.patch.json_patch import JSONPatchError, apply, check_operations, decode


def patched(doc: Any, *operations: dict[str, Any]) -> Any:
    return apply(doc, decode(list(operations)))


def test_replace_of_a_missing_key_adds_it() -> None:
    doc = {"data": {"a": "1"}}
    assert patched(doc, {"op": "replace", "path": "/data/b", "value": "2"}) == {
        "data": {"a": "1", "b": "2"}
    }


def test_add_without_a_value_adds_null() -> None:
    assert patched({"data": {}}, {"op": "add", "path": "/data/z"}) == {"data": {"z": None}}


def test_tokens_unescape_only_tilde_one_and_zero() -> None:
    doc: dict[str, Any] = {"data": {}}
    patched(doc, {"op": "add", "path": "/data/a~2", "value": "x"})
    patched(doc, {"op": "add", "path": "/data/b~", "value": "y"})
    patched(doc, {"op": "add", "path": "/data/c~1d~0e", "value": "z"})
    assert doc == {"data": {"a~2": "x", "b~": "y", "c/d~e": "z"}}


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        ("00", ["x", "a", "b"]),
        ("+1", ["a", "x", "b"]),
        ("-1", ["a", "b", "x"]),
        ("2", ["a", "b", "x"]),
    ],
)
def test_array_indexes_read_as_go_atoi(index: str, expected: list[str]) -> None:
    doc = {"list": ["a", "b"]}
    assert patched(doc, {"op": "add", "path": f"/list/{index}", "value": "x"}) == {"list": expected}


def test_negative_indexes_count_from_the_end() -> None:
    doc = {"list": ["a", "b", "c"]}
    patched(doc, {"op": "remove", "path": "/list/-1"})
    patched(doc, {"op": "replace", "path": "/list/-2", "value": "A"})
    assert doc == {"list": ["A", "b"]}


MISSING = "missing value"
BAD_INDEX = "invalid index referenced"


@pytest.mark.parametrize(
    ("op", "message"),
    [  # gopkg.in/evanphx/json-patch.v4's words, each wrapped as its operation wraps it
        (
            {"op": "add", "path": "/list/3", "value": 1},
            f"error in add for path: '/list/3': Unable to access invalid index: 3: {BAD_INDEX}",
        ),
        (
            {"op": "remove", "path": "/list/2"},
            f"error in remove for path: '/list/2': Unable to access invalid index: 2: {BAD_INDEX}",
        ),
        (
            {"op": "remove", "path": "/list/-3"},
            f"error in remove for path: '/list/-3': Unable to access invalid index: -3: {BAD_INDEX}",
        ),
        (
            {"op": "add", "path": "/list/x", "value": 1},
            "error in add for path: '/list/x': value was not a proper array index: 'x': "
            'strconv.Atoi: parsing "x": invalid syntax',
        ),
        (
            {"op": "remove", "path": "/list/99999999999999999999"},
            "error in remove for path: '/list/99999999999999999999': strconv.Atoi: parsing "
            '"99999999999999999999": value out of range',
        ),
        (
            {"op": "remove", "path": "/data/none"},
            f"error in remove for path: '/data/none': Unable to remove nonexistent key: none: {MISSING}",
        ),
        (
            {"op": "add", "path": "/no/such", "value": 1},
            f'add operation does not apply: doc is missing path: "/no/such": {MISSING}',
        ),
        (
            {"op": "add", "path": "", "value": 1},
            f'add operation does not apply: doc is missing path: "": {MISSING}',
        ),
        (
            {"op": "replace", "path": "/no/such", "value": 1},
            f"replace operation does not apply: doc is missing path: /no/such: {MISSING}",
        ),
        (
            {"op": "replace", "path": "/list/5", "value": 1},
            f"replace operation does not apply: doc is missing key: /list/5: {MISSING}",
        ),
        (
            {"op": "move", "from": "/data/none", "path": "/data/b"},
            f"error in move for path: 'none': Unable to remove nonexistent key: none: {MISSING}",
        ),
        (
            {"op": "move", "from": "/no/such", "path": "/data/b"},
            f"move operation does not apply: doc is missing from path: /no/such: {MISSING}",
        ),
        (
            {"op": "move", "from": "/data/a", "path": "/no/such"},
            f"move operation does not apply: doc is missing destination path: /no/such: {MISSING}",
        ),
        (
            {"op": "move", "path": "/data/b"},
            f"move operation failed to decode from: operation, missing from field: {MISSING}",
        ),
        (
            {"op": "copy", "from": "/list/7", "path": "/data/b"},
            f"error in copy for from: '/list/7': Unable to access invalid index: 7: {BAD_INDEX}",
        ),
        (
            {"op": "copy", "from": "/data/a", "path": "/no/such"},
            f"copy operation does not apply: doc is missing destination path: /no/such: {MISSING}",
        ),
        (
            {"op": "copy", "from": "/data/a", "path": "/list/9"},
            f"error while adding value during copy: Unable to access invalid index: 9: {BAD_INDEX}",
        ),
        ({"op": "frob", "path": "/data"}, "Unexpected kind: frob"),
        ({"op": 5, "path": "/data"}, "Unexpected kind: unknown"),
        ({"path": "/data"}, "Unexpected kind: unknown"),
        ({"op": "add", "value": 1}, f"add operation failed to decode path: {MISSING}"),
        (
            {"op": "replace", "value": 1},
            f"replace operation failed to decode path: operation missing path field: {MISSING}",
        ),
        (
            {"op": "test", "path": "/data/a", "value": "2"},
            "testing value /data/a failed: test failed",
        ),
        (
            {"op": "test", "path": "/no/such", "value": "2"},
            f"test operation does not apply: is missing path: /no/such: {MISSING}",
        ),
        (
            {"op": "replace", "path": "", "value": "x"},
            "replace operation value must be object or array: %!w(<nil>)",
        ),
    ],
)
def test_operations_that_do_not_apply(op: dict[str, Any], message: str) -> None:
    with pytest.raises(JSONPatchError) as raised:
        patched({"data": {"a": "1"}, "list": [1, 2]}, op)
    assert str(raised.value) == message


def test_copy_of_a_missing_key_copies_null() -> None:
    doc = {"data": {"a": "1"}}
    assert patched(doc, {"op": "copy", "from": "/data/none", "path": "/data/b"}) == {
        "data": {"a": "1", "b": None}
    }


def test_copy_and_move() -> None:
    doc: dict[str, Any] = {"a": {"x": [1]}, "b": {}}
    patched(doc, {"op": "copy", "from": "/a/x", "path": "/b/y"})
    doc["a"]["x"].append(2)  # the copy is deep
    patched(doc, {"op": "move", "from": "/a", "path": "/c"})
    assert doc == {"b": {"y": [1]}, "c": {"x": [1, 2]}}


def test_a_path_without_its_leading_slash_drops_its_first_token() -> None:
    """evanphx splits on "/" and skips the first piece, whatever it is."""
    assert patched({"data": {}}, {"op": "add", "path": "data/x", "value": 1}) == {
        "data": {},
        "x": 1,
    }


def test_test_compares_scalars_by_their_json() -> None:
    doc = {"n": 1, "s": "a", "o": {"k": [1, None]}, "z": None}
    patched(doc, {"op": "test", "path": "/n", "value": 1})
    patched(doc, {"op": "test", "path": "/o", "value": {"k": [1, None]}})
    patched(doc, {"op": "test", "path": "/missing"})  # missing and null are alike
    patched(doc, {"op": "test", "path": "/z", "value": None})
    with pytest.raises(JSONPatchError):
        patched(doc, {"op": "test", "path": "/n", "value": 1.0})


def test_replacing_the_root() -> None:
    assert patched({"a": 1}, {"op": "replace", "path": "", "value": [1]}) == [1]


def test_values_are_copied_so_a_retried_patch_applies_the_same() -> None:
    operations = decode([{"op": "add", "path": "/a", "value": {"k": []}}])
    first = apply({}, operations)
    first["a"]["k"].append(1)
    assert apply({}, operations) == {"a": {"k": []}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ("x", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
        ([5], "json: cannot unmarshal number into Patch.0 of type jsonpatch.Operation"),
        ([{}, True], "json: cannot unmarshal bool into Patch.1 of type jsonpatch.Operation"),
    ],
)
def test_decode_refusals(body: Any, message: str) -> None:
    with pytest.raises(StatusError) as raised:
        decode(body)
    assert (raised.value.code, raised.value.reason, raised.value.message) == (
        400,
        "BadRequest",
        message,
    )


def test_decode_null_is_no_operation_and_a_null_element_an_empty_one() -> None:
    assert decode(None) == []
    assert decode([None]) == [{}]


def test_decode_limits_operations() -> None:
    with pytest.raises(StatusError) as raised:
        decode([{}] * 10001)
    assert raised.value.code == 413
    assert (
        raised.value.message
        == "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
        "got 10001"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "object into Go value of type []handlers.jsonPatchOp"),
        ("x", "string into Go value of type []handlers.jsonPatchOp"),
        ([5], "number into Go value of type handlers.jsonPatchOp"),
        ([{"op": 5}], "number into Go struct field jsonPatchOp.op of type string"),
        (
            [{"op": "add", "path": ["x"]}],
            "array into Go struct field jsonPatchOp.path of type string",
        ),
        ([{"from": {}}], "object into Go struct field jsonPatchOp.from of type string"),
    ],
)
def test_strict_operation_type_errors(body: Any, message: str) -> None:
    with pytest.raises(StatusError) as raised:
        check_operations(body, {})
    assert raised.value.code == 400
    assert raised.value.message == f"error decoding patch: json: cannot unmarshal {message}"


def test_strict_problems_in_the_bodys_order() -> None:
    op = {"op": "add", "path": "/data/r", "value": "v", "foo": 1}
    duplicates = {id(op): [("path", 2)]}  # the second "path" stood after op and path
    assert check_operations([None, op], duplicates) == [
        'json patch duplicate field "[1].path"',
        'json patch unknown field "[1].foo"',
    ]
    assert check_operations([{"op": None, "value": 5}], {}) == []
