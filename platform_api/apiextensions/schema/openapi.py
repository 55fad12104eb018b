"""The OpenAPI schema as kube-openapi's ``validate`` package sees it, compiled once.

kube validates custom resources with kube-openapi's ``SchemaValidator`` built from the CRD
schema (``NewSchemaValidator``): ``x-kubernetes-int-or-string`` becomes the type list
``integer,string``, and formats the server does not know are dropped. Default values are
validated against ``Structural.ToKubeOpenAPI`` instead, which keeps both as written: ``VNode``
is compiled in either mode. The validator itself is ``openapi_check.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from platform_api.apiextensions.schema import formats
from platform_api.apiextensions.schema.goregex import GoRegexError, compile_go
from platform_api.apiextensions.schema.node import Obj, json_value

INT_OR_STRING = ("integer", "string")


class VNode:
    """A ``spec.Schema`` with what each of kube-openapi's validators needs precomputed."""

    __slots__ = (
        "additional",
        "additional_allows",
        "additional_present",
        "all_of",
        "any_of",
        "enum",
        "exclusive_maximum",
        "exclusive_minimum",
        "fast",
        "format",
        "format_check",
        "items",
        "list_map_keys",
        "list_type",
        "max_items",
        "max_length",
        "max_properties",
        "maximum",
        "min_items",
        "min_length",
        "min_properties",
        "minimum",
        "multiple_of",
        "not_",
        "nullable",
        "num_format",
        "num_type",
        "one_of",
        "pattern",
        "pattern_error",
        "pattern_rx",
        "properties",
        "required",
        "type_applies",
        "type_text",
        "types",
        "unique_items",
    )

    def __init__(self, raw: Obj, for_defaults: bool = False) -> None:
        kind = raw.get("type") or ""
        if raw.get("x-kubernetes-int-or-string") and not for_defaults:
            self.types: tuple[str, ...] = INT_OR_STRING
        else:
            self.types = (kind,) if kind else ()
        self.type_text = ",".join(self.types)
        self.nullable = bool(raw.get("nullable"))
        fmt = raw.get("format") or ""
        self.format: str = fmt if for_defaults else formats.crd_format(list(self.types), fmt)
        self.format_check: Callable[[str], bool] | None = formats.checker(self.format)
        self.type_applies = bool(self.types) or bool(self.format)
        self._numbers(raw)
        self._strings(raw)
        enum = raw.get("enum")
        self.enum: list[Any] | None = [json_value(v) for v in enum] if enum else None
        self.required: list[str] = list(raw.get("required") or [])
        self.list_type = raw.get("x-kubernetes-list-type")
        self.list_map_keys = list(raw.get("x-kubernetes-list-map-keys") or [])
        self.fast: Any = None  # the "certainly valid" predicate of openapi_fast.py
        self._children(raw, for_defaults)

    def _numbers(self, raw: Obj) -> None:
        self.maximum = _float(raw.get("maximum"))
        self.minimum = _float(raw.get("minimum"))
        self.multiple_of = _float(raw.get("multipleOf"))
        self.exclusive_maximum = bool(raw.get("exclusiveMaximum"))
        self.exclusive_minimum = bool(raw.get("exclusiveMinimum"))
        # the number validator gets type and format only when the type is unambiguous
        self.num_type = ""
        self.num_format = ""
        if len(self.types) == 1 and self.types[0] in ("integer", "number"):
            self.num_type = self.types[0]
            allowed = ("int32", "int64") if self.num_type == "integer" else ("float", "double")
            if self.format in allowed:
                self.num_format = self.format

    def _strings(self, raw: Obj) -> None:
        self.max_length: int | None = raw.get("maxLength")
        self.min_length: int | None = raw.get("minLength")
        self.max_items: int | None = raw.get("maxItems")
        self.min_items: int | None = raw.get("minItems")
        self.max_properties: int | None = raw.get("maxProperties")
        self.min_properties: int | None = raw.get("minProperties")
        self.unique_items = bool(raw.get("uniqueItems"))
        self.pattern: str = raw.get("pattern") or ""
        self.pattern_rx: re.Pattern[str] | None = None
        self.pattern_error = ""
        if self.pattern:
            try:
                self.pattern_rx = compile_go(self.pattern)
            except GoRegexError as e:
                self.pattern_error = str(e)

    def _children(self, raw: Obj, for_defaults: bool) -> None:
        props = raw.get("properties") or {}
        self.properties = {k: VNode(v, for_defaults) for k, v in props.items()}
        items = raw.get("items")
        self.items = VNode(items, for_defaults) if isinstance(items, dict) else None
        additional = raw.get("additionalProperties")
        self.additional_present = additional is not None
        self.additional_allows = additional is not False
        self.additional = VNode(additional, for_defaults) if isinstance(additional, dict) else None
        self.all_of = [VNode(s, for_defaults) for s in raw.get("allOf") or []]
        self.any_of = [VNode(s, for_defaults) for s in raw.get("anyOf") or []]
        self.one_of = [VNode(s, for_defaults) for s in raw.get("oneOf") or []]
        not_ = raw.get("not")
        self.not_ = VNode(not_, for_defaults) if isinstance(not_, dict) else None


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def compile_openapi(schema: Obj | None, for_defaults: bool = False) -> VNode:
    return VNode(schema or {}, for_defaults)
