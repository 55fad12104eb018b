"""kube's ValidatingAdmissionPolicy type checker over the server's own schemas."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from platform_api.admission.policy.typecheck import MAX_TYPES_TO_CHECK, TypeChecker
from platform_api.apiextensions import crd as crds
from platform_api.scheme.catalog import Scheme, builtin_scheme

Obj = dict[str, Any]
DEPLOYMENTS = {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}


def policy(*validations: Obj, rules: list[Obj] | None = None, **spec: Any) -> Obj:
    return {
        "metadata": {"name": "p"},
        "spec": {
            "matchConstraints": {"resourceRules": rules or [DEPLOYMENTS]},
            "validations": list(validations),
            **spec,
        },
    }


@pytest.fixture(scope="module")
def scheme() -> Scheme:
    return builtin_scheme()


@pytest.fixture(scope="module")
def checker(scheme: Scheme) -> TypeChecker:
    return TypeChecker(scheme)


def test_missing_field_on_deployment(checker: TypeChecker) -> None:
    found = checker.check(policy({"expression": "object.foo == 1"}))
    assert found == [
        {
            "fieldRef": "spec.validations[0].expression",
            "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'foo'\n"
            " | object.foo == 1\n"
            " | ......^\n",
        }
    ]


def test_correct_policy_has_no_warnings(checker: TypeChecker) -> None:
    found = checker.check(
        policy(
            {
                "expression": "object.spec.replicas > 1 && "
                "object.spec.template.spec.containers.all(c, c.image != '')",
                "messageExpression": "'replicas: ' + string(object.spec.replicas)",
            },
            {"expression": "oldObject == null || request.operation == 'UPDATE'"},
            {"expression": "object.metadata.creationTimestamp < timestamp('2030-01-01T00:00:00Z')"},
        )
    )
    assert found == []


def test_kube_conformance_type_confusion(checker: TypeChecker) -> None:
    """kube's e2e: an int compared to a string, a string plus an int (message expression)."""
    found = checker.check(
        policy(
            {
                "expression": "object.spec.replicas > '1'",
                "messageExpression": "'wants replicas > 1, got ' + object.spec.replicas",
            },
            rules=[{**DEPLOYMENTS, "resources": ["deployments", "replicasets"]}],
        )
    )
    assert [w["fieldRef"] for w in found] == [
        "spec.validations[0].expression",
        "spec.validations[0].messageExpression",
    ]
    issue = (
        "ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n"
        " | object.spec.replicas > '1'\n"
        " | .....................^\n"
    )
    # one block per kind, in kind order, separated by an empty line
    assert found[0]["warning"] == (
        f"apps/v1, Kind=Deployment: {issue}\napps/v1, Kind=ReplicaSet: {issue}"
    )
    assert "found no matching overload for '_+_' applied to '(string, int)'" in found[1]["warning"]


def test_only_failing_kinds_are_named(checker: TypeChecker) -> None:
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps", "pods"]}]
    found = checker.check(policy({"expression": "object.data.size() > 0"}, rules=rules))
    assert found == [
        {
            "fieldRef": "spec.validations[0].expression",
            "warning": "/v1, Kind=Pod: ERROR: <input>:1:7: undefined field 'data'\n"
            " | object.data.size() > 0\n"
            " | ......^\n",
        }
    ]


def test_wildcards_subresources_and_unknown_resources_are_skipped(checker: TypeChecker) -> None:
    bad = {"expression": "object.nope"}
    for rule in (
        {"apiGroups": ["*"], "apiVersions": ["v1"], "resources": ["deployments"]},
        {"apiGroups": ["apps"], "apiVersions": ["*"], "resources": ["deployments"]},
        {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["*", "deployments/status"]},
        {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["widgets"]},
    ):
        assert checker.check(policy(bad, rules=[rule])) == []
    assert checker.check({"spec": {"validations": [bad]}}) == []


