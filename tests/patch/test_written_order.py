"""The key order of a patched document as kube's json-patch library (evanphx v4) writes
it when a refusal quotes it: the objects a patch reached as Go maps (sorted keys), the
rest as stored (kube-apiserver v1.36's answers to the same patches, 2026-12-06)."""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.patch import json_patch
from platform_api.patch.merge import as_written, merge_patch


def _keys(value: Any) -> str:
    return orjson.dumps(value).decode()


def _json_patched(doc: Any, ops: list[dict[str, Any]]) -> str:
    """``doc`` after ``ops``, as the library writes it."""
    decoded: dict[int, Any] = {}
    patched = json_patch.apply(doc, ops, decoded)
    return _keys(json_patch.as_written(patched, decoded))


def test_a_merge_sorts_what_it_reached_and_keeps_the_rest() -> None:
    stored = {
        "metadata": {"name": "h", "labels": {"z": "1", "a": "2"}},
        "spec": {"maxReplicas": 3, "scaleTargetRef": {"name": "x", "kind": "D"}},
        "status": {"desiredReplicas": 0, "currentMetrics": None},
    }
    patch = {"status": {"currentReplicas": "x", "added": {"b": 1, "a": [{"d": 1, "c": 2}]}}}
    merged = merge_patch(orjson.loads(orjson.dumps(stored)), orjson.loads(orjson.dumps(patch)))
    assert _keys(as_written(merged, patch)) == (
        '{"metadata":{"name":"h","labels":{"z":"1","a":"2"}},'
        '"spec":{"maxReplicas":3,"scaleTargetRef":{"name":"x","kind":"D"}},'
        '"status":{"added":{"a":[{"c":2,"d":1}],"b":1},"currentMetrics":null,'
        '"currentReplicas":"x","desiredReplicas":0}}'
    )


def test_a_merge_into_a_value_that_was_no_object_is_sorted_whole() -> None:
    merged = merge_patch({"spec": "x"}, {"spec": {"b": {"d": 1, "c": 2}, "a": 1}})
    assert _keys(as_written(merged, {"spec": {"b": {"d": 1, "c": 2}, "a": 1}})) == (
        '{"spec":{"a":1,"b":{"c":2,"d":1}}}'
    )


def test_a_json_patch_sorts_the_objects_its_pointers_pass_through() -> None:
    doc = {
        "metadata": {"name": "h", "labels": {"z": "1", "a": "2"}},
        "spec": {"maxReplicas": 3, "scaleTargetRef": {"name": "x", "kind": "D"}},
    }
    ops = [
        {"op": "add", "path": "/spec/x", "value": {"b": 1, "a": {"d": 1, "c": 2}}},
        {"op": "replace", "path": "/spec/scaleTargetRef/name", "value": 5},
    ]
    # the value an operation put stays as written; labels were not on any pointer
    assert _json_patched(doc, ops) == (
        '{"metadata":{"name":"h","labels":{"z":"1","a":"2"}},'
        '"spec":{"maxReplicas":3,"scaleTargetRef":{"kind":"D","name":5},'
        '"x":{"b":1,"a":{"d":1,"c":2}}}}'
    )


def test_a_json_patch_from_pointer_is_passed_through_too() -> None:
    doc = {"a": {"y": {"q": 1, "p": 2}, "x": 1}, "b": {"z": 1, "y": 2}}
    ops = [{"op": "copy", "from": "/a/y/q", "path": "/c"}]
    assert _json_patched(doc, ops) == ('{"a":{"x":1,"y":{"p":2,"q":1}},"b":{"z":1,"y":2},"c":1}')


def test_a_decoded_object_is_sorted_wherever_it_moves() -> None:
    """kube's answer to moving a container's image in front of it: the container the
    ``from`` pointer passed through is written sorted at its new index."""
    doc = {"containers": [{"name": "a", "image": "i", "args": ["x"]}]}
    ops = [{"op": "move", "from": "/containers/0/image", "path": "/containers/0"}]
    assert _json_patched(doc, ops) == ('{"containers":["i",{"args":["x"],"name":"a"}]}')


def test_a_copy_is_written_as_its_source_was_and_a_tested_object_as_decoded() -> None:
    doc = {"a": {"z": {"y": 1, "x": 2}}, "t": {"d": 1, "c": 2}}
    ops = [
        {"op": "copy", "from": "/a/z", "path": "/b"},  # /a decoded, /a/z not: copied raw
        {"op": "copy", "from": "/a", "path": "/c"},  # the root's /a decoded: sorted copy
        {"op": "test", "path": "/t", "value": {"c": 2, "d": 1}},
    ]
    assert _json_patched(doc, ops) == (
        '{"a":{"z":{"y":1,"x":2}},"b":{"y":1,"x":2},"c":{"z":{"y":1,"x":2}},"t":{"c":2,"d":1}}'
    )


def test_a_copy_into_its_own_source_is_written_as_the_destination_left_it() -> None:
    """evanphx copies once it has found the destination: a path through the source has
    decoded the source, so the copy is a Go map (sorted), as kube-apiserver quoted a
    container copied into its own ``args``."""
    doc = {"containers": [{"name": "a", "image": "i", "args": ["x"]}]}
    ops = [{"op": "copy", "from": "/containers/0", "path": "/containers/0/args/0"}]
    assert _json_patched(doc, ops) == (
        '{"containers":[{"args":[{"args":["x"],"image":"i","name":"a"},"x"],'
        '"image":"i","name":"a"}]}'
    )


def test_a_list_a_merge_patch_puts_in_place_has_its_objects_nulls_pruned() -> None:
    """evanphx's pruneNulls, as kube-apiserver quoted a Deployment whose containers a
    merge patch replaced with ``[{"name": "a", "image": null}]``: null fields of the
    list's objects go, null items stay; a list that replaces an object is kept as sent."""
    merged = merge_patch(
        {"c": [{"name": "x"}], "o": {"k": 1}},
        {"c": [{"name": "a", "image": None}, None], "n": [{"a": None}], "o": [{"b": None}]},
    )
    assert merged == {"c": [{"name": "a"}, None], "o": [{"b": None}], "n": [{}]}
