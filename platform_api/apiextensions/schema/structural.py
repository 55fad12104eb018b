"""Is a CRD schema structural? kube's ``NewStructural`` + ``ValidateStructural``.

``structural_errors(schema, fld_path)`` returns, for a CRD version's ``openAPIV3Schema`` (a JSON
dict), kube's structural-schema violations with its messages and paths, sorted as kube
sorts them (by text). A schema ``NewStructural`` cannot even convert (``$ref``, ``items`` as
an array, ...) yields that single error, which kube's CRD validation reports only when the
OpenAPI checks found nothing else: ``structural_init_error`` tells them apart.

Go turns the JSON into typed structs first, so "set" here means what survives that: an empty
``required`` or ``x-kubernetes-list-map-keys`` list is still set, an empty ``enum`` or
``allOf`` is not, ``nullable: false`` is not.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema.goregex import go_error
from platform_api.apiextensions.schema.node import Obj
from platform_api.validation import field
from platform_api.validation.field import FieldError

ROOT, ITEM, FIELD = "root", "item", "field"
_UNSUPPORTED = (
    ("id", "id"),
    ("$schema", "schema"),
    ("$ref", "$ref"),
    ("patternProperties", "patternProperties"),
    ("dependencies", "dependencies"),
    ("additionalItems", "additionalItems"),
    ("definitions", "definitions"),
)
_PRESENT_LISTS = ("required", "x-kubernetes-list-map-keys", "x-kubernetes-validations")
_PRESENT = (
    "maximum", "minimum", "maxLength", "minLength", "maxItems", "minItems", "multipleOf",
    "maxProperties", "minProperties", "not", "externalDocs", "default", "example",
    "x-kubernetes-list-type", "x-kubernetes-map-type",
)  # fmt: skip
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
_EMPTY_TYPE = {
    ROOT: "must not be empty at the root",
    ITEM: "must not be empty for specified array items",
    FIELD: "must not be empty for specified object fields",
}


def _set(key: str, value: Any, nested: bool = False) -> bool:
    """Whether a keyword survives Go's conversion as a non-zero value.

    Under allOf/anyOf/oneOf/not (``nested``) empty ``properties`` are kept and
    ``additionalProperties: false`` is dropped; in the structural schema the reverse.
    """
    if value is None:
        return False
    if key in _PRESENT_LISTS or key in _PRESENT:
        return True
    if key == "items":
        return isinstance(value, dict)
    if key == "properties":
        return nested or bool(value)
    if key == "additionalProperties":
        return value is not False or not nested
    return bool(value)


def _only_type(schema: Any, type_name: str) -> bool:
    if not isinstance(schema, dict) or schema.get("type") != type_name:
        return False
    return all(k == "type" or not _set(k, v, nested=True) for k, v in schema.items())


def _int_or_string_any_of(any_of: Any) -> bool:
    return (
        isinstance(any_of, list)
        and len(any_of) == 2
        and _only_type(any_of[0], "integer")
        and _only_type(any_of[1], "string")
    )


# -- NewStructural -------------------------------------------------------------------------


def _conversion_error(s: Obj) -> str | None:
    for key, name in _UNSUPPORTED:
        if _set(key, s.get(key)):
            return f"OpenAPIV3Schema '{name}' is not supported"
    for key in ("not",):
        if isinstance(s.get(key), dict) and (err := _conversion_error(s[key])):
            return err
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in s.get(key) or []:
            if err := _conversion_error(sub):
                return err
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
    items = s.get("items")
    if isinstance(items, list) and items:
        return "OpenAPIV3Schema 'items' must be a schema, but is an array"
    if isinstance(items, dict) and (err := _conversion_error(items)):
        return err
    for sub in (s.get("properties") or {}).values():
        if err := _conversion_error(sub):
            return err
    additional = s.get("additionalProperties")
    if isinstance(additional, dict):
        return _conversion_error(additional)
    return None


def structural_init_error(schema: Obj | None, fld_path: str) -> FieldError | None:
    """The error of kube's ``NewStructural`` for this schema, if it fails."""
    err = _conversion_error(schema or {})
    return None if err is None else field.invalid(fld_path, "", err)


