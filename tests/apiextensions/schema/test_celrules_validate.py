"""Running x-kubernetes-validations on custom resources (kube's cel.Validator)."""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema.celrules import compile_schema

AT = "spec.versions[0].schema.openAPIV3Schema"


def validator(spec: dict[str, Any], **root: Any) -> Any:
    schema = {"type": "object", "properties": {"spec": spec}, **root}
    compiled = compile_schema(schema, AT)
    assert compiled.errors == []
    return compiled


def check(compiled: Any, obj: Any, old: Any = None, **kwargs: Any) -> list[str]:
    errs, _ = compiled.validate(obj, old, **kwargs)
    return [str(e) for e in errs]


def rules(*items: Any) -> dict[str, Any]:
    return {"x-kubernetes-validations": [i if isinstance(i, dict) else {"rule": i} for i in items]}


def test_messages_reasons_and_field_paths() -> None:
    spec = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer"},
            "min": {"type": "integer"},
            "name": {"type": "string", "maxLength": 10},
        },
        **rules(
            "self.min <= self.replicas",
            {"rule": "self.replicas < 10", "message": " too many "},
            {"rule": "self.replicas > 0", "messageExpression": "'need more than ' + self.name"},
            {"rule": "self.name != 'x'", "reason": "FieldValueForbidden", "fieldPath": ".name"},
            {"rule": "self.name != 'x'", "reason": "FieldValueRequired", "message": "req"},
            {"rule": "self.name != 'x'", "reason": "FieldValueDuplicate"},
        ),
    }
    compiled = validator(spec)
    assert check(compiled, {"spec": {"replicas": 0, "min": 2, "name": "x"}}) == [
        "spec: Invalid value: failed rule: self.min <= self.replicas",
        "spec: Invalid value: need more than x",
        "spec.name: Forbidden: failed rule: self.name != 'x'",
        "spec: Required value: req",
        "spec: Duplicate value",
    ]
    assert check(compiled, {"spec": {"replicas": 12, "min": 2, "name": "y"}}) == [
        "spec: Invalid value: too many",
    ]


def test_scalar_values_are_shown() -> None:
    compiled = validator(
        {
            "type": "object",
            "properties": {
                "foo": {
                    "type": "string",
                    **rules({"rule": "self == 'bar'", "message": "gotta be bar"}),
                },
                "n": {
                    "type": "array",
                    "items": {
                        "type": "integer",
                        **rules({"rule": "self % 2 == 1", "message": "gotta be odd"}),
                    },
                },
                "m": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "string",
                        **rules(
                            {
                                "rule": "self == 'value2' || self != 'value'",
                                "message": "must be value2 or not value",
                            },
                        ),
                    },
                },
            },
        }
    )
    obj = {"spec": {"foo": "baz", "n": [1, 2], "m": {"key": "value", "ok": "x"}}}
    assert check(compiled, obj) == [
        'spec.foo: Invalid value: "baz": gotta be bar',
        "spec.n[1]: Invalid value: 2: gotta be odd",
        'spec.m[key]: Invalid value: "value": must be value2 or not value',
    ]


def test_runtime_errors() -> None:
    compiled = validator(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            **rules("self.a == 'x'", "dyn(self.a) + 1 == 2"),
        }
    )
    assert check(compiled, {"spec": {}}) == [
        "spec: Invalid value: \"object\": no such key: a evaluating rule: self.a == 'x'",
        'spec: Invalid value: "object": no such key: a evaluating rule: dyn(self.a) + 1 == 2',
    ]
    assert check(compiled, {"spec": {"a": "x"}}) == [
        "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a "
        "supported operator, function or macro signature for rule: dyn(self.a) + 1 == 2",
    ]


def test_transition_rules_and_correlation() -> None:
    item = {
        "type": "object",
        "required": ["k"],
        "properties": {"k": {"type": "string"}, "v": {"type": "integer"}},
        **rules({"rule": "self.v >= oldSelf.v", "message": "v may not decrease"}),
    }
    compiled = validator(
        {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    **rules({"rule": "self == oldSelf", "message": "immutable"}),
                },
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": item,
                },
                "opt": {
                    "type": "string",
                    **rules(
                        {
                            "rule": "!oldSelf.hasValue() || self == oldSelf.value()",
                            "optionalOldSelf": True,
                            "message": "sticky",
                        }
                    ),
                },
            },
        }
    )
    new = {"spec": {"name": "a", "items": [{"k": "x", "v": 1}, {"k": "y", "v": 5}], "opt": "p"}}
    assert check(compiled, new) == []  # create: no old values, transition rules are skipped
    old = {"spec": {"name": "b", "items": [{"k": "y", "v": 2}, {"k": "x", "v": 3}], "opt": "q"}}
    assert check(compiled, new, old) == [
        'spec.name: Invalid value: "a": immutable',
        "spec.items[0]: Invalid value: v may not decrease",
        'spec.opt: Invalid value: "p": sticky',
    ]


