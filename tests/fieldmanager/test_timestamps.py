"""kube's IgnoreManagedFieldsTimestampsTransformer (fieldmanager/timestamps.py)."""

from __future__ import annotations

import copy
from typing import Any

from platform_api.fieldmanager.timestamps import keep_old_times

Obj = dict[str, Any]


def _entry(manager: str, time: str | None) -> Obj:
    out: Obj = {"manager": manager, "operation": "Update", "apiVersion": "apps/v1"}
    if time is not None:
        out["time"] = time
    return {**out, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}


def _obj(replicas: int, *entries: Obj) -> Obj:
    meta = {"name": "d", "resourceVersion": "7", "managedFields": list(entries)}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {"replicas": replicas},
    }


def test_an_entry_rebuilt_without_its_time_keeps_the_old_one() -> None:
    old = _obj(3, _entry("mp", "2026-01-01T00:00:00Z"))
    new = _obj(3, _entry("mp", None))
    keep_old_times(new, old)
    assert new == old


def test_a_time_dropped_comes_back_and_one_added_goes() -> None:
    old = _obj(3, _entry("a", None), _entry("b", "2026-01-01T00:00:00Z"))
    new = _obj(3, _entry("a", "2026-01-01T00:00:09Z"), _entry("b", "2026-01-01T00:00:09Z"))
    keep_old_times(new, old)
    assert new == old


def test_any_other_change_keeps_the_new_times() -> None:
    old = _obj(3, _entry("mp", "2026-01-01T00:00:00Z"))
    for new in (
        _obj(4, _entry("mp", None)),  # the object changed
        _obj(3, _entry("other", None)),  # another manager
        _obj(3, _entry("mp", None), _entry("x", None)),  # an entry more
    ):
        wanted = copy.deepcopy(new)
        keep_old_times(new, old)
        assert new == wanted
