"""Property tests of the document transforms: JSON Patch, merge patch, strategic merge
patch and FieldsV1.  Arbitrary documents meet only the documented errors."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from platform_api.errors import StatusError
from platform_api.fieldmanager.fieldpath import from_fields_v1, to_fields_v1
from platform_api.patch import json_patch, strategic
from platform_api.patch.merge import merge_patch
from platform_api.scheme.catalog import builtin_scheme

SCHEME = builtin_scheme()
POD = SCHEME.lookup("", "v1", "pods").definition  # type: ignore[union-attr]

_KEYS = st.sampled_from(["a", "b", "name", "image", "value", "0", "-", "~1", ""])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(1 << 63), (1 << 64) - 1),  # what orjson decodes to int
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)


def _json(keys: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        _SCALARS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=12,
    )


JSON = _json(st.one_of(_KEYS, st.text(max_size=4)))
_POINTER = st.lists(
    st.one_of(_KEYS, st.sampled_from(["~", "~0", "~2", "1", "10"])), max_size=3
).map(lambda parts: "".join("/" + p for p in parts))
_OPERATION = st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"])},
    optional={
        "path": st.one_of(_POINTER, JSON),
        "from": st.one_of(_POINTER, JSON),
        "value": JSON,
    },
)


@given(st.dictionaries(_KEYS, JSON, max_size=3), st.one_of(st.lists(_OPERATION, max_size=4), JSON))
def test_json_patch_raises_only_its_own_errors(doc: dict[str, Any], patch: Any) -> None:
    """A malformed patch is a StatusError; one that does not apply, a JSONPatchError."""
    try:
        operations = json_patch.decode(patch)
    except StatusError as e:
        assert e.status()["code"] in (400, 413)
        return
    with contextlib.suppress(json_patch.JSONPatchError):
        json_patch.apply(doc, operations)


@given(JSON, JSON)
def test_merge_patch_is_idempotent(target: Any, patch: Any) -> None:
    """From the second application on: the first may put a list in place of an object
    unpruned, which the next prunes (kube's json-patch library does the same)."""
    once = merge_patch(copy.deepcopy(target), copy.deepcopy(patch))
    twice = merge_patch(copy.deepcopy(once), copy.deepcopy(patch))
    assert merge_patch(copy.deepcopy(twice), copy.deepcopy(patch)) == twice
    if isinstance(patch, dict):
        assert all(once.get(k) is not None or v is None for k, v in patch.items())


_POD_KEYS = st.sampled_from(
    [
        "metadata",
        "labels",
        "finalizers",
        "spec",
        "containers",
        "initContainers",
        "name",
        "image",
        "ports",
        "containerPort",
        "protocol",
        "env",
        "value",
        "volumes",
        "tolerations",
        "$patch",
        "$retainKeys",
        "$setElementOrder/containers",
        "$setElementOrder/finalizers",
        "$deleteFromPrimitiveList/finalizers",
        "replace",
        "delete",
        "merge",
    ]
)
POD_JSON = _json(_POD_KEYS)


@given(
    st.dictionaries(_POD_KEYS, POD_JSON, max_size=3),
    st.dictionaries(_POD_KEYS, POD_JSON, max_size=3),
)
@example({"spec": {"containers": [1]}}, {"spec": {"containers": [{"name": "a"}]}})
@example({}, {"$retainKeys": [["x"]]})
def test_strategic_merge_patch_raises_only_patch_error(
    original: dict[str, Any], patch: dict[str, Any]
) -> None:
    try:
        result = strategic.apply(original, patch, SCHEME.schemas, POD)
    except strategic.PatchError as e:
        assert e.kind in (strategic.BAD_REQUEST, strategic.INVALID, strategic.INTERNAL)
        return
    orjson.dumps(result)  # still a JSON document


_ELEMENTS = st.one_of(
    st.sampled_from(
        [
            "f:a",
            "f:b",
            'k:{"name":"x"}',
            "v:1",
            'v:"s"',
            "i:0",
            ".",
            "k:1",
            "k:{}",
            "i:x",
            "x:y",
            "v:{",
        ]
    ),
    st.text(max_size=5),
)
_FIELDS = st.recursive(
    st.just({}),
    lambda inner: st.dictionaries(_ELEMENTS, inner | _SCALARS, max_size=3),
    max_leaves=10,
)


@given(st.one_of(_FIELDS, JSON))
@example({"k:1": {}})
def test_fields_v1_raises_only_value_error(fields: Any) -> None:
    try:
        paths = from_fields_v1(fields)
    except ValueError:
        return
    assert from_fields_v1(to_fields_v1(paths)) == paths


_PATH = st.lists(
    st.one_of(
        st.builds("f:{}".format, st.text(min_size=1, max_size=4)),
        st.builds(
            lambda v: "k:" + orjson.dumps({"name": v}, option=orjson.OPT_SORT_KEYS).decode(),
            st.text(max_size=3),
        ),
        st.builds(
            lambda v: "v:" + orjson.dumps(v).decode(),
            st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.text(max_size=3)),
        ),
        st.builds("i:{}".format, st.integers(0, 20)),
    ),
    min_size=1,
    max_size=4,
).map(tuple)


@given(st.sets(_PATH, max_size=6))
def test_fields_v1_round_trip(paths: set[tuple[str, ...]]) -> None:
    encoded = to_fields_v1(paths)
    assert from_fields_v1(encoded) == paths
    assert to_fields_v1(from_fields_v1(encoded)) == encoded


@pytest.mark.parametrize("element", ["k:1", "k:{}", "k:[]", 'k:"a"'])
def test_fields_v1_key_element_must_be_an_object(element: str) -> None:
    """Finding: ``{"k:1": {}}`` in managedFields raised AttributeError (500 on create)."""
    with pytest.raises(ValueError, match="expected key value pairs"):
        from_fields_v1({element: {}})


@pytest.mark.parametrize("keep", [[["x"]], [{"x": 1}]])
def test_retain_keys_of_lists_or_maps_is_a_bad_request(keep: list[Any]) -> None:
    """Finding: ``{"$retainKeys": [["x"]]}`` raised TypeError (unhashable list), a 500."""
    with pytest.raises(strategic.PatchError) as caught:
        strategic.apply({}, {"$retainKeys": keep}, SCHEME.schemas, POD)
    assert (str(caught.value), caught.value.kind) == (
        "invalid patch format of retainKeys",
        strategic.BAD_REQUEST,
    )
