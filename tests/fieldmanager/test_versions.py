"""Ownership compared in each manager's version (fieldmanager/versions.py)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.errors import StatusError
from platform_api.fieldmanager.manager import FieldManager, Who
from platform_api.fieldmanager.typed import Typed
from platform_api.fieldmanager.versions import (
    MISSING,
    Pending,
    VersionView,
    View,
    awaited,
    read_as,
    settled,
)
from tests.admission.plugin_kit import run

Obj = dict[str, Any]
T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"
TYPED = Typed(None, unstructured=True)


def kind_schema(spec: Obj) -> Obj:
    """A custom resource's schema whose ``spec`` declares ``spec``'s fields."""
    return {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "spec": {"type": "object", "properties": spec},
        },
    }


TAGS = {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
SET_TAGS = kind_schema({"size": {"type": "integer"}, "tags": TAGS})
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


def test_a_prune_that_cannot_convert_names_its_step() -> None:
    """An applier with a last apply is pruned before anything is compared: adding back
    what a v1 owner owns converts the merged object into v1 first (structured-merge-diff's
    words for each step)."""
    mine = _entry("two", "g/v2", {"f:spec": {"f:size": {}}})
    live = _obj({"size": 1, "tags": ["x"]}, [ONE, mine])
    with pytest.raises(StatusError) as caught:
        _v2().apply(live, _obj({"extra": 1}), Who("two", "g/v2"), False, T1)
    assert (caught.value.code, caught.value.message) == (
        500,
        "failed to prune fields: failed add back owned items: failed to convert merged "
        "object at version g/v1: .spec.extra: field not declared in schema",
    )


def test_a_version_the_kind_lacks_loses_its_entry() -> None:
    gone = _entry("old", "g/v9", {"f:spec": {"f:other": {}}}, "Update")
    live = _obj({"size": 1}, [gone, _entry("two", "g/v2", {"f:spec": {"f:size": {}}})])
    new = _obj({"size": 2})
    _v2().update(live, new, Who("u", "g/v2"), T1)
    assert [e["manager"] for e in new["metadata"]["managedFields"]] == ["u"]


# -- conversions by a call out (a CRD's webhook) ---------------------------------------

RENAMED = kind_schema({"cronSpec": {"type": "string"}})


class Hook:
    """v2's ``schedule`` is v1's ``cronSpec``: converted by an awaited call, as a CRD's
    webhook converts; ``down`` makes each call fail as kube's converter does."""

    def __init__(self, down: bool = False) -> None:
        self.down = down
        self.calls = 0

    async def call(self, obj: Obj, api_version: str) -> Obj:
        self.calls += 1
        if self.down:
            raise StatusError(500, "", "conversion webhook for g/v2, Kind=W failed: EOF")
        spec = dict(obj.get("spec") or {})
        if "schedule" in spec:
            spec["cronSpec"] = spec.pop("schedule")
        return {**obj, "apiVersion": api_version, "spec": spec}

    def versions(self, api_version: str) -> View:
        if api_version != "g/v1":
            return None

        def convert(obj: Obj) -> Obj:
            made = awaited(api_version, obj, lambda: self.call(obj, api_version))
            return read_as(TYPED, RENAMED, made)

        return VersionView(TYPED, RENAMED, convert)


CRON = _entry("one", "g/v1", {"f:spec": {"f:cronSpec": {}}})


def _settled(step: Any) -> Any:
    return run(settled(step))


async def _now(value: Any) -> Any:
    return value


def test_an_apply_is_compared_in_the_owners_version_once_converted() -> None:
    """As the reference answered: v2's schedule is v1's cronSpec, so an apply of another
    schedule conflicts with cronSpec's owner, the paths named in the owner's version."""
    hook = Hook()
    manager = FieldManager(TYPED, ANYTHING, False, versions=hook.versions)
    live = _obj({"schedule": "1"}, [CRON])

    def apply() -> Any:
        return _now(manager.apply(live, _obj({"schedule": "2"}), Who("two", "g/v2"), False, T1))

    with pytest.raises(StatusError) as caught:
        _settled(apply)
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "one": .spec.cronSpec'
    )
    assert hook.calls == 2  # the live object, then the merged one: each once


def test_an_update_takes_the_converted_field_and_leaves_its_input_for_each_run() -> None:
    hook = Hook()
    manager = FieldManager(TYPED, ANYTHING, False, versions=hook.versions)
    live = _obj({"schedule": "1"}, [CRON])
    new = _obj({"schedule": "2"}, [CRON])  # sent back as read: kept for the next run
    _settled(lambda: _now(manager.update(live, new, Who("u", "g/v2"), T1)))
    entries = {e["manager"]: e["fieldsV1"] for e in new["metadata"]["managedFields"]}
    assert entries == {"u": {"f:spec": {"f:schedule": {}}}}


def test_a_failed_call_fails_an_apply_with_its_error_and_clears_an_update() -> None:
    """kube converts the live object into each entry's version first: its error is the
    converter's own, a bare 500; an Update is left without managedFields."""
    manager = FieldManager(TYPED, ANYTHING, False, versions=Hook(down=True).versions)
    live = _obj({"schedule": "1"}, [CRON])
    with pytest.raises(StatusError) as caught:
        _settled(lambda: _now(manager.apply(live, _obj({}), Who("two", "g/v2"), False, T1)))
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        500,
        "",
        "conversion webhook for g/v2, Kind=W failed: EOF",
    )
    new = _obj({"schedule": "2"})
    _settled(lambda: _now(manager.update(live, new, Who("u", "g/v2"), T1)))
    assert "managedFields" not in new["metadata"]


def test_a_call_out_is_refused_outside_a_settled_step() -> None:
    with pytest.raises(RuntimeError, match="outside a settled step"):
        awaited("g/v1", {}, Hook().call.__call__)  # type: ignore[arg-type]


def test_a_step_that_never_settles_is_an_internal_error() -> None:
    async def restless() -> None:
        async def fetch() -> None:
            return None

        raise Pending(fetch)

    with pytest.raises(StatusError) as caught:
        run(settled(restless))
    assert (caught.value.code, caught.value.message) == (
        500,
        "Internal error occurred: the field manager kept asking for conversions",
    )
