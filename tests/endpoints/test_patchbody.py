"""How each patch type's body is read at each fieldValidation level: kube-apiserver v1.36's
answers, recorded by sending the same bodies to it."""

from __future__ import annotations

import pytest

from platform_api.endpoints.negotiation import JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from platform_api.endpoints.patchbody import PatchBody, duplicate_problems, parse
from platform_api.errors import StatusError

BIG = "9" * 5000


def refused(data: bytes, patch_type: str, level: str = "Warn") -> str:
    with pytest.raises(StatusError) as raised:
        parse(data, patch_type, level)
    assert (raised.value.code, raised.value.reason) == (400, "BadRequest")
    return raised.value.message


SYNTAX = "invalid character '{' looking for beginning of object key string"
TO_MAP = "json: cannot unmarshal {} into Go value of type map[string]interface {{}}"


@pytest.mark.parametrize(
    ("data", "patch_type", "level", "message"),
    [
        (b"{{{", MERGE_PATCH, "Warn", f"error decoding patch: {SYNTAX}"),
        (b"{{{", MERGE_PATCH, "Ignore", "Invalid JSON Patch"),
        (b"null", MERGE_PATCH, "Warn", "Invalid JSON Patch"),
        (b'"x"', MERGE_PATCH, "Ignore", "Invalid JSON Patch"),
        (b"5", MERGE_PATCH, "Warn", "error decoding patch: " + TO_MAP.format("number")),
        (b"[1]", MERGE_PATCH, "Strict", "error decoding patch: " + TO_MAP.format("array")),
        (b"{{{", STRATEGIC_MERGE_PATCH, "Warn", SYNTAX),
        (b"{{{", STRATEGIC_MERGE_PATCH, "Ignore", SYNTAX),
        (b"[1]", STRATEGIC_MERGE_PATCH, "Warn", TO_MAP.format("array")),
        (b'"x"', STRATEGIC_MERGE_PATCH, "Warn", TO_MAP.format("string")),
        (b"{{{", JSON_PATCH, "Warn", f"error decoding patch: {SYNTAX}"),
        (b"{{{", JSON_PATCH, "Ignore", SYNTAX),
        (
            b'"x"',
            JSON_PATCH,
            "Warn",
            "error decoding patch: json: cannot unmarshal string into Go value of type "
            "[]handlers.jsonPatchOp",
        ),
        (
            b'"x"',
            JSON_PATCH,
            "Ignore",
            "json: cannot unmarshal string into Go value of type jsonpatch.Patch",
        ),
    ],
)
def test_refusals(data: bytes, patch_type: str, level: str, message: str) -> None:
    assert refused(data, patch_type, level) == message


@pytest.mark.parametrize(
    ("patch_type", "message"),
    [
        (
            MERGE_PATCH,
            f"error decoding patch: json: cannot unmarshal number {BIG} into Go value of type float64",
        ),
        (
            STRATEGIC_MERGE_PATCH,
            f"json: cannot unmarshal number {BIG} into Go value of type float64",
        ),
        (
            JSON_PATCH,
            f"error decoding patch: json: cannot unmarshal number {BIG} into Go struct field "
            "jsonPatchOp.value of type float64",
        ),
    ],
)
def test_a_number_past_float64(patch_type: str, message: str) -> None:
    """Thousands of digits too: past CPython's int parsing limit, never a 500."""
    if patch_type == JSON_PATCH:
        data = f'[{{"op":"add","path":"/a","value":{BIG}}}]'.encode()
    else:
        data = f'{{"metadata":{{"generation":{BIG}}}}}'.encode()
    assert refused(data, patch_type) == message


def test_null_strategic_patch_is_empty() -> None:
    assert parse(b"null", STRATEGIC_MERGE_PATCH) == PatchBody({})


def test_merge_patch_array_without_validation_is_the_result() -> None:
    assert parse(b"[1,null]", MERGE_PATCH, "Ignore") == PatchBody([1])


def test_repeated_keys_are_strict_problems_unless_ignored() -> None:
    data = b'{"data":{"a":"1","a":"2"},"list":[{"k":1,"k":2}]}'
    expected = ['duplicate field "data.a"', 'duplicate field "list[0].k"']
    assert parse(data, MERGE_PATCH).problems == expected
    assert parse(data, STRATEGIC_MERGE_PATCH, "Strict").problems == expected
    assert parse(data, MERGE_PATCH, "Ignore").problems == []


def test_json_patch_strict_problems() -> None:
    data = b'[{"op":"add","path":"/a","path":"/b","value":1,"foo":2}]'
    assert parse(data, JSON_PATCH).problems == [
        'json patch duplicate field "[0].path"',
        'json patch unknown field "[0].foo"',
    ]
    assert parse(data, JSON_PATCH, "Ignore") == PatchBody(
        [{"op": "add", "path": "/b", "value": 1, "foo": 2}]
    )


def test_duplicate_problems_without_duplicates() -> None:
    assert duplicate_problems({"a": 1}, {}) == []
