"""CRD validation of x-kubernetes-validations: costs, compile errors, field paths."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.apiextensions.schema.celrules import compile_schema, cost_error_message
from platform_api.apiextensions.schema.celrules_compile import TypeScope
from platform_api.cel.schematypes import decl_type

AT = "spec.versions[0].schema.openAPIV3Schema"


def _typed(kind: str) -> dict[str, Any]:
    if kind == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    return {"type": kind}


def array(kind: str, rule: str, max_items: int | None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "array",
        "items": _typed(kind),
        "x-kubernetes-validations": [{"rule": rule}],
    }
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def mapping(kind: str, rule: str, max_props: int | None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": _typed(kind),
        "x-kubernetes-validations": [{"rule": rule}],
    }
    if max_props is not None:
        schema["maxProperties"] = max_props
    return schema


def string(rule: str, max_length: int | None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "x-kubernetes-validations": [{"rule": rule}]}
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


def objects(rule: str, max_items: int | None) -> dict[str, Any]:
    item = {
        "type": "object",
        "required": ["required"],
        "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
    }
    schema: dict[str, Any] = {
        "type": "array",
        "items": item,
        "x-kubernetes-validations": [{"rule": rule}],
    }
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def max_cost(schema: dict[str, Any]) -> int:
    """kube's Compile(schema, SchemaDeclType(schema, false)) MaxCost of the only rule."""
    decl = decl_type(schema, False)
    assert decl is not None
    rule = TypeScope.of(decl).compile(decl, schema, schema["x-kubernetes-validations"][0])
    assert rule.error is None, rule.error
    return rule.max_cost


# (generator, rule, cost without limits, max elements, cost with them): compilation_test.go
COSTS = [
    (array, "number", "self.all(x, true)", 4718591, 10, 32),
    (array, "string", "self.all(x, true)", 3145727, 20, 62),
    (array, "boolean", "self.all(x, true)", 1887437, 5, 17),
    (array, "int-or-string", "self.all(x, true)", 4718591, 10, 32),
    (objects, None, "self.all(x, true)", 555128, 50, 152),
    (mapping, "number", "self.all(x, true)", 1348169, 10, 32),
    (mapping, "number", "has(self.x)", 0, 100, 0),
    (mapping, "string", "self.all(x, true)", 1179647, 3, 11),
    (mapping, "boolean", "self.all(x, true)", 943718, 100, 302),
    (string, None, "self.contains('test')", 314574, 10, 5),
    (string, None, "self.startsWith('test')", 2, 15, 2),
    (string, None, 'size(self + "hello") > size("hello")', 314578, 4, 7),
    (array, "number", "self[1] == 0.0", 2, 5000, 2),
    (array, "string", "self[1] == self[1]", 314577, 8, 314577),
    (array, "number", "self.all(x, self.all(y, true))", None, 10, 352),
    (array, "number", "self.all(x, self.all(y, self.all(z, true)))", None, 10, 3552),
    (string, None, 'self.matches("x")', 314574, 50, 22),
    (string, None, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7),
    (string, None, 'self.matches("")', 1, 100, 1),
    (array, "number", "self[3] == 0.0", 2, 0, 2),
    (mapping, "number", 'self["x"] == 0.0', 2, 0, 2),
    (string, None, 'self == "x"', 2, 0, 1),
    (array, "number", "self.all(x, x == 0.0)", 6291454, 3 * 1024 * 2048, 25165826),
]


@pytest.mark.parametrize(("gen", "kind", "rule", "calc", "limit", "limited"), COSTS)
def test_rule_cost_estimates(
    gen: Any, kind: str | None, rule: str, calc: int | None, limit: int, limited: int
) -> None:
    def build(bound: int | None) -> dict[str, Any]:
        return gen(rule, bound) if kind is None else gen(kind, rule, bound)

    # kube's schemaChecker skips expectations of 0
    if calc:
        assert max_cost(build(None)) == calc
    if limited:
        assert max_cost(build(limit)) == limited


def crd(spec_props: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": spec_props, **spec}},
    }