def structural_errors(schema: Obj | None, fld_path: str) -> list[FieldError]:
    """kube's structural-schema errors for a CRD version's ``openAPIV3Schema``."""
    init = structural_init_error(schema, fld_path)
    if init is not None:
        return [init]
    s = schema or {}
    errs = _invariants(s, ROOT, fld_path)
    errs += _completeness(s, s, fld_path, fld_path)
    return sorted(errs, key=str)


def is_structural(schema: Obj | None) -> bool:
    return not structural_errors(schema, "")


# -- ValidateStructural: invariants ----------------------------------------------------------


def _invariants(s: Obj, level: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = s.get("type") or ""
    items, props = s.get("items"), s.get("properties") or {}
    additional = s.get("additionalProperties")
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    if kind == "array" and not isinstance(items, dict):
        errs.append(field.required(f"{path}.items", "must be specified"))
    if isinstance(items, dict):
        errs += _invariants(items, ITEM, f"{path}.items")
    for key, sub in props.items():
        errs += _invariants(sub, FIELD, f"{path}.properties[{key}]")
    if additional is not None:
        if level == ROOT:
            errs.append(
                field.forbidden(f"{path}.additionalProperties", "must not be used at the root")
            )
        if isinstance(additional, dict):
            errs += _invariants(additional, FIELD, f"{path}.additionalProperties")
    if int_or_string and preserve:
        detail = "must be false if x-kubernetes-int-or-string is true"
        errs.append(field.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", True, detail))
    if int_or_string and embedded:
        detail = "must be false if x-kubernetes-int-or-string is true"
        errs.append(field.invalid(f"{path}.x-kubernetes-embedded-resource", True, detail))
    skip_any_of = _int_or_string_any_of(s.get("anyOf"))
    all_of = s.get("allOf") or []
    skip_first = bool(all_of) and _int_or_string_any_of(all_of[0].get("anyOf"))
    errs += _value_validation(s, skip_any_of, skip_first, level, path)
    errs += _type_rules(s, kind, level, path, embedded, preserve, int_or_string)
    check_meta = level == ROOT or embedded
    for key in ("kind", "apiVersion"):
        if key in props and check_meta and (props[key].get("type") or "") != "string":
            sub_type = props[key].get("type") or ""
            at = f"{path}.properties[{key}].type"
            errs.append(field.invalid(at, sub_type, "must be string"))
    if "metadata" in props:
        errs += _metadata(props["metadata"], check_meta, level, f"{path}.properties[metadata]")
    if embedded and not preserve and not props:
        detail = (
            "must not be empty if x-kubernetes-embedded-resource is true without "
            "x-kubernetes-preserve-unknown-fields"
        )
        errs.append(field.required(f"{path}.properties", detail))
    return errs


def _type_rules(
    s: Obj, kind: str, level: str, path: str, embedded: bool, preserve: bool, int_or_string: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    if embedded and kind != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        if not kind:
            errs.append(field.required(f"{path}.type", detail))
        else:
            errs.append(field.invalid(f"{path}.type", kind, detail))
    elif not kind and not int_or_string and not preserve:
        errs.append(field.required(f"{path}.type", _EMPTY_TYPE[level]))
    if embedded and s.get("additionalProperties") is not None:
        detail = "must not be used if x-kubernetes-embedded-resource is set"
        errs.append(field.forbidden(f"{path}.additionalProperties", detail))
    if level == ROOT and kind and kind != "object":
        errs.append(field.invalid(f"{path}.type", kind, "must be object at the root"))
    return errs


def _metadata(s: Obj, check_meta: bool, level: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = s.get("type") or ""
    if check_meta and kind != "object":
        errs.append(field.invalid(f"{path}.type", kind, "must be object"))
    if level == ROOT:
        props = s.get("properties") or {}
        names = set(props)
        cleared = names in ({"name", "generateName"}, {"name"}, {"generateName"})
        rest = {k: v for k, v in s.items() if k not in ("type", "default")}
        if cleared:
            rest.pop("properties", None)
        if any(_set(k, v) for k, v in rest.items()):
            detail = (
                "must not specify anything other than name and generateName, but metadata is "
                "implicitly specified"
            )
            errs.append(field.forbidden(path, detail))
    return errs


def _value_validation(
    v: Obj, skip_any_of: bool, skip_first_all_of: bool, level: str, path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    if not skip_any_of:
        for i, sub in enumerate(v.get("anyOf") or []):
            errs += _nested(sub, False, level, f"{path}.anyOf[{i}]")
    for i, sub in enumerate(v.get("allOf") or []):
        errs += _nested(sub, skip_first_all_of and i == 0, level, f"{path}.allOf[{i}]")
    for i, sub in enumerate(v.get("oneOf") or []):
        errs += _nested(sub, False, level, f"{path}.oneOf[{i}]")
    if isinstance(v.get("not"), dict):
        errs += _nested(v["not"], False, level, f"{path}.not")
    pattern = v.get("pattern") or ""
    if pattern:
        err = go_error(pattern)
        if err is not None:
            detail = f"must be a valid regular expression, but isn't: {err}"
            errs.append(field.invalid(f"{path}.pattern", pattern, detail))
    return errs


_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


def _nested(v: Obj, skip_any_of: bool, level: str, path: str) -> list[FieldError]:
    """``validateNestedValueValidation``: a schema under allOf/anyOf/oneOf/not."""
    errs = _value_validation(v, skip_any_of, False, level, path)
    if isinstance(v.get("items"), dict):
        errs += _nested(v["items"], False, level, f"{path}.items")
    for key, sub in (v.get("properties") or {}).items():
        errs += _nested(sub, False, FIELD, f"{path}.properties[{key}]")
    for key, detail in _NESTED_FORBIDDEN:
        value = v.get(key)
        if key in ("x-kubernetes-list-map-keys", "x-kubernetes-validations"):
            present = bool(value)
        elif key == "x-kubernetes-preserve-unknown-fields":
            present = value is True
        else:
            present = _set(key, value, nested=True)
        if present:
            errs.append(field.forbidden(f"{path}.{key}", detail))
    if "metadata" in (v.get("properties") or {}):
        detail = "must not be specified in a nested context"
        errs.append(field.forbidden(f"{path}.properties[metadata]", detail))
    return errs


# -- ValidateStructural: completeness ----------------------------------------------------------


def _completeness(v: Obj, s: Obj | None, s_path: str, v_path: str) -> list[FieldError]:
    """Every property or items a junctor mentions must exist in the structural schema."""
    if s is None:
        return [field.required(s_path, f"because it is defined in {v_path}")]
    errs: list[FieldError] = []
    if isinstance(v.get("not"), dict):
        errs += _nested_completeness(v["not"], s, s_path, f"{v_path}.not")
    for key in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(v.get(key) or []):
            errs += _nested_completeness(sub, s, s_path, f"{v_path}.{key}[{i}]")
    return errs


def _nested_completeness(v: Obj, s: Obj | None, s_path: str, v_path: str) -> list[FieldError]:
    if s is None:
        return [field.required(s_path, f"because it is defined in {v_path}")]
    errs = _completeness(v, s, s_path, v_path)
    if isinstance(v.get("items"), dict):
        items = s.get("items") if isinstance(s.get("items"), dict) else None
        errs += _nested_completeness(v["items"], items, f"{s_path}.items", f"{v_path}.items")
    s_props = s.get("properties") or {}
    for key, sub in (v.get("properties") or {}).items():
        at_s, at_v = f"{s_path}.properties[{key}]", f"{v_path}.properties[{key}]"
        if key not in s_props:
            errs.append(field.required(at_s, f"because it is defined in {at_v}"))
        else:
            errs += _nested_completeness(sub, s_props[key], at_s, at_v)
    return errs
