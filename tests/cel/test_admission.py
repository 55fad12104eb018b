"""Match conditions of admission webhooks: kube's typed variables and result rule."""

from __future__ import annotations

import pytest

from platform_api.cel import CompileError
from platform_api.cel.admission import MatchConditionError, compile_match_condition


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
