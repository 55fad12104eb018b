"""The rules a CRD's ``openAPIV3Schema`` obeys beyond being structural.

kube's ``ValidateCustomResourceDefinitionOpenAPISchema``: keywords kube does not support,
the ``x-kubernetes-*`` extensions and how they combine, ``default`` where pruning would be
ambiguous, the shape of ``x-kubernetes-validations``.  Every error here is a "schema
error"; the CEL compile errors of a node's rules count only where its subtree has none.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from platform_api.apiextensions import validation_gojson as gojson
from platform_api.apiextensions import validation_schemautil as util
from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
META_FIELDS = ("metadata", "kind", "apiVersion")
RULE_REASONS = (
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
)


@dataclass(frozen=True)
class Walk:
    """kube's ``specStandardValidatorV3`` plus the options the walk reads."""

    allow_defaults: bool = True
    disallow_defaults_reason: str = ""
    inside_resource_meta: bool = False
    require_valid_property_type: bool = True
    require_atomic_set_type: bool = True
    require_map_list_keys_map_set_validation: bool = True

    def forbid_defaults(self, reason: str) -> Walk:
        return replace(self, allow_defaults=False, disallow_defaults_reason=reason)


def _keywords(s: Obj, walk: Walk, path: str) -> list[FieldError]:
    """``specStandardValidatorV3.validate``: one node's own keywords."""
    errs = []
    kind = s.get("type") or ""
    if walk.require_valid_property_type and kind and kind not in util.OPENAPI_V3_TYPES:
        errs.append(
            field.not_supported(f"{path}.type", field.plain(kind), list(util.OPENAPI_V3_TYPES))
        )
    if s.get("default") is not None and not walk.allow_defaults:
        detail = "must not be set"
        if walk.disallow_defaults_reason:
            detail += " " + walk.disallow_defaults_reason
        errs.append(field.forbidden(f"{path}.default", detail))
    if s.get("id"):
        errs.append(field.forbidden(f"{path}.id", "id is not supported"))
    if s.get("additionalItems") is not None:
        errs.append(field.forbidden(f"{path}.additionalItems", "additionalItems is not supported"))
    for key in ("patternProperties", "definitions"):
        if s.get(key):
            errs.append(field.forbidden(f"{path}.{key}", f"{key} is not supported"))
    if s.get("dependencies") is not None:
        errs.append(field.forbidden(f"{path}.dependencies", "dependencies is not supported"))
    if s.get("$ref") is not None:
        errs.append(field.forbidden(f"{path}.$ref", "$ref is not supported"))
    if kind == "null":
        errs.append(
            field.forbidden(
                f"{path}.type", "type cannot be set to null, use nullable as an alternative"
            )
        )
    if isinstance(s.get("items"), list) and s["items"]:
        errs.append(
            field.forbidden(f"{path}.items", "items must be a schema object and not an array")
        )
    if walk.inside_resource_meta and s.get("x-kubernetes-embedded-resource"):
        errs.append(
            field.forbidden(
                f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"
            )
        )
    return errs


