"""Ownership compared in each manager's version (fieldmanager/versions.py)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.errors import StatusError
from platform_api.fieldmanager.manager import FieldManager, Who
from platform_api.fieldmanager.typed import Typed
from platform_api.fieldmanager.versions import MISSING, VersionView, View, read_as

Obj = dict[str, Any]
T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"
TYPED = Typed(None, unstructured=True)
SET_TAGS = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer"},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set",
                },
            },
        },
    },
}
ANYTHING = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _versions(api_version: str) -> View:
    """v1 holds tags as a set, v2 (the request's here) as an atomic list; v9 is gone."""
    if api_version == "g/v1":
        return VersionView(
            TYPED, SET_TAGS, lambda o: read_as(TYPED, SET_TAGS, {**o, "apiVersion": "g/v1"})
        )
    return MISSING if api_version == "g/v9" else None


def _v2() -> FieldManager:
    return FieldManager(TYPED, ANYTHING, has_status=False, versions=_versions)


def _obj(spec: Obj, entries: list[Obj] | None = None) -> Obj:
    meta: Obj = {"name": "a"}
    if entries is not None:
        meta["managedFields"] = entries
    return {"apiVersion": "g/v2", "kind": "W", "metadata": meta, "spec": spec}


def _entry(manager: str, version: str, fields: Obj, operation: str = "Apply") -> Obj:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": version,
        "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }


ONE = _entry("one", "g/v1", {"f:spec": {"f:size": {}, "f:tags": {'v:"x"': {}}}})


def test_an_apply_takes_what_the_owners_version_sees_removed() -> None:
    """Replacing v2's atomic list removes a v1 set item (no conflict: kube's conflicts
    are what is modified or added in the owner's terms) and takes it from its owner."""
    live = _obj({"size": 1, "tags": ["x"]}, [ONE])
    applied = _v2().apply(live, _obj({"tags": ["z"]}), Who("two", "g/v2"), False, T1)
    entries = {e["manager"]: e["fieldsV1"] for e in applied["metadata"]["managedFields"]}
    assert entries == {
        "one": {"f:spec": {"f:size": {}}},
        "two": {"f:spec": {".": {}, "f:tags": {}}},
    }
    with pytest.raises(StatusError) as caught:
        _v2().apply(live, _obj({"size": 2}), Who("two", "g/v2"), False, T1)
    assert caught.value.message == 'Apply failed with 1 conflict: conflict with "one": .spec.size'


def test_an_update_takes_from_each_version_what_changed_there() -> None:
    live = _obj({"size": 1, "tags": ["x"]}, [ONE])
    new = _obj({"size": 1, "tags": ["x", "y"]})
    _v2().update(live, new, Who("u", "g/v2"), T1)
    entries = {e["manager"]: e["fieldsV1"] for e in new["metadata"]["managedFields"]}
    # in v1 only an item was added: one keeps x; in v2 the atomic list changed
    assert entries == {
        "one": {"f:spec": {"f:size": {}, "f:tags": {'v:"x"': {}}}},
        "u": {"f:spec": {"f:tags": {}}},
    }


def test_an_object_that_will_not_convert_fails_apply_and_clears_updates() -> None:
    live = _obj({"size": 1}, [_entry("one", "g/v1", {"f:spec": {"f:size": {}}})])
    with pytest.raises(StatusError) as caught:
        _v2().apply(live, _obj({"extra": 1}), Who("two", "g/v2"), False, T1)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        500,
        "",
        "failed to convert new object: .spec.extra: field not declared in schema",
    )
    new = _obj({"size": 1, "extra": 1})
    _v2().update(live, new, Who("u", "g/v2"), T1)
    assert "managedFields" not in new["metadata"]


def test_a_version_the_kind_lacks_loses_its_entry() -> None:
    gone = _entry("old", "g/v9", {"f:spec": {"f:other": {}}}, "Update")
    live = _obj({"size": 1}, [gone, _entry("two", "g/v2", {"f:spec": {"f:size": {}}})])
    new = _obj({"size": 2})
    _v2().update(live, new, Who("u", "g/v2"), T1)
    assert [e["manager"] for e in new["metadata"]["managedFields"]] == ["u"]
