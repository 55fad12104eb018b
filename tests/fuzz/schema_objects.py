"""Objects of a built-in kind generated from its schema, for the property tests: every
field optional, scalars from small sets (so values repeat and collide), the special
types (quantities, times, int-or-strings) as the API writes them, raw JSON left out."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.schemas import (
    FIELDS_V1,
    INT_OR_STRING,
    MICRO_TIME,
    QUANTITY,
    RAW_EXTENSION,
    TIME,
)

SCHEME = builtin_scheme()
SCHEMAS = SCHEME.schemas
_WORDS = st.sampled_from(["", "a", "b-c", "é"])
_SPECIAL: dict[str, st.SearchStrategy[Any]] = {
    QUANTITY: st.sampled_from(["1", "500m", "2Gi", "0"]),
    INT_OR_STRING: st.one_of(st.integers(0, 70000), st.sampled_from(["", "http", "25%"])),
    TIME: st.sampled_from(["2026-01-02T03:04:05Z"]),
    MICRO_TIME: st.sampled_from(["2026-01-02T03:04:05.000006Z"]),
}
_SKIPPED = (RAW_EXTENSION, FIELDS_V1)  # raw JSON: not generated


def strategy(node: dict[str, Any], depth: int) -> st.SearchStrategy[Any] | None:
    """Values of a schema node; None for what is not generated (raw JSON, deep objects)."""
    ref, target = SCHEMAS.resolve(node)
    if ref in _SPECIAL:
        return _SPECIAL[ref]
    if ref in _SKIPPED or ref.endswith(("JSONSchemaPropsOrArray", "JSON")):
        return None
    if ref:
        node = target
    kind = node.get("type")
    if "properties" in node:
        if depth > 5:
            return None
        fields = {}
        for name, child in node["properties"].items():
            if name in ("apiVersion", "kind", "managedFields"):
                continue
            found = strategy(child, depth + 1)
            if found is not None:
                fields[name] = found
        return st.fixed_dictionaries({}, optional=fields)
    if "additionalProperties" in node:
        values = strategy(node["additionalProperties"], depth + 1)
        return None if values is None else st.dictionaries(_WORDS, values, max_size=2)
    if kind == "array":
        items = strategy(node.get("items", {}), depth + 1)
        return None if items is None else st.lists(items, max_size=2)
    if kind == "string":
        if node.get("format") == "byte":
            return st.sampled_from(["", "YQ==", "AAEC"])
        return _WORDS
    if kind == "integer":
        if node.get("format") == "int32":
            return st.integers(-(2**31), 2**31 - 1)
        return st.integers(-(2**63), 2**63 - 1)
    if kind == "boolean":
        return st.booleans()
    if kind == "number":
        return st.sampled_from([0, 1.5, -2.25])
    return None


def objects_of(definition: str) -> st.SearchStrategy[dict[str, Any]]:
    """Objects (without their type fields) of the schema ``definition``."""
    found = strategy(SCHEMAS.get(definition), 0)
    assert found is not None
    return found
