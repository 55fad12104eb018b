"""The internal form of a v1 CRD spec, the form kube validates.

kube converts a v1 object to its internal type before validating it, and the error paths
show it: ``spec.version`` is the first version's name, and a per-version field that is the
same in every version moves to the top level, so a one-version CRD reports its schema
errors under ``spec.validation.openAPIV3Schema``.  The webhook settings of a v1
``conversion`` flatten into ``webhookClientConfig`` and ``conversionReviewVersions``.
Values stay v1 JSON dicts; only their places change.

After this conversion a top-level field and per-version ones never coexist and per-version
values never all agree, so kube's checks of those two cases cannot fire on a v1 object and
are left out.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

# Per-version field -> the top-level field it moves to when every version has the same.
_HOISTED = (
    ("subresources", "subresources"),
    ("schema", "validation"),
    ("additionalPrinterColumns", "additionalPrinterColumns"),
    ("selectableFields", "selectableFields"),
)


def _normal(value: Any) -> Any:
    """A value as apimachinery's semantic equality sees it: nil and empty slices alike."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if v is not None and v != []}
    if isinstance(value, list):
        return [_normal(v) for v in value] or None
    return value


def semantic_equal(a: Any, b: Any) -> bool:
    return bool(_normal(a) == _normal(b))


def internal_spec(spec: Obj) -> Obj:
    """kube's ``Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_...``."""
    out: Obj = {k: v for k, v in spec.items() if k not in ("versions", "conversion")}
    out["preserveUnknownFields"] = bool(spec.get("preserveUnknownFields"))
    versions = [dict(v) for v in spec.get("versions") or []]
    # None stays None: kube shows a missing list as null, an empty one as []
    out["versions"] = None if spec.get("versions") is None else versions
    out["conversion"] = _internal_conversion(spec.get("conversion"))
    if not versions:
        return out
    out["version"] = versions[0].get("name", "")
    for key, top in _HOISTED:
        first = versions[0].get(key)
        if all(semantic_equal(v.get(key), first) for v in versions):
            out[top] = first
            for v in versions:
                v.pop(key, None)
    return out


def _internal_conversion(conversion: Obj | None) -> Obj | None:
    if conversion is None:
        return None
    webhook = conversion.get("webhook") or {}
    return {
        "strategy": conversion.get("strategy", ""),
        "webhookClientConfig": webhook.get("clientConfig"),
        "conversionReviewVersions": webhook.get("conversionReviewVersions"),
    }


def openapi_schema(validation: Obj | None) -> Obj | None:
    """The ``openAPIV3Schema`` of a (top-level or per-version) validation, if any."""
    if validation is None:
        return None
    found = validation.get("openAPIV3Schema")
    return found if isinstance(found, dict) else None


def spec_schemas(spec: Obj) -> list[Obj]:
    """Every schema of an internal spec: the top-level one, then the per-version ones."""
    found = [openapi_schema(spec.get("validation"))]
    found += [openapi_schema(v.get("schema")) for v in spec.get("versions") or []]
    return [s for s in found if s is not None]


def schema_for_version(spec: Obj, name: str) -> Obj | None:
    """``GetSchemaForVersion``: the top-level schema, else the version's."""
    if spec.get("validation") is not None:
        return openapi_schema(spec["validation"])
    for v in spec.get("versions") or []:
        if v.get("name") == name:
            return openapi_schema(v.get("schema"))
    return None


def has_status_enabled(subresources: Obj | None) -> bool:
    return subresources is not None and subresources.get("status") is not None


def has_per_version(versions: list[Obj], key: str) -> bool:
    if key == "additionalPrinterColumns":
        return any(v.get(key) for v in versions)
    return any(v.get(key) is not None for v in versions)


def subresources_for_version(spec: Obj, name: str) -> Obj | None:
    versions = spec.get("versions") or []
    if not has_per_version(versions, "subresources"):
        return spec.get("subresources")
    for v in versions:
        if v.get("name") == name:
            return v.get("subresources")
    return None


def has_any_status_enabled(spec: Obj) -> bool:
    if has_status_enabled(spec.get("subresources")):
        return True
    return any(has_status_enabled(v.get("subresources")) for v in spec.get("versions") or [])