def errors(schema: dict[str, Any]) -> list[str]:
    return [str(e) for e in compile_schema(schema, AT).errors]


def test_compile_and_type_errors() -> None:
    schema = crd(
        {"x": {"type": "string"}},
        **{
            "x-kubernetes-validations": [
                {"rule": "self.nope == 1"},
                {"rule": "self.x"},
                {"rule": "self.x == 'a'", "messageExpression": "1"},
            ]
        },
    )
    path = f"{AT}.properties[spec].x-kubernetes-validations"

    # kube v1.36 prints the rule as Go's JSON of its internal type (recorded answers).
    def rule(text: str, expression: str = "") -> str:
        return (
            f'{{"Rule":"{text}","Message":"","MessageExpression":"{expression}",'
            '"Reason":null,"FieldPath":"","OptionalOldSelf":null}'
        )

    third = rule("self.x == 'a'", "1")
    assert errors(schema) == [
        f"{path}[0].rule: Invalid value: {rule('self.nope == 1')}: compilation failed: ERROR: "
        "<input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^",
        f"{path}[1].rule: Invalid value: {rule('self.x')}: cel expression must evaluate to a bool",
        f"{path}[2].messageExpression: Invalid value: {third}: "
        "messageExpression must evaluate to a string",
    ]


def test_rule_shape_errors() -> None:
    rules = [
        {"rule": " "},
        {"rule": "true", "message": " "},
        {"rule": "true", "message": "a\nb"},
        {"rule": "true ||\nfalse"},
        {"rule": "true", "messageExpression": " "},
        {"rule": "true", "reason": "Nope"},
        {"rule": "true", "fieldPath": ".nope"},
    ]
    schema = crd({"a": {"type": "string"}}, **{"x-kubernetes-validations": rules})
    path = f"{AT}.properties[spec].x-kubernetes-validations"
    assert errors(schema) == [
        f"{path}[0].rule: Required value: rule is not specified",
        f'{path}[1].message: Invalid value: " ": must be non-empty if specified',
        f'{path}[2].message: Invalid value: "a\\nb": must not contain line breaks',
        f"{path}[3].message: Required value: message must be specified if rule contains line breaks",
        f"{path}[4].messageExpression: Required value: messageExpression must be non-empty if specified",
        f'{path}[5].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", '
        '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
        f'{path}[6].fieldPath: Invalid value: ".nope": must be a valid path',
    ]


def test_transition_rules_on_uncorrelatable_parts() -> None:
    schema = crd(
        {
            "list": {
                "type": "array",
                "maxItems": 10,
                "items": {
                    "type": "string",
                    "maxLength": 10,
                    "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
                },
            },
            "keyed": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["k"],
                "items": {
                    "type": "object",
                    "required": ["k"],
                    "properties": {"k": {"type": "string"}},
                    "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
                },
            },
            "plain": {
                "type": "string",
                "x-kubernetes-validations": [{"rule": "self == 'a'", "optionalOldSelf": True}],
            },
        }
    )
    assert errors(schema) == [
        f"{AT}.properties[spec].properties[list].items.x-kubernetes-validations[0].rule: "
        f'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion '
        f"of the schema within {AT}.properties[spec].properties[list]",
        f"{AT}.properties[spec].properties[plain].x-kubernetes-validations[0].optionalOldSelf: "
        "Invalid value: true: may not be set if oldSelf is not used in rule",
    ]


def test_cost_limits() -> None:
    unbounded = {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, x == y))"}],
    }
    schema = crd({"l": unbounded})
    path = f"{AT}.properties[spec].properties[l].x-kubernetes-validations[0].rule"
    assert errors(schema) == [
        f"{path}: Forbidden: {cost_error_message('estimated rule cost', 2**64 - 1, 10_000_000)}",
        f"{path}: Forbidden: contributed to estimated rule cost total exceeding cost limit for "
        "entire OpenAPIv3 schema",
        f"{AT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire "
        "OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, "
        "or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are "
        "declared)",
    ]
    assert cost_error_message("x", 12_000_000, 10_000_000).startswith(
        "x exceeds budget by factor of 1.200000x"
    )
    assert "factor of 2.5x" in cost_error_message("x", 25_000_000, 10_000_000)


