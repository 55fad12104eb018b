"""StorageView: a served version over the storage version's objects."""

from __future__ import annotations

from typing import Any

import orjson
import pytest_twisted

from platform_api.storage.interface import Stored
from platform_api.storage.view import StorageView

Obj = dict[str, Any]
KEY = b"/autoscaling/horizontalpodautoscalers/default/a"
STORED = {"apiVersion": "g/v2", "metadata": {"name": "a"}, "spec": {"x": 1}, "status": {"s": 1}}


class _Inner:
    """Just enough storage for an update: the stored object, and what was written."""

    def __init__(self) -> None:
        self.written: Obj | None = None

    async def guaranteed_update(self, key: bytes, attempt: Any, **_options: Any) -> Stored:
        current = Stored(key, 5, orjson.dumps(STORED))
        self.written = await attempt(current.copy(), current)
        return Stored(key, 6, orjson.dumps(self.written))


def _out(obj: Obj) -> Obj:
    return {**obj, "apiVersion": "g/v1"}


def _into(obj: Obj) -> Obj:
    """A lossy conversion: the status does not come back as it was stored."""
    return {**obj, "apiVersion": "g/v2", "status": {"s": obj.get("status", {}).get("s"), "z": 0}}


class _Write:
    def __init__(self, keeps_status: bool, keeps_content: bool = False) -> None:
        self.keeps_status, self.keeps_content = keeps_status, keeps_content

    def __call__(self, obj: Obj, _stored: Stored | None) -> Obj:
        if not self.keeps_content:
            obj["spec"] = {"x": 2}
        obj["metadata"]["managedFields"] = [{"manager": "m"}]
        return obj


@pytest_twisted.ensureDeferred
async def test_a_write_of_the_object_keeps_the_stored_status() -> None:
    inner = _Inner()
    view = StorageView(inner, _out, _into)  # type: ignore[arg-type]
    await view.guaranteed_update(KEY, _Write(keeps_status=True))
    entries = {"managedFields": [{"manager": "m"}]}
    assert inner.written == {**STORED, "spec": {"x": 2}, "metadata": {"name": "a", **entries}}
    await view.guaranteed_update(KEY, _Write(keeps_status=False))  # a /status write
    assert inner.written is not None and inner.written["status"] == {"s": 1, "z": 0}


def test_the_field_manager_sees_the_conversion_alone() -> None:
    def plain(obj: Obj) -> Obj:
        return {**obj, "apiVersion": "g/v2"}

    view = StorageView(_Inner(), _out, _into, plain)  # type: ignore[arg-type]
    assert view.stored_form({"apiVersion": "g/v1", "status": {}}) == {
        "apiVersion": "g/v2",
        "status": {},
    }


@pytest_twisted.ensureDeferred
async def test_an_apply_that_changed_nothing_keeps_the_stored_object() -> None:
    """kube's field manager hands back the live object of a no-op apply: only the
    managedFields change, whatever the conversion would have made of the rest."""
    inner = _Inner()
    view = StorageView(inner, _out, _into)  # type: ignore[arg-type]
    await view.guaranteed_update(KEY, _Write(keeps_status=False, keeps_content=True))
    meta = {"name": "a", "managedFields": [{"manager": "m"}]}
    assert inner.written == {**STORED, "metadata": meta}
