"""How structural, defaulting and CEL errors join a schema's keyword errors (kube's
``validateCustomResourceDefinitionValidation``), with the other parts stubbed."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.apiextensions import validation_cel, validation_schema
from platform_api.apiextensions.validation_options import CREATE, Options
from platform_api.validation import field
from tests.apiextensions.builders import crd, create_errors, obj, schema_crd, ver


class _Compiled:
    def __init__(self, errors: list[field.FieldError]) -> None:
        self.cel_errors = [e for e in errors if e.field != ROOT]
        self.cost_errors = [e for e in errors if e.field == ROOT]


def _patch(
    monkeypatch: pytest.MonkeyPatch,
    structural: list[field.FieldError] | None = None,
    defaults: list[field.FieldError] | None = None,
    cel: list[field.FieldError] | None = None,
) -> list[str]:
    calls: list[str] = []

    def compile_schema(schema: dict[str, Any], path: str) -> _Compiled:
        calls.append(path)
        return _Compiled(list(cel or []))

    monkeypatch.setattr(validation_schema, "structural_errors", lambda s, p: list(structural or []))

    def default_errors(
        s: dict[str, Any], p: str, require_pruned: bool = True, cel_check: Any = None
    ) -> list[field.FieldError]:
        return [e for e in defaults or [] if require_pruned or "unknown" not in e.detail]

    monkeypatch.setattr(validation_schema, "default_errors", default_errors)
    monkeypatch.setattr(validation_cel, "compile_schema", compile_schema)
    return calls


ROOT = "spec.validation.openAPIV3Schema"


def test_structural_errors_skip_defaults_and_cel(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _patch(
        monkeypatch,
        structural=[
            field.required(
                f"{ROOT}.properties[a].type", "must not be empty for specified object fields"
            )
        ],
        defaults=[field.invalid(f"{ROOT}.default", {}, "never reached")],
    )
    assert create_errors(schema_crd(obj(("a", {})))) == [
        f"{ROOT}.properties[a].type: Required value: must not be empty for specified object fields"
    ]
    assert calls == []


def test_default_errors_skip_cel(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _patch(monkeypatch, defaults=[field.invalid(f"{ROOT}.properties[a].default", 1, "bad")])
    schema = obj(("a", {"type": "string", "default": 1}))
    assert create_errors(schema_crd(schema)) == [
        f"{ROOT}.properties[a].default: Invalid value: 1: bad"
    ]
    assert calls == []


def test_cel_errors_follow_schema_errors_except_below_them(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = f"{ROOT}.properties[%s].x-kubernetes-validations[0].rule"
    cel = [
        field.invalid(rules % "a", "x", "compile error a"),
        field.invalid(rules % "b", "x", "compile error b"),
        field.forbidden(ROOT, "total cost"),
    ]
    calls = _patch(monkeypatch, cel=cel)
    rule = [{"rule": "nope"}]
    schema = obj(
        (
            "a",
            {
                "type": "array",
                "uniqueItems": True,
                "items": {"type": "string"},
                "x-kubernetes-validations": rule,
            },
        ),
        ("b", {"type": "string", "x-kubernetes-validations": rule}),
    )
    assert create_errors(schema_crd(schema)) == [
        f"{ROOT}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since "
        "the runtime complexity becomes quadratic",
        f'{rules % "b"}: Invalid value: "x": compile error b',
        f"{ROOT}: Forbidden: total cost",
    ]
    assert calls == [ROOT]


def test_structural_init_error_only_when_nothing_else(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _patch(monkeypatch)
    assert create_errors(schema_crd(obj(("a", {"type": "string", "$schema": "x"})))) == [
        f"{ROOT}: Invalid value: \"\": OpenAPIV3Schema 'schema' is not supported"
    ]
    assert create_errors(schema_crd(obj(("a", {"type": "string", "id": "x"})))) == [
        f"{ROOT}.properties[a].id: Forbidden: id is not supported"
    ]
    assert calls == []


def test_unchanged_schema_suppresses_per_expression_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    at = f"{ROOT}.x-kubernetes-validations[0]"
    cel = [
        field.forbidden(f"{at}.rule", "estimated rule cost exceeds budget by factor of 2.0x (...)"),
        field.forbidden(
            f"{at}.messageExpression",
            "estimated messageExpression cost exceeds budget by factor of more than 100x (...)",
        ),
        field.invalid(f"{at}.rule", "r", "compile error"),
    ]
    _patch(monkeypatch, cel=cel)
    validation = {
        "openAPIV3Schema": {"type": "object", "x-kubernetes-validations": [{"rule": "r"}]}
    }
    strict = validation_schema.validate_validation(validation, False, CREATE, "spec.validation")
    lenient = validation_schema.validate_validation(
        validation, False, Options(suppress_per_expression_cost=True), "spec.validation"
    )
    assert strict == cel
    assert lenient == cel[2:]


def test_unpruned_defaults_ratchet(monkeypatch: pytest.MonkeyPatch) -> None:
    unpruned = field.invalid(f"{ROOT}.default", {"x": 1}, "must not have unknown fields")
    _patch(monkeypatch, defaults=[unpruned])
    validation = {"openAPIV3Schema": {"type": "object", "default": {"x": 1}}}
    assert validation_schema.validate_validation(validation, False, CREATE, "spec.validation") == [
        unpruned
    ]
    lenient = Options(require_pruned_defaults=False)
    assert (
        validation_schema.validate_validation(validation, False, lenient, "spec.validation") == []
    )


def test_per_version_schemas_report_per_version() -> None:
    schema = obj(("a", {"type": "string", "x-kubernetes-map-type": "atomic"}))
    definition = crd([ver("v1", schema=schema), ver("v2", storage=False, schema=obj())])
    assert create_errors(definition) == [
        'spec.versions[0].schema.openAPIV3Schema.properties[a].type: Invalid value: "string": '
        "must be object if x-kubernetes-map-type is specified"
    ]


def test_rules_run_on_defaults() -> None:
    scalar = {
        "type": "string",
        "default": "y",
        "x-kubernetes-validations": [{"rule": "self == 'x'"}],
    }
    rule = {"rule": "self.n < 2", "message": "too big", "fieldPath": ".n"}
    nested = obj(
        ("n", {"type": "integer"}), default={"n": 3}, **{"x-kubernetes-validations": [rule]}
    )
    assert create_errors(schema_crd(obj(("a", scalar), ("o", nested)))) == [
        f"{ROOT}.properties[a].default: Invalid value: \"y\": failed rule: self == 'x'",
        f"{ROOT}.properties[o].default.n: Invalid value: too big",
    ]


def test_schema_errors_hide_rule_errors_below_them() -> None:
    rules = [{"rule": "self.nope"}]
    listed = {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
    schema = obj(
        ("a", {**listed, "x-kubernetes-validations": rules}),
        ("b", {"type": "string", "x-kubernetes-validations": rules}),
    )
    errors = validation_schema.validate_validation(
        {"openAPIV3Schema": schema}, False, CREATE, "spec.validation"
    )
    assert [e.field for e in errors] == [
        f"{ROOT}.properties[a].uniqueItems",
        f"{ROOT}.properties[b].x-kubernetes-validations[0].rule",
    ]


def test_transition_rules_need_correlatable_parents() -> None:
    items = {
        "type": "string",
        "maxLength": 5,
        "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
    }
    schema = obj(("l", {"type": "array", "maxItems": 5, "items": items}))
    assert create_errors(schema_crd(schema)) == [
        f'{ROOT}.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == '
        f'oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within '
        f"{ROOT}.properties[l]"
    ]