def test_ratcheting_drops_errors_on_unchanged_values() -> None:
    compiled = validator(
        {
            "type": "object",
            "properties": {
                "a": {
                    "type": "string",
                    **rules({"rule": "self.startsWith('x')", "message": "x first"}),
                },
                "b": {
                    "type": "string",
                    **rules({"rule": "self.startsWith('x')", "message": "x first"}),
                },
            },
        }
    )
    old = {"spec": {"a": "bad", "b": "bad"}}
    new = {"spec": {"a": "bad", "b": "worse"}}
    warnings: list[str] = []
    assert check(compiled, new, old, warnings=warnings) == [
        'spec.b: Invalid value: "worse": x first'
    ]
    assert warnings == ['spec.a: Invalid value: "bad": x first']
    assert check(compiled, new, old, ratcheting=False) == [
        'spec.a: Invalid value: "bad": x first',
        'spec.b: Invalid value: "worse": x first',
    ]


def test_value_conversion_and_escaping() -> None:
    compiled = validator(
        {
            "type": "object",
            "properties": {
                "ratio": {"type": "number"},
                "when": {"type": "string", "format": "date-time"},
                "day": {"type": "string", "format": "date"},
                "wait": {"type": "string", "format": "duration"},
                "blob": {"type": "string", "format": "byte"},
                "foo-bar": {"type": "integer"},
                "ios": {"x-kubernetes-int-or-string": True},
            },
            **rules(
                "self.ratio + 0.5 == 1.5 && type(self.ratio) == double",
                "self.when > timestamp('2020-01-01T00:00:00Z') && self.day < self.when",
                "self.wait == duration('1h30m') && self.blob == b'hello'",
                "self.foo__dash__bar == 3 && has(self.foo__dash__bar)",
                "type(self.ios) == string || self.ios > 1",
            ),
        }
    )
    obj = {
        "spec": {
            "ratio": 1,
            "when": "2021-05-01T10:00:00Z",
            "day": "2021-05-01",
            "wait": "1h30m",
            "blob": "aGVsbG8=",
            "foo-bar": 3,
            "ios": "50%",
        }
    }
    assert check(compiled, obj) == []


def test_embedded_resource_and_root_metadata() -> None:
    schema = {
        "type": "object",
        **rules("self.metadata.name.startsWith('ok-')"),
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                        **rules("self.kind == 'Pod' && self.apiVersion == 'v1'"),
                    },
                },
            },
        },
    }
    compiled = compile_schema(schema, AT)
    assert compiled.errors == []
    obj = {"metadata": {"name": "ok-1"}, "spec": {"template": {"apiVersion": "v1", "kind": "Job"}}}
    assert check(compiled, obj) == [
        "spec.template: Invalid value: failed rule: self.kind == 'Pod' && self.apiVersion == 'v1'",
    ]


def test_all_of_rules_run_on_the_node() -> None:
    compiled = validator(
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            **rules("self.a < 10"),
            "allOf": [rules("self.a > 1")],
        }
    )
    assert check(compiled, {"spec": {"a": 0}}) == ["spec: Invalid value: failed rule: self.a > 1"]
    # as in kube, rules only under allOf do not make a validator
    alone = validator(
        {"type": "object", "properties": {"a": {"type": "integer"}}, "allOf": [rules("self.a > 1")]}
    )
    assert check(alone, {"spec": {"a": 0}}) == []


def test_cost_budget() -> None:
    compiled = validator(
        {"type": "object", "properties": {"a": {"type": "integer"}}, **rules("self.a > 1")}
    )
    errs, left = compiled.validate({"spec": {"a": 5}}, None, 0)
    assert [str(e) for e in errs] == [
        'spec: Invalid value: "object": validation failed due to running out of cost budget, '
        "no further validation rules will be run"
    ]
    assert left == -1
    errs, left = compiled.validate({"spec": {"a": 5}}, None, 100)
    assert errs == [] and left == 97


def test_per_call_limit() -> None:
    pattern = "^" + "a?" * 99 + "$"  # 200 characters: static cost 5,000,050, under 10M
    compiled = validator(
        {
            "type": "object",
            "properties": {"s": {"type": "string", "maxLength": 250_000}},
            **rules(f"self.s.matches('{pattern}')"),
        }
    )
    rule = f"self.s.matches('{pattern}')"
    assert check(compiled, {"spec": {"s": "b" * 250_000}}) == [
        "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no "
        f"further validation rules will be run due to call cost exceeds limit for rule: {rule}",
    ]
    assert check(compiled, {"spec": {"s": "b"}}) == [f"spec: Invalid value: failed rule: {rule}"]
