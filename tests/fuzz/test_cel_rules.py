"""Property tests of x-kubernetes-validations on custom resources: over any object of a
schema with every value type CEL sees (integers at the edges of int64, strings, maps,
list-maps, sets, int-or-strings, quantities-as-strings, nullable and free-form fields),
rules that can overflow, index out of range, divide by zero or meet a null evaluate to
field errors, never an exception, on creates and on updates (transition rules)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from platform_api.apiextensions.schema.celrules import compile_schema

Obj = dict[str, Any]
INT64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([0, 1, -1, 2**63 - 1]))
WORDS = st.sampled_from(["", "a", "b", "1Gi", "10%", "é", "x" * 70])

SPEC: Obj = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "m": {"type": "integer", "format": "int32"},
        "f": {"type": "number"},
        "s": {"type": "string", "maxLength": 80},
        "b": {"type": "boolean"},
        "size": {"x-kubernetes-int-or-string": True},
        "labels": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "maxProperties": 5,
        },
        "items": {
            "type": "array",
            "maxItems": 4,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "v": {"type": "integer"}},
            },
        },
        "tags": {
            "type": "array",
            "maxItems": 4,
            "x-kubernetes-list-type": "set",
            "items": {"type": "string", "maxLength": 10},
        },
        "opt": {"type": "object", "nullable": True, "properties": {"x": {"type": "integer"}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
    "x-kubernetes-validations": [
        {"rule": "!has(self.n) || !has(self.m) || self.n + self.m > self.n - 1"},
        {"rule": "!has(self.n) || self.n * 2 != 7"},
        {
            "rule": "!has(self.m) || !has(self.n) || self.n / (self.m - self.m + 1) >= -9223372036854775808"
        },
        {"rule": "!has(self.n) || !has(self.m) || self.m != 0 || self.n / self.m == 1"},
        {"rule": "!has(self.s) || self.s.size() < 100 && self.s.matches('^[a-z]*$') || true"},
        {"rule": "!has(self.s) || self.s.substring(1) != 'zz'"},
        {"rule": "!has(self.tags) || self.tags.all(t, t.size() < 20)"},
        {"rule": "!has(self.items) || self.items.exists_one(i, i.name == 'a') || true"},
        {"rule": "!has(self.items) || size(self.items) == 0 || self.items[0].v != 99"},
        {"rule": "!has(self.labels) || self.labels.all(k, self.labels[k] != 'forbidden')"},
        {"rule": "!has(self.size) || type(self.size) == string || self.size >= 0"},
        {"rule": "!has(self.opt) || self.opt == null || !has(self.opt.x) || self.opt.x != 3"},
        {"rule": "self.?opt.?x.orValue(0) < 1000 || true"},
        {"rule": "!has(self.f) || self.f != 0.5"},
        {
            "rule": "!has(self.s) || !isQuantity(self.s) || quantity(self.s).isLessThan(quantity('1Pi'))"
        },
        {"rule": "!has(self.free) || self.free == self.free"},
        {"rule": "self.n == oldSelf.n || true", "message": "n changed"},
        {"rule": "!has(self.s) || !has(oldSelf.s) || self.s.size() >= oldSelf.s.size() || true"},
        {
            "rule": "!has(self.n) || self.n < 10",
            "messageExpression": "self.n > 100 ? 'n is large' : 'n is small'",
        },
    ],
}
SCHEMA: Obj = {"type": "object", "properties": {"spec": SPEC}}
FREE = st.recursive(
    st.none() | st.booleans() | INT64 | WORDS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(WORDS, inner, max_size=2),
    max_leaves=6,
)
ITEMS = st.lists(
    st.fixed_dictionaries({"name": WORDS}, optional={"v": INT64}),
    max_size=4,
    unique_by=lambda i: i["name"],
)
SPECS = st.fixed_dictionaries(
    {},
    optional={
        "n": INT64,
        "m": st.integers(-(2**31), 2**31 - 1),
        "f": st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.5, 1e308]),
        "s": WORDS,
        "b": st.booleans(),
        "size": st.integers(-5, 5) | WORDS,
        "labels": st.dictionaries(WORDS, WORDS, max_size=5),
        "items": ITEMS,
        "tags": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True),
        "opt": st.none() | st.fixed_dictionaries({}, optional={"x": INT64}),
        "free": st.dictionaries(WORDS, FREE, max_size=3),
    },
)
COMPILED = compile_schema(SCHEMA, "spec.versions[0].schema.openAPIV3Schema")


def test_the_rules_compile() -> None:
    assert COMPILED.errors == []


@given(SPECS, st.none() | SPECS)
def test_rules_meet_any_value_with_field_errors_only(spec: Obj, old: Obj | None) -> None:
    errors, _ = COMPILED.validate({"spec": spec}, None if old is None else {"spec": old})
    for error in errors:
        assert str(error).startswith("spec"), str(error)
