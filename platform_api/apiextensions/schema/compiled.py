"""One CRD version's schema, compiled once, for the serving path of its custom resources.

kube applies the schema in two places. Decoding (a request body, or an object read from
storage) runs ``decode``: prune unknown fields, drop non-nullable nulls without defaults,
coerce embedded metadata, rewrite the root ``metadata`` through ObjectMeta, then ``default``.
The strategy then runs ``validate``/``validate_update``/``validate_status_update`` (after
TypeMeta and root ObjectMeta checks, before CEL rules; those are the registry's).
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema import defaulting, objectmeta, pruning, validation
from platform_api.apiextensions.schema.gojson_meta import DecodeError
from platform_api.apiextensions.schema.node import Node, Obj, compile_structural
from platform_api.apiextensions.schema.validation import SchemaValidator
from platform_api.validation.field import FieldError

__all__ = ["CompiledSchema", "DecodeError"]


class CompiledSchema:
    """Pruning, defaulting and validation for the custom resources of one CRD version."""

    def __init__(self, schema: Obj | None, preserve_unknown_fields: bool = False) -> None:
        self.schema = schema or {}
        self.preserve_unknown_fields = preserve_unknown_fields
        self.structural: Node = compile_structural(self.schema)
        self.validator = SchemaValidator(self.schema)
        status = (self.schema.get("properties") or {}).get("status")
        self.status_validator = SchemaValidator(status) if isinstance(status, dict) else None

    def decode(
        self, obj: Obj, strict: bool = False, from_storage: bool = False, keep_nulls: bool = False
    ) -> list[str]:
        """Coerce a decoded object in place (kube's ``unstructuredSchemaCoercer.apply``).

        Returns the unknown field paths (``strict``: for fieldValidation) in kube's order.
        Objects from storage have malformed metadata fields dropped and a missing generation
        set to 1. Raises ``DecodeError`` (Go's message) for metadata of the wrong type.
        ``keep_nulls``: an applied configuration, which no request decoder reads, keeps
        its nulls for defaulting and validation.
        """
        meta, found, unknown = objectmeta.get_object_meta(obj, from_storage, strict)
        if not self.preserve_unknown_fields:
            # pruning, then kube's PruneNonNullableNullsWithoutDefaults, in one walk
            unknown += pruning.prune(obj, self.structural, True, strict, drop_nulls=not keep_nulls)
        if self.structural.embedded_inside:
            err, paths = objectmeta.coerce(obj, self.structural, False, from_storage, strict)
            if err is not None:
                raise DecodeError(str(err))
            unknown += paths
        if found and meta is not None:
            if from_storage and not meta.get("generation"):
                meta = _with_generation(meta)
            obj["metadata"] = meta
        return unknown

    def default(self, obj: Obj) -> None:
        """Apply the schema's defaults in place (after ``decode``)."""
        defaulting.default(obj, self.structural)

    def validate(self, obj: Obj) -> list[FieldError]:
        return validation.validate_create(obj, self.structural, self.validator)

    def validate_update(self, obj: Obj, old: Obj) -> list[FieldError]:
        return validation.validate_update(obj, old, self.structural, self.validator)

    def validate_status_update(self, obj: Obj, old: Obj) -> list[FieldError]:
        return validation.validate_status_update(obj, old, self.structural, self.status_validator)

    def validate_value(self, value: Any, fld_path: str | None = None) -> list[FieldError]:
        """Only the OpenAPI value validation (kube's ``ValidateCustomResource``)."""
        return self.validator.validate(value, fld_path)


def _with_generation(meta: Obj) -> Obj:
    """Insert ``generation: 1`` where ObjectMeta's field order puts it."""
    out: Obj = {}
    order = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion")
    for key in order:
        if key in meta:
            out[key] = meta[key]
    out["generation"] = 1
    out.update({k: v for k, v in meta.items() if k not in out})
    return out
