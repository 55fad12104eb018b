"""Object literals of mutating policies: rewritten, compiled, evaluated, checked."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.cel import CELError
from platform_api.cel.admission import PolicyCompiler
from platform_api.cel.mutation import (
    APPLY_CONFIGURATION,
    JSON_PATCH,
    apply_configuration,
    compile_mutation,
    json_patch_operations,
    rewrite,
)

OBJECT = {"metadata": {"name": "n", "labels": {"app": "web"}}, "spec": {"replicas": 1}}


def run(expression: str, patch_type: str = APPLY_CONFIGURATION) -> Any:
    compiler = PolicyCompiler(params=False, composition=False)
    program = compile_mutation(compiler, expression, patch_type)
    value = program.run(
        {
            "object": OBJECT,
            "oldObject": None,
            "request": {},
            "params": None,
            "namespaceObject": None,
            "variables": {},
            "authorizer": None,
            "authorizer.requestResource": None,
        }
    )
    return (
        apply_configuration(value)
        if patch_type == APPLY_CONFIGURATION
        else json_patch_operations(value)
    )


def test_apply_configuration_literals() -> None:
    assert run(
        "Object{spec: Object.spec{replicas: object.spec.replicas + 1,"
        " template: Object.spec.template{metadata: Object.spec.template.metadata{"
        'labels: {"app": object.metadata.labels["app"]}}}}}'
    ) == {"spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}}}}}


def test_lists_optional_fields_and_conditionals() -> None:
    assert run(
        "has(object.spec.paused) ? Object{} : Object{spec: Object.spec{"
        "?paused: optional.of(false), ?absent: optional.none(),"
        ' containers: [Object.spec.containers{name: "a", args: ["x", "y"]}],}}'
    ) == {"spec": {"paused": False, "containers": [{"name": "a", "args": ["x", "y"]}]}}


def test_json_patch_and_escape_key() -> None:
    assert run(
        '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a.io/b~c"),'
        ' value: "v"}, JSONPatch{op: "add", path: "/spec/selector",'
        ' value: Object.spec.selector{matchLabels: {"x": "y"}}}]',
        JSON_PATCH,
    ) == [
        {"op": "add", "path": "/metadata/labels/a.io~1b~0c", "value": "v"},
        {"op": "add", "path": "/spec/selector", "value": {"matchLabels": {"x": "y"}}},
    ]


def test_strings_and_maps_are_left_alone() -> None:
    source = 'Object{metadata: Object.metadata{labels: {"Object{": "}, x: 1"}}} // Object{'
    assert run(source) == {"metadata": {"labels": {"Object{": "}, x: 1"}}}
    assert rewrite('"Object{a: 1}"') == '"Object{a: 1}"'


@pytest.mark.parametrize(
    ("expression", "patch_type", "message"),
    [
        ('"x"', APPLY_CONFIGURATION, "must evaluate to Object but got string"),
        ("1", JSON_PATCH, "must evaluate to list(JSONPatch) but got int"),
    ],
)
def test_return_types(expression: str, patch_type: str, message: str) -> None:
    with pytest.raises(CELError) as caught:
        run(expression, patch_type)
    assert str(caught.value) == message


def test_runtime_checks_of_kube() -> None:
    with pytest.raises(CELError) as caught:
        run("Object{spec: Object.spec{selector: Object.spec.wrong{}}}")
    assert str(caught.value) == (
        'type mismatch: unexpected type name "Object.spec.wrong", expected '
        '"Object.spec.selector", which matches field name path from root Object type'
    )
    with pytest.raises(CELError) as caught:
        json_patch_operations([1])  # a value no checked expression yields
    assert str(caught.value) == (
        "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, "
        "got element of int"
    )


@pytest.mark.parametrize(
    ("expression", "patch_type", "got"),
    [
        ("[]", JSON_PATCH, "list(dyn)"),
        ("[1]", JSON_PATCH, "list(int)"),
        ("object.nope", JSON_PATCH, "dyn"),
        ('[dyn(JSONPatch{op: "add"})]', JSON_PATCH, "list(dyn)"),
        ("object.metadata.labels.map(k, k)", JSON_PATCH, "list(dyn)"),
        ('JSONPatch{op: "add"}', JSON_PATCH, "JSONPatch"),
        ("object", APPLY_CONFIGURATION, "dyn"),
        ("{}", APPLY_CONFIGURATION, "map(dyn, dyn)"),
        ("Object.metadata{}", APPLY_CONFIGURATION, "Object.metadata"),
        ("true ? Object{} : object", APPLY_CONFIGURATION, "dyn"),
        ("[Object{}]", APPLY_CONFIGURATION, "list(Object)"),
    ],
)
def test_the_result_type_must_be_exactly_kubes(expression: str, patch_type: str, got: str) -> None:
    """kube takes a mutation only of type Object or list(JSONPatch) exactly, as its
    checker names types (its reference answered each of these)."""
    expected = "Object" if patch_type == APPLY_CONFIGURATION else "list(JSONPatch)"
    with pytest.raises(CELError) as caught:
        run(expression, patch_type)
    assert str(caught.value) == f"must evaluate to {expected} but got {got}"


@pytest.mark.parametrize(
    "expression",
    [
        '1 == 1 ? [] : [JSONPatch{op: "add", path: "/a"}]',
        '[JSONPatch{op: "add", path: "/a", value: 1}] + []',
        'object.metadata.labels.map(k, JSONPatch{op: "remove", path: "/metadata/labels/" + k})',
    ],
)
def test_open_types_unify_as_kubes_checker_unifies(expression: str) -> None:
    assert isinstance(run(expression, JSON_PATCH), list)


def test_json_patch_fields_are_typed() -> None:
    with pytest.raises(CELError) as caught:
        run("[JSONPatch{op: 1}]", JSON_PATCH)
    assert str(caught.value).split("\n") == [
        "compilation failed: ERROR: <input>:1:14: expected type of field 'op' is 'string' but "
        "provided type is 'int'",
        " | [JSONPatch{op: 1}]",
        " | .............^",
    ]
    with pytest.raises(CELError) as caught:
        run('[JSONPatch{nope: "x"}]', JSON_PATCH)
    assert str(caught.value).split("\n")[0] == (
        "compilation failed: ERROR: <input>:1:16: expected type of field 'nope' is '' but "
        "provided type is 'string'"
    )
    with pytest.raises(CELError) as caught:
        run('[JSONPatch{op: "add", path: "/a"}, dyn(1)]', JSON_PATCH)
    assert "expected type 'JSONPatch' but found 'dyn'" in str(caught.value)


def test_syntax_errors_point_at_the_source_as_written() -> None:
    with pytest.raises(CELError) as caught:
        run("[JSONPatch{op: }]", JSON_PATCH)
    lines = str(caught.value).split("\n")
    assert lines[0].startswith("compilation failed: ERROR: <input>:1:16: Syntax error: ")
    assert lines[1:] == [" | [JSONPatch{op: }]", " | ...............^"]
