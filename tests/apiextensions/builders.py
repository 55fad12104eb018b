"""Small builders of v1 CustomResourceDefinition dicts for the validation tests."""

from __future__ import annotations

import copy
from typing import Any

from platform_api.apiextensions.defaults import default_crd
from platform_api.apiextensions.validation import validate_crd, validate_crd_update
from platform_api.registry.apiextensions import record_storage_version

Obj = dict[str, Any]


def obj(*props: tuple[str, Obj], **extra: Any) -> Obj:
    """An object schema with the given properties."""
    return {"type": "object", "properties": dict(props), **extra}


def ver(
    name: str = "v1",
    served: bool = True,
    storage: bool = True,
    schema: Obj | None = None,
    **kw: Any,
) -> Obj:
    out: Obj = {"name": name, "served": served, "storage": storage}
    out["schema"] = {"openAPIV3Schema": schema if schema is not None else {"type": "object"}}
    out.update(kw)
    return out


def crd(versions: list[Obj] | None = None, **spec: Any) -> Obj:
    names = spec.pop(
        "names", {"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList"}
    )
    group = spec.pop("group", "example.com")
    meta = spec.pop("metadata", {"name": f"{names.get('plural', '')}.{group}"})
    body: Obj = {"group": group, "scope": "Namespaced", "names": names}
    body["versions"] = versions if versions is not None else [ver()]
    body.update(spec)
    return {
        "apiVersion": "apiextensions.platform.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta,
        "spec": body,
    }


def schema_crd(schema: Obj, **kw: Any) -> Obj:
    """One version with this schema: errors show under ``spec.validation``."""
    return crd([ver(schema=schema, **kw)])


def prepared(new: Obj, old: Obj | None = None) -> Obj:
    """What the registry validates: defaulted, status reset (create) or kept (update),
    the storage version recorded."""
    out = copy.deepcopy(new)
    default_crd(out)
    out["status"] = copy.deepcopy(old["status"]) if old is not None else {}
    record_storage_version(out)
    return out


def create_errors(new: Obj) -> list[str]:
    return [str(e) for e in validate_crd(prepared(new))]


def stored(new: Obj, established: bool = True) -> Obj:
    """An object as the server would have stored it (resource version, conditions)."""
    out = prepared(new)
    out["metadata"].update(resourceVersion="1", uid="u-1", generation=1)
    if established:
        out["status"]["conditions"] = [{"type": "Established", "status": "True"}]
    return out


def update_errors(new: Obj, old: Obj) -> list[str]:
    new = prepared(new, old)
    for key in ("resourceVersion", "uid", "generation"):
        new["metadata"].setdefault(key, old["metadata"].get(key))
    return [str(e) for e in validate_crd_update(new, old)]