def test_cardinality_multiplies_rule_costs() -> None:
    item = {
        "type": "string",
        "maxLength": 1_000_000,
        "x-kubernetes-validations": [{"rule": "self.contains('x')"}],
    }
    bounded = crd({"l": {"type": "array", "maxItems": 10, "items": item}})
    assert errors(bounded) == []
    unbounded = crd({"l": {"type": "array", "maxItems": 1000, "items": item}})
    path = f"{AT}.properties[spec].properties[l].items.x-kubernetes-validations[0].rule"
    assert errors(unbounded)[0] == (
        f"{path}: Forbidden: estimated rule cost exceeds budget by factor of 40.0x (try "
        "simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, "
        "maps, and strings are declared)"
    )


def test_escaped_and_inaccessible_properties() -> None:
    schema = crd(
        {
            "foo-bar": {"type": "string"},
            "namespace": {"type": "string"},
            "1x": {"type": "string"},
        },
        **{
            "x-kubernetes-validations": [
                {"rule": "self.foo__dash__bar == 'a' && self.__namespace__ == 'b'"},
                {"rule": "has(self.foo__dash__bar)"},
            ]
        },
    )
    assert errors(schema) == []


@pytest.mark.parametrize(
    ("source", "issue"),
    [
        # a syntax error alone (cel-cpp adds a "<<nil>> parsetree" issue), its expected
        # tokens named as cel-go names them
        ("!2.5[", "ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting "),
        ("!2.5[", "'-', '!', '?', 'true'"),
        # cel-go's names in an overload's signature
        (
            "url('http://a') > duration('1s')",
            "ERROR: <input>:1:17: found no matching overload for '_>_' applied to "
            "'(kubernetes.URL, duration)'",
        ),
        (
            "!self.x % cidr('10.0.0.0/8')",
            "ERROR: <input>:1:9: found no matching overload for '_%_' applied to "
            "'(!error!, net.CIDR)'",
        ),
    ],
)
def test_compile_issues_in_cel_gos_words(source: str, issue: str) -> None:
    """The reference kube-apiserver v1.36's words for these rules (found by 250 random
    rules compared with it)."""
    schema = crd({"x": {"type": "string"}}, **{"x-kubernetes-validations": [{"rule": source}]})
    (found,) = errors(schema)
    assert issue in found
    assert "parsetree" not in found and "u003F" not in found


def test_types_in_messages_are_named_as_kube_names_them() -> None:
    """Each node's self is a selfType<n> of its own; its members are named by path
    (fields escaped, list items @idx, map values @elem), as the reference printed them."""
    item = {"type": "object", "properties": {"x": {"type": "integer"}}}
    props = {
        "o": item,
        "l": {"type": "array", "maxItems": 3, "items": item},
        "m": {"type": "object", "maxProperties": 3, "additionalProperties": item},
        "a-b": item,
    }
    rules = ["string(self.o)", "string(self.l)", "string(self.m['k'])", "string(self.a__dash__b)"]
    schema = crd(props, **{"x-kubernetes-validations": [{"rule": f"{r} == ''"} for r in rules]})
    schema["x-kubernetes-validations"] = [{"rule": "string(self.spec) == ''"}]
    applied = [e.split("applied to ")[1].split("\n")[0] for e in errors(schema)]
    spec_self = applied[0].removeprefix("'(").split(".")[0]
    root_self = applied[4].removeprefix("'(").split(".")[0]
    assert spec_self.startswith("selfType") and root_self.startswith("selfType")
    assert spec_self != root_self
    assert applied == [
        f"'({spec_self}.o)'",
        f"'(list({spec_self}.l.@idx))'",
        f"'({spec_self}.m.@elem)'",
        f"'({spec_self}.a__dash__b)'",
        f"'({root_self}.spec)'",
    ]