def test_singular_resource_names_resolve(checker: TypeChecker) -> None:
    rule = {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployment"]}
    assert checker.types_to_check({"matchConstraints": {"resourceRules": [rule]}}) == [
        ("apps", "v1", "Deployment")
    ]


def test_at_most_ten_kinds_per_rule(checker: TypeChecker) -> None:
    resources = [
        "configmaps", "endpoints", "events", "limitranges", "namespaces", "nodes",
        "persistentvolumeclaims", "persistentvolumes", "pods", "podtemplates",
        "replicationcontrollers", "secrets",
    ]  # fmt: skip
    rule = {"apiGroups": [""], "apiVersions": ["v1"], "resources": resources}
    kinds = checker.types_to_check({"matchConstraints": {"resourceRules": [rule]}})
    assert len(kinds) == MAX_TYPES_TO_CHECK
    assert kinds[0] == ("", "v1", "ConfigMap") and ("", "v1", "Secret") not in kinds


def test_params_typed_by_param_kind(checker: TypeChecker) -> None:
    confused = {"expression": "object.spec.replicas <= params.data.max"}
    found = checker.check(policy(confused, paramKind={"apiVersion": "v1", "kind": "ConfigMap"}))
    assert len(found) == 1
    assert "found no matching overload for '_<=_' applied to '(int, string)'" in found[0]["warning"]
    ok = {"expression": "object.spec.replicas <= int(params.data.max)"}
    assert checker.check(policy(ok, paramKind={"apiVersion": "v1", "kind": "ConfigMap"})) == []
    # a paramKind without a schema: params is dyn
    unknown = {"apiVersion": "example.com/v1", "kind": "Limits"}
    assert checker.check(policy(confused, paramKind=unknown)) == []
    # without a paramKind, params is not declared
    found = checker.check(policy({"expression": "params.x == 1"}))
    assert "undeclared reference to 'params'" in found[0]["warning"]


def test_variables_are_typed(checker: TypeChecker) -> None:
    variables = [{"name": "replicas", "expression": "object.spec.replicas"}]
    found = checker.check(policy({"expression": "variables.replicas > 'a'"}, variables=variables))
    assert "found no matching overload for '_>_' applied to '(int, string)'" in found[0]["warning"]
    found = checker.check(policy({"expression": "variables.missing"}, variables=variables))
    assert "undefined field 'missing'" in found[0]["warning"]
    assert (
        checker.check(policy({"expression": "variables.replicas > 1"}, variables=variables)) == []
    )


CRONTAB: Obj = {
    "apiVersion": "apiextensions.platform.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
        "group": "stable.example.com",
        "scope": "Namespaced",
        "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "cronSpec": {"type": "string"},
                                    "image": {"type": "string"},
                                    "replicas": {"type": "integer"},
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
    "status": {"acceptedNames": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"}},
}


def test_custom_resources(scheme: Scheme) -> None:
    """kube's e2e "should type check a CRD"."""
    scheme = Scheme(scheme.all(), scheme.schemas.copy())
    scheme.install(
        CRONTAB["metadata"]["name"], crds.served_types(CRONTAB), crds.definitions(CRONTAB)
    )
    checker = TypeChecker(scheme)
    rules = [
        {"apiGroups": ["stable.example.com"], "apiVersions": ["v1"], "resources": ["crontabs"]}
    ]
    ok = {"expression": "object.spec.replicas > 1 && object.metadata.name != ''"}
    assert checker.check(policy(ok, rules=rules)) == []
    found = checker.check(
        policy(
            {"expression": "object.spec.replicas > '1'"},
            {"expression": "object.spec.maxRetries < 10"},
            rules=rules,
        )
    )
    assert [w["fieldRef"] for w in found] == [
        "spec.validations[0].expression",
        "spec.validations[1].expression",
    ]
    assert found[1]["warning"] == (
        "stable.example.com/v1, Kind=CronTab: ERROR: <input>:1:12: undefined field 'maxRetries'\n"
        " | object.spec.maxRetries < 10\n"
        " | ...........^\n"
    )
    # a new version of the CRD's schema is seen by the next check
    grown = copy.deepcopy(CRONTAB)
    props = grown["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    props["spec"]["properties"]["maxRetries"] = {"type": "integer"}
    scheme.install(grown["metadata"]["name"], crds.served_types(grown), crds.definitions(grown))
    assert checker.check(policy({"expression": "object.spec.maxRetries < 10"}, rules=rules)) == []


def test_issue_texts_are_cel_go_s(checker: TypeChecker) -> None:
    """Checked against kube's own type checker: cel-go's wording, kube's type names (the
    number is kube's nanosecond stamp), no follow-up issue on an operand already in error."""
    found = checker.check(
        policy(
            {"expression": "object.spec.replicas.foo"},
            {"expression": "object.spec.template.spec.containers[0] + 1"},
            {"expression": "object.spec.nope.size() > 0"},
        )
    )
    assert found[0]["warning"] == (
        "apps/v1, Kind=Deployment: ERROR: <input>:1:21: type 'int' does not support field"
        " selection\n | object.spec.replicas.foo\n | ....................^\n"
    )
    assert re.fullmatch(
        r"apps/v1, Kind=Deployment: ERROR: <input>:1:41: found no matching overload for '_\+_'"
        r" applied to '\(Deployment\d{1,9}\.spec\.template\.spec\.containers\.@idx, int\)'\n"
        r" \| object\.spec\.template\.spec\.containers\[0\] \+ 1\n \| \.{40}\^\n",
        found[1]["warning"],
    )
    assert found[2]["warning"] == (
        "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'nope'\n"
        " | object.spec.nope.size() > 0\n | ...........^\n"
    )


def test_quantities_have_no_cel_type(checker: TypeChecker) -> None:
    """kube's Go schema of a Quantity has no type: maps of them are left out."""
    found = checker.check(
        policy(
            {
                "expression": "object.spec.template.spec.containers.all(c, c.resources.limits.size() < 3)"
            }
        )
    )
    assert "undefined field 'limits'" in found[0]["warning"]
    maxsurge = {"expression": "object.spec.strategy.rollingUpdate.maxSurge == 1"}
    assert checker.check(policy(maxsurge)) == []  # int-or-string is dyn
