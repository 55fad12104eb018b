"""Admission CEL: match conditions and policy expressions, with kube's typed variables."""

from __future__ import annotations

import re

import pytest

from platform_api.cel import CELError, CompileError
from platform_api.cel.admission import (
    ANY,
    BOOL,
    STRING,
    STRING_OR_NULL,
    MatchConditionError,
    PolicyCompiler,
    compile_match_condition,
    compile_policy_expression,
    variable_field,
)


@pytest.mark.parametrize(
    "source",
    [
        "request.name == 'x' && request.userInfo.groups.exists(g, g == 'a')",
        "request.kind.group == 'apps' && request.dryRun",
        "namespaceObject.metadata.labels['env'] == 'prod'",
        "object.spec.replicas > 1 || oldObject == null",
        "authorizer.requestResource.check('get').allowed()",
        "authorizer.group('').resource('pods').check('list').allowed()",
    ],
)
def test_conditions_kube_accepts(source: str) -> None:
    assert compile_match_condition(source).return_type == "BOOL"


def test_programs_run_on_plain_values() -> None:
    variables = {
        "request": {"name": "x", "kind": {"group": "apps"}, "dryRun": True},
        "object": {"spec": {"replicas": 2}},
        "oldObject": None,
        "namespaceObject": {"metadata": {"labels": {"env": "prod"}}},
    }
    for source in (
        "request.name == 'x' && request.kind.group == 'apps' && request.dryRun",
        "object.spec.replicas > 1 && oldObject == null",
        "namespaceObject.metadata.labels['env'] == 'prod'",
    ):
        assert compile_match_condition(source).run(variables) is True


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("request.name", "string"),
        ("object.metadata.name", "dyn"),
        ("request.kind", "kubernetes.GroupVersionKind"),
        ("namespaceObject.metadata.creationTimestamp", "google.protobuf.Timestamp"),
        ("[1][0]", "int"),
    ],
)
def test_results_must_be_exactly_bool(source: str, found: str) -> None:
    with pytest.raises(MatchConditionError) as info:
        compile_match_condition(source)
    assert str(info.value) == f"must evaluate to bool but got {found}"
    assert not info.value.internal


def test_typed_request_fields() -> None:
    with pytest.raises(CompileError) as info:
        compile_match_condition("request.foo == 1")
    assert info.value.issues == (
        "ERROR: <input>:1:8: undefined field 'foo'\n | request.foo == 1\n | .......^"
    )
    with pytest.raises(CompileError, match="undeclared reference to 'params'"):
        compile_match_condition("params.x == 1")  # webhooks have no params


def test_policy_conditions_may_use_params() -> None:
    assert compile_match_condition("params.x == 1", params=True).run({"params": {"x": 1}})


def test_policy_variables_are_typed_in_order() -> None:
    compiler = PolicyCompiler(params=False, composition=True)
    compiler.variable("n", "1")
    compiler.variable("names", "['a'].map(x, x + 'b')")
    compiler.variable("spec", "object.spec")  # dyn
    compiler.variable("kind", "request.kind")  # an object: dyn, as kube's composition makes it
    with pytest.raises(CompileError, match="undefined field 'later'"):
        compiler.variable("bad", "variables.later == 1")
    assert isinstance(compiler.programs["bad"], CompileError)
    with pytest.raises(CompileError, match=r"applied to '\(string, int\)'"):
        compiler.compile("variables.names[0] == 1")
    program = compiler.compile("variables.n > 0 && variables.spec.x && variables.kind.any == 1")
    variables = {"n": 1, "spec": {"x": True}, "kind": {"any": 1}}
    assert program.run({"variables": variables}) is True


@pytest.mark.parametrize(
    ("source", "field"),
    [
        ("1", ("v", "int64", "")),
        ("duration('1s')", ("v", ".google.protobuf.Duration", "")),
        ("[1u]", ("v", "uint64", "*")),
        ("{'a': 1.5}", ("v", "double", "map:string")),
        ("[[1]]", ("v", ".google.protobuf.Value", "*")),
        ("optional.of(1)", ("v", ".google.protobuf.Value", "")),
    ],
)
def test_variable_fields(source: str, field: tuple[str, str, str]) -> None:
    program = PolicyCompiler(params=False, composition=False).compile(source, ANY)
    assert variable_field("v", program.checked.type_of(program.checked.ast.expr.id)) == field


@pytest.mark.parametrize(
    ("source", "returns", "authorizer", "error"),
    [
        ("1", STRING, False, "must evaluate to string but got int"),
        ("1", STRING_OR_NULL, True, "must evaluate to one of [string null_type] but got int"),
        ("'a'", BOOL, True, "must evaluate to bool but got string"),
        ("authorizer.path('/').check('get').allowed()", STRING, False, "undeclared reference"),
    ],
)
def test_policy_result_types(
    source: str, returns: tuple[str, ...], authorizer: bool, error: str
) -> None:
    with pytest.raises(CELError, match=re.escape(error)):
        compile_policy_expression(source, returns=returns, authorizer=authorizer)


def test_compile_policy_expression_with_params_and_variables() -> None:
    program = compile_policy_expression("variables.limit < params.max", [("limit", "2")])
    assert program.run({"variables": {"limit": 2}, "params": {"max": 3}}) is True
    with pytest.raises(CompileError, match=r"applied to '\(int, string\)'"):
        compile_policy_expression("variables.limit == 'x'", [("limit", "2")])
    by_name = compile_policy_expression("variables.limit == 'x'", ["limit"])  # dyn
    assert by_name.run({"variables": {"limit": "x"}}) is True
    message = compile_policy_expression("'at most ' + string(params.max)", returns=STRING)
    assert message.run({"params": {"max": 3}}) == "at most 3"
    assert compile_policy_expression("null", returns=STRING_OR_NULL).run({}) is None
    with pytest.raises(CompileError, match="undeclared reference to 'params'"):
        compile_policy_expression("params.max > 1", params=False)