def schema_errors(s: Obj | None, path: str, walk: Walk, is_root: bool) -> list[FieldError]:
    """The schema errors of ``s`` and everything below it, in kube's order."""
    if s is None:
        return []
    errs = _keywords(s, walk, path)
    if s.get("uniqueItems"):
        errs.append(
            field.forbidden(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    errs += _children(s, path, walk, is_root)
    errs += _extensions(s, path, walk)
    errs += _rules(s, path)
    return errs


def _children(s: Obj, path: str, walk: Walk, is_root: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    extra = s.get("additionalProperties")
    properties = s.get("properties") or {}
    if extra is not None:
        if properties and (extra is False or isinstance(extra, dict)):
            errs.append(
                field.forbidden(
                    f"{path}.additionalProperties",
                    "additionalProperties and properties are mutual exclusive",
                )
            )
        sub = walk
        if walk.inside_resource_meta:
            sub = walk.forbid_defaults("inside additionalProperties applying to object metadata")
        if isinstance(extra, dict):
            errs += schema_errors(extra, f"{path}.additionalProperties", sub, False)
    for name, prop in properties.items():
        sub = walk
        if (is_root or s.get("x-kubernetes-embedded-resource")) and name in META_FIELDS:
            sub = replace(sub, inside_resource_meta=True)
            if is_root:
                sub = sub.forbid_defaults(f"in top-level {name}")
        errs += schema_errors(prop, f"{path}.properties[{name}]", sub, False)
    errs += schema_errors(s.get("not"), f"{path}.not", walk, False)
    for key in ("allOf", "oneOf", "anyOf"):
        for i, clause in enumerate(s.get(key) or []):
            errs += schema_errors(clause, f"{path}.{key}[{i}]", walk, False)
    for name, definition in (s.get("definitions") or {}).items():
        errs += schema_errors(definition, f"{path}.definitions[{name}]", walk, False)
    items = s.get("items")
    if isinstance(items, dict):
        errs += schema_errors(items, f"{path}.items", walk, False)
    elif isinstance(items, list):
        for i, item in enumerate(items):
            errs += schema_errors(item, f"{path}.items[{i}]", walk, False)
    for name, dependency in (s.get("dependencies") or {}).items():
        if isinstance(dependency, dict):
            errs += schema_errors(dependency, f"{path}.dependencies[{name}]", walk, False)
    return errs


def _type_must_be(s: Obj, path: str, kind: str, extension: str) -> list[FieldError]:
    if s.get("type") == kind:
        return []
    detail = f"must be {kind} if {extension} is specified"
    if not s.get("type"):
        return [field.required(f"{path}.type", detail)]
    return [field.invalid(f"{path}.type", s["type"], detail)]


def _extensions(s: Obj, path: str, walk: Walk) -> list[FieldError]:
    errs: list[FieldError] = []
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(
            field.invalid(
                f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"
            )
        )
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None:
        errs += _type_must_be(s, path, "object", "x-kubernetes-map-type")
        if map_type not in ("atomic", "granular"):
            errs.append(
                field.not_supported(
                    f"{path}.x-kubernetes-map-type", field.plain(map_type), ["atomic", "granular"]
                )
            )
    list_type = s.get("x-kubernetes-list-type")
    item = s.get("items")
    if list_type is not None and s.get("type") != "array":
        errs += _type_must_be(s, path, "array", "x-kubernetes-list-type")
    elif walk.require_atomic_set_type and list_type == "set" and isinstance(item, dict):
        errs += _set_items(item, path)
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(
            field.not_supported(
                f"{path}.x-kubernetes-list-type", field.plain(list_type), ["atomic", "set", "map"]
            )
        )
    keys = s.get("x-kubernetes-list-map-keys") or []
    if keys and list_type is None:
        errs.append(
            field.required(
                f"{path}.x-kubernetes-list-type",
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )
        )
    elif keys and list_type != "map":
        errs.append(
            field.invalid(
                f"{path}.x-kubernetes-list-type",
                list_type,
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )
        )
    if list_type == "map":
        errs += _map_list(s, path, keys)
    if walk.require_map_list_keys_map_set_validation:
        errs += util.validate_map_list_keys_map_set(s, path)
    return errs


def _set_items(item: Obj, path: str) -> list[FieldError]:
    detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
    shown = gojson.text(item.get("x-kubernetes-list-type"))
    if item.get("type") == "array" and item.get("x-kubernetes-list-type") not in (None, "atomic"):
        return [field.invalid(f"{path}.items.x-kubernetes-list-type", shown, detail)]
    if item.get("type") == "object" and item.get("x-kubernetes-map-type") != "atomic":
        # kube shows the items' list type here, not their map type
        return [field.invalid(f"{path}.items.x-kubernetes-map-type", shown, detail)]
    return []


def _map_list(s: Obj, path: str, keys: list[str]) -> list[FieldError]:
    errs = []
    items = s.get("items")
    if not keys:
        errs.append(
            field.required(
                f"{path}.x-kubernetes-list-map-keys",
                "must not be empty if x-kubernetes-list-type is map",
            )
        )
    if items is None:
        errs.append(
            field.required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map")
        )
        return errs
    if not isinstance(items, dict):
        errs.append(
            field.invalid(
                f"{path}.items",
                gojson.text(gojson.items(items)),
                "must only have a single schema if x-kubernetes-list-type is map",
            )
        )
        return errs
    item_type = items.get("type") or ""
    if item_type != "object":
        errs.append(
            field.invalid(
                f"{path}.items.type",
                item_type,
                "must be object if parent array's x-kubernetes-list-type is map",
            )
        )
        return errs
    return errs + _map_list_keys(items, path, keys)


def _map_list_keys(items: Obj, path: str, keys: list[str]) -> list[FieldError]:
    errs = []
    properties = items.get("properties") or {}
    seen: set[str] = set()
    for key in keys:
        prop = properties.get(key)
        if prop is None:
            errs.append(
                field.invalid(
                    f"{path}.x-kubernetes-list-map-keys",
                    gojson.text(keys),
                    "entries must all be names of item properties",
                )
            )
        elif prop.get("type") in ("array", "object"):
            errs.append(
                field.invalid(
                    f"{path}.items.properties[{key}].type",
                    "object",  # kube shows the item's type
                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                )
            )
        if key in seen:
            errs.append(
                field.invalid(
                    f"{path}.x-kubernetes-list-map-keys",
                    gojson.text(keys),
                    "must not contain duplicate entries",
                )
            )
        seen.add(key)
    return errs


def _has_newlines(text: str) -> bool:
    return "\n" in text or "\r" in text


def _rules(s: Obj, path: str) -> list[FieldError]:
    """The shape of each ``x-kubernetes-validations`` entry (CEL compiles it elsewhere)."""
    errs = []
    for i, rule in enumerate(s.get("x-kubernetes-validations") or []):
        at = f"{path}.x-kubernetes-validations[{i}]"
        text = (rule.get("rule") or "").strip()
        message = rule.get("message") or ""
        expression = rule.get("messageExpression") or ""
        if not text:
            errs.append(field.required(f"{at}.rule", "rule is not specified"))
        elif message and not message.strip():
            errs.append(field.invalid(f"{at}.message", message, "must be non-empty if specified"))
        elif _has_newlines(message.strip()):
            errs.append(field.invalid(f"{at}.message", message, "must not contain line breaks"))
        elif _has_newlines(text) and not message.strip():
            errs.append(
                field.required(
                    f"{at}.message", "message must be specified if rule contains line breaks"
                )
            )
        if expression and not expression.strip():
            errs.append(
                field.required(
                    f"{at}.messageExpression", "messageExpression must be non-empty if specified"
                )
            )
        reason = rule.get("reason")
        if reason is not None and reason not in RULE_REASONS:
            errs.append(field.not_supported(f"{at}.reason", reason, list(RULE_REASONS)))
        errs += _rule_field_path(s, rule.get("fieldPath") or "", f"{at}.fieldPath")
    return errs


def _rule_field_path(s: Obj, path: str, at: str) -> list[FieldError]:
    errs = []
    if path and not path.strip():
        errs.append(field.invalid(at, path, "must be non-empty if specified"))
    if _has_newlines(path):
        errs.append(field.invalid(at, path, "must not contain line breaks"))
    if path and util.structural_init_error(s) is None:
        try:
            util.valid_field_path(path, s)
        except ValueError:
            errs.append(field.invalid(at, path, "must be a valid path"))
    return errs
