"""Property tests of every built-in kind's create and update checks: any object that fits
its schema (as the decoder lets it through) is accepted or refused with a Status, never a
crash, as kube's validation returns field errors for any Go value of the kind."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import platform_api.registry  # noqa: F401  # registers the kinds' strategies
from platform_api.errors import StatusError
from platform_api.registry.prepare import before_create, before_update
from platform_api.registry.strategy import strategy_for
from platform_api.scheme.types import ResourceType
from tests.fuzz.schema_objects import SCHEME, objects_of

Obj = dict[str, Any]
NOW = "2026-12-04T00:00:00Z"
TYPES = [rt for rt in SCHEME.all() if not rt.custom and "/" not in rt.plural]


def _object(rt: ResourceType, body: Obj) -> Obj:
    obj = {"apiVersion": rt.api_version, "kind": rt.kind, **copy.deepcopy(body)}
    meta = obj.setdefault("metadata", {})
    meta["name"] = "x"
    meta.pop("namespace", None)
    return obj


def _create(rt: ResourceType, obj: Obj) -> bool:
    """Whether the create checks pass; a refusal must be a Status."""
    try:
        before_create(rt, strategy_for(rt), "default" if rt.namespaced else "", obj, NOW)
    except StatusError as e:
        assert e.code in (400, 403, 422), (e.code, e.message)
        return False
    return True


@given(st.sampled_from(TYPES).flatmap(lambda rt: st.tuples(st.just(rt), objects_of(rt.definition))))
def test_any_typed_object_is_created_or_refused(case: tuple[ResourceType, Obj]) -> None:
    rt, body = case
    _create(rt, _object(rt, body))


@given(
    st.sampled_from(TYPES).flatmap(
        lambda rt: st.tuples(st.just(rt), objects_of(rt.definition), objects_of(rt.definition))
    )
)
def test_any_typed_update_is_accepted_or_refused(case: tuple[ResourceType, Obj, Obj]) -> None:
    rt, first, second = case
    old = _object(rt, first)
    if not _create(rt, old):
        return
    old["metadata"]["resourceVersion"] = "7"
    new = _object(rt, second)
    new["metadata"]["resourceVersion"] = "7"
    namespace = "default" if rt.namespaced else ""
    try:
        before_update(rt, strategy_for(rt), True, (namespace, "x"), new, old)
    except StatusError as e:
        assert e.code in (400, 403, 409, 422), (e.code, e.message)
