"""Structural defaulting of custom resources, and the checks on a CRD's ``default`` values.

``default`` is kube's ``defaulting.Default``: a property's default fills it when it is absent
or null (unless nullable), items and additionalProperties values that are null take their
schema's default; it runs on writes and on objects read from storage.
``prune_nulls`` drops the non-nullable nulls that have no default first, as kube's decoder
does. ``default_errors`` is ``defaulting.ValidateDefaults`` for CRD validation: each default
must survive pruning, give valid metadata, and pass the value validation of its schema; CEL
rules on defaults are checked through the ``cel_check`` hook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.apiextensions.schema import objectmeta, pruning
from platform_api.apiextensions.schema.gotext import bad_value, deep_equal
from platform_api.apiextensions.schema.node import MISSING, Node, Obj, compile_structural
from platform_api.apiextensions.schema.validation import SchemaValidator
from platform_api.validation import field
from platform_api.validation.field import FieldError, aggregate

# (schema of the defaulted node, default value, field path of the default, is resource root)
CelCheck = Callable[[Obj, Any, str, bool], list[FieldError]]
_TYPE_META = {"apiVersion": "validation/v1", "kind": "Validation"}


def copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def default(x: Any, s: Node | None) -> None:
    """Apply the schema's defaults to ``x`` in place."""
    if s is None or not s.defaults_inside:
        return
    if isinstance(x, dict):
        for key, fill, nullable in s.prop_defaults:
            if key not in x or (x[key] is None and not nullable):
                x[key] = copy_json(fill)
        for key, sub in s.deep_defaults:
            if key in x:
                default(x[key], sub)
        additional = s.additional
        if additional is not None and (
            additional.defaults_inside or additional.default is not MISSING
        ):
            props = s.properties
            for key, value in x.items():
                if key in props:
                    continue
                if value is None and not additional.nullable:
                    fill = additional.default
                    x[key] = None if fill is MISSING else copy_json(fill)
                default(x[key], additional)
    elif isinstance(x, list):
        items = s.items
        if items is None:
            return
        for i, value in enumerate(x):
            if value is None and not items.nullable and items.default is not MISSING:
                x[i] = copy_json(items.default)
            default(x[i], items)


def prune_nulls(x: Any, s: Node | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults``: drop nulls the schema cannot hold or fill."""
    if s is None:
        return
    if isinstance(x, dict):
        for key in list(x):
            value = x[key]
            schema = s.child(key)
            if schema is None:
                continue
            if value is None:
                if not schema.nullable and schema.default is MISSING:
                    del x[key]
            else:
                prune_nulls(value, schema)
    elif isinstance(x, list) and s.items is not None:
        for value in x:
            prune_nulls(value, s.items)


def default_errors(
    schema: Obj | None,
    fld_path: str,
    require_pruned: bool = True,
    cel_check: CelCheck | None = None,
) -> list[FieldError]:
    """The errors of a CRD schema's default values (``ValidateDefaults``, at the root)."""
    root: Node = compile_structural(schema).as_embedded()
    checker = _DefaultsChecker(require_pruned, cel_check)
    checker.walk(fld_path, root, root, [], False)
    return checker.errors


class _DefaultsChecker:
    def __init__(self, require_pruned: bool, cel_check: CelCheck | None) -> None:
        self.require_pruned = require_pruned
        self.cel_check = cel_check
        self.errors: list[FieldError] = []

    def walk(
        self, path: str, s: Node, root: Node, steps: list[tuple[str, str]], inside_meta: bool
    ) -> None:
        if s.embedded:
            inside_meta, steps, root = False, [], s
        if s.default is not MISSING:
            if inside_meta:
                self.errors += self._meta_default(path, s, root, steps)
            else:
                self.errors += self._default(path, s, s is root)
        if s.items is not None:
            self.walk(f"{path}.items", s.items, root, [*steps, ("index", "")], inside_meta)
        for key, sub in s.properties.items():
            meta = inside_meta or (s.embedded and key in ("metadata", "apiVersion", "kind"))
            sub_path = f"{path}.properties[{key}]"
            self.walk(sub_path, sub, root, [*steps, ("child", key)], meta)

    def _default(self, path: str, s: Node, is_root: bool) -> list[FieldError]:
        value, at = s.default, f"{path}.default"
        errs: list[FieldError] = []
        if self.require_pruned:
            pruned = copy_json(value)
            pruning.prune(pruned, s, root=s.embedded)
            if not deep_equal(pruned, value):
                errs.append(field.invalid(at, bad_value(value), "must not have unknown fields"))
        value = copy_json(value)  # kube coerces the default in place before checking it
        err, _ = objectmeta.coerce(value, s, s.embedded, path=at)
        if err is not None:
            return [*errs, err]
        meta_errs = objectmeta.validate(value, s, root=s.embedded, path=at)
        if meta_errs:
            return errs + meta_errs
        value_errs = SchemaValidator(s.raw, for_defaults=True).validate(value, at)
        if value_errs:
            return errs + value_errs
        if self.cel_check is not None:
            errs += self.cel_check(s.raw, value, at, is_root)
        return errs

    def _meta_default(
        self, path: str, s: Node, root: Node, steps: list[tuple[str, str]]
    ) -> list[FieldError]:
        value, at = s.default, f"{path}.default"
        obj: Any = copy_json(value)
        for kind, key in reversed(steps):
            obj = {key: obj} if kind == "child" else [obj]
        if not isinstance(obj, dict):
            return [field.invalid(path, "", "failed to validate default value inside metadata")]
        for key, type_value in _TYPE_META.items():
            obj.setdefault(key, type_value)
        err, _ = objectmeta.coerce(obj, root, True)
        if err is not None:
            return [field.invalid(at, bad_value(value), f"must result in valid metadata: {err}")]
        meta_errs = objectmeta.validate(obj, root, root=True)
        if meta_errs:
            detail = f"must result in valid metadata: {aggregate(meta_errs)}"
            return [field.invalid(at, bad_value(value), detail)]
        value_errs = SchemaValidator(s.raw, for_defaults=True).validate(value, at)
        if value_errs:
            return value_errs
        if self.cel_check is not None:
            return self.cel_check(s.raw, value, at, s is root)
        return []
