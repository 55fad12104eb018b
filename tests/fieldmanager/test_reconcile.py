"""Entries cut back to what a changed schema makes atomic (fieldmanager/reconcile.py),
as the reference kube-apiserver v1.36 reads them after a CRD's change."""

from __future__ import annotations

from typing import Any

from platform_api.fieldmanager.fieldpath import from_fields_v1, to_fields_v1
from platform_api.fieldmanager.reconcile import reconcile
from platform_api.fieldmanager.typed import Typed
from platform_api.scheme.schemas import load_schemas

TYPED = Typed(None, unstructured=True)
ATOMIC = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "sel": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "properties": {"a": {"type": "string"}},
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "atomic",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "kept": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
    },
}


def _reconciled(fields: dict[str, Any], node: dict[str, Any] = ATOMIC) -> Any:
    out = reconcile(TYPED, node, from_fields_v1(fields))
    return None if out is None else to_fields_v1(out)


def test_items_of_what_became_atomic_are_cut_back_to_it() -> None:
    granular = {
        "f:spec": {
            "f:tags": {'v:"x"': {}},
            "f:sel": {".": {}, "f:a": {}},
            "f:ports": {'k:{"name":"p"}': {".": {}, "f:name": {}}},
            "f:kept": {'k:{"name":"p"}': {".": {}, "f:name": {}}},
        }
    }
    assert _reconciled(granular) == {
        "f:spec": {
            "f:tags": {},
            "f:sel": {},
            "f:ports": {},
            "f:kept": {'k:{"name":"p"}': {".": {}, "f:name": {}}},
        }
    }


def test_what_needs_no_change_is_none() -> None:
    """Owned whole already, granular still, or untyped (kube leaves deduced types be)."""
    assert _reconciled({"f:spec": {"f:tags": {}, "f:sel": {}}}) is None
    assert _reconciled({"f:spec": {"f:kept": {'k:{"name":"p"}': {"f:name": {}}}}}) is None
    assert _reconciled({"f:spec": {"f:free": {"f:x": {"f:y": {"i:0": {}}}}}}) is None
    assert _reconciled({"f:spec": {"f:undeclared": {"f:x": {}}}}) is None
    assert _reconciled({}) is None


def test_a_built_in_kinds_atomic_fields() -> None:
    """A hand-written entry owning items of a container's args (an atomic list)."""
    schemas = load_schemas()
    node = schemas.get(schemas.for_kind("", "v1", "Pod"))
    item = 'k:{"name":"c"}'
    fields = {"f:spec": {"f:containers": {item: {"f:args": {"i:0": {}}, "f:image": {}}}}}
    out = reconcile(Typed(schemas), node, from_fields_v1(fields))
    assert out is not None
    wanted = {"f:spec": {"f:containers": {item: {"f:args": {}, "f:image": {}}}}}
    assert to_fields_v1(out) == wanted
