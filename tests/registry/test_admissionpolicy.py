"""ValidatingAdmissionPolicies and bindings: v1 defaults, binding validation, the strategies'
generation and status rules, and the table columns (as kube-apiserver v1.36 has them)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from platform_api.endpoints.tables import COLUMNS
from platform_api.registry.strategy import StatusStrategy
from platform_api.validation.names import is_dns1123_subdomain, is_label_value
from tests.registry.builders import (
    BINDING,
    GROUP,
    POLICY,
    binding,
    create_errors,
    created,
    policy,
    strategy,
    update_errors,
)

SUBDOMAIN = is_dns1123_subdomain("A_")[0]
LABEL_VALUE = is_label_value("c d")[0]


def invalid(path: str, value: str, detail: str) -> str:
    return f'{path}: Invalid value: "{value}": {detail}'


def test_policy_defaults() -> None:
    excluded = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["x"]}
    obj = created(
        policy(matchConstraints={"resourceRules": [{}], "excludeResourceRules": [excluded]})
    )
    spec = obj["spec"]
    assert spec["failurePolicy"] == "Fail"
    constraints = spec["matchConstraints"]
    assert constraints["matchPolicy"] == "Equivalent"
    assert constraints["namespaceSelector"] == {} and constraints["objectSelector"] == {}
    assert constraints["resourceRules"][0]["scope"] == "*"
    assert constraints["excludeResourceRules"][0]["scope"] == "*"
    assert obj["status"] == {} and obj["metadata"]["generation"] == 1


def test_binding_defaults() -> None:
    obj = created(binding(matchResources={"resourceRules": [{"scope": "Cluster"}]}))
    resources = obj["spec"]["matchResources"]
    assert (resources["matchPolicy"], resources["resourceRules"][0]["scope"]) == (
        "Equivalent",
        "Cluster",
    )
    assert "status" not in obj and obj["metadata"]["generation"] == 1
    bare = created(binding(paramRef={"name": "x"}))
    assert "matchResources" not in bare["spec"]
    assert bare["spec"]["paramRef"] == {"name": "x"}  # no parameterNotFoundAction default in v1


BINDING_CASES = [
    pytest.param(binding(), [], id="valid binding"),
    pytest.param(
        binding(paramRef={"selector": {}, "parameterNotFoundAction": "Deny"}, matchResources={}),
        [],
        id="valid binding with selector and empty match resources",
    ),
    pytest.param(
        binding(policyName=None, validationActions=None),
        [
            "spec.policyName: Required value",
            "spec.validationActions: Required value: at least one validation action is required",
        ],
        id="binding empty",
    ),
    pytest.param(
        binding(validationActions=["Deny", "Warn", "Deny", "Nope"]),
        [
            'spec.validationActions[2]: Duplicate value: "Deny"',
            'spec.validationActions[3]: Unsupported value: "Nope": supported values: "Audit", '
            '"Deny", "Warn"',
            'spec.validationActions: Invalid value: ["Deny","Warn","Deny","Nope"]: must not '
            "contain both Deny and Warn (repeating the same validation failure information in "
            "the API response and headers serves no purpose)",
        ],
        id="validation actions",
    ),
    pytest.param(
        binding(policyName="Bad_Name"),
        [invalid("spec.policyName", "Bad_Name", SUBDOMAIN)],
        id="policy name",
    ),
    pytest.param(
        binding(
            paramRef={
                "name": "a/b",
                "namespace": "Bad_NS",  # kube does not check it
                "selector": {"matchLabels": {"a": "b c"}},
                "parameterNotFoundAction": "Maybe",
            }
        ),
        [
            invalid("spec.paramRef.name", "a/b", "may not contain '/'"),
            "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
            invalid("spec.paramRef.selector.matchLabels", "b c", LABEL_VALUE),
            "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
            'spec.paramRef.parameterNotFoundAction: Unsupported value: "Maybe": supported '
            'values: "Deny", "Allow"',
        ],
        id="param ref",
    ),
    pytest.param(
        binding(paramRef={}),
        [
            "spec.paramRef: Required value: one of name or selector must be specified",
            "spec.paramRef.parameterNotFoundAction: Required value",
        ],
        id="param ref empty",
    ),
    pytest.param(
        binding(
            matchResources={
                "matchPolicy": "X",
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": [],
                        "resources": ["pods/*", "pods/status"],
                    }
                ],
            }
        ),
        [
            'spec.matchResources.matchPolicy: Unsupported value: "X": supported values: '
            '"Equivalent", "Exact"',
            "spec.matchResources.resourceRules[0].operations: Required value",
            invalid(
                "spec.matchResources.resourceRules[0].resources[1]",
                "pods/status",
                "if 'pods/*' is present, must not specify pods/status",
            ),
        ],
        id="binding match resources",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), BINDING_CASES)
def test_binding_validation_messages(obj: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(obj) == expected


def test_generation_counts_spec_changes() -> None:
    for old in (created(policy()), created(binding())):
        main = strategy(old["kind"])
        new = copy.deepcopy(old)
        new["metadata"]["labels"] = {"a": "b"}
        main.prepare_for_update(new, old)
        assert new["metadata"]["generation"] == 1
        new["spec"]["policyName" if old["kind"] == BINDING else "failurePolicy"] = "Ignore"
        main.prepare_for_update(new, old)
        assert new["metadata"]["generation"] == 2
        assert not main.allow_unconditional_update


def test_status_writes_keep_spec_and_metadata() -> None:
    old = created(policy())
    status = StatusStrategy(strategy(POLICY))
    new = copy.deepcopy(old)
    new["spec"]["failurePolicy"] = "Ignore"
    new["metadata"]["labels"] = {"a": "b"}
    new["status"] = {"observedGeneration": 1, "typeChecking": {}}
    status.prepare_for_update(new, old)
    assert new["spec"] == old["spec"] and "labels" not in new["metadata"]
    assert new["status"] == {"observedGeneration": 1, "typeChecking": {}}
    assert status.validate_update(new, old) == []


def test_status_is_validated_as_kube_does() -> None:
    old = created(policy())
    new = copy.deepcopy(old)
    new["status"] = {
        "typeChecking": {"expressionWarnings": [{"fieldRef": " ", "warning": ""}]},
        "conditions": [
            {"type": "Ready", "status": "Maybe", "reason": "1bad", "observedGeneration": -1},
            {"type": "Ready", "status": "True", "reason": "Ok", "lastTransitionTime": "t"},
        ],
    }
    errs = [str(e) for e in StatusStrategy(strategy(POLICY)).validate_update(new, old)]
    assert errs[:5] == [
        "status.typeChecking.expressionWarnings[0].warning: Required value",
        "status.typeChecking.expressionWarnings[0].fieldRef: Required value",
        'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", '
        '"True", "Unknown"',
        "status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or "
        "equal to zero",
        "status.conditions[0].lastTransitionTime: Required value",
    ]
    assert errs[5].startswith('status.conditions[0].reason: Invalid value: "1bad": a condition')
    assert errs[6] == 'status.conditions[1].type: Duplicate value: "Ready"'


def test_updates_skip_unchanged_match_conditions() -> None:
    """kube compiles match conditions on update only when they or the paramKind changed."""
    old = created(policy(matchConditions=[{"name": "a", "expression": "1"}]))
    new = copy.deepcopy(old)
    new["spec"]["validations"] = [{"expression": "false"}]
    assert update_errors(new, old) == []
    new["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    assert [str(e) for e in update_errors(new, old)] == [
        'spec.matchConditions[0].expression: Invalid value: "1": must evaluate to bool but got int'
    ]


def test_static_suffix_warns() -> None:
    obj = created(policy(name="x.static.platform.io"))
    assert strategy(POLICY).warnings(obj, None) == [
        'metadata.name: names ending with ".static.platform.io" are reserved for static '
        "manifest-based configurations and cannot be managed via the API"
    ]


def _row(plural: str, obj: dict[str, Any]) -> list[Any]:
    return COLUMNS[(GROUP, plural)].cells(obj)[:-1]  # AGE left out


def test_table_columns() -> None:
    policies = COLUMNS[(GROUP, "validatingadmissionpolicies")]
    assert [c.name for c in policies.columns] == ["Name", "Validations", "ParamKind", "Age"]
    assert _row("validatingadmissionpolicies", policy()) == ["p", 1, "<unset>"]
    with_params = policy(paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    assert _row("validatingadmissionpolicies", with_params) == ["p", 1, "v1/ConfigMap"]
    bindings = COLUMNS[(GROUP, "validatingadmissionpolicybindings")]
    assert [c.name for c in bindings.columns] == ["Name", "PolicyName", "ParamRef", "Age"]
    plural = "validatingadmissionpolicybindings"
    assert _row(plural, binding()) == ["b", "p", "<unset>"]
    assert _row(plural, binding(paramRef={"name": "x", "namespace": "ns"}))[2] == "ns/x"
    assert _row(plural, binding(paramRef={"name": "x"}))[2] == "*/x"
    selector = {
        "matchLabels": {"c": "d", "a": "b"},
        "matchExpressions": [
            {"key": "x", "operator": "In", "values": ["yy", "z"]},
            {"key": "w", "operator": "Exists"},
        ],
    }
    assert _row(plural, binding(paramRef={"selector": selector}))[2] == (
        "&LabelSelector{MatchLabels:map[string]string{a: b,c: d,},MatchExpressions:"
        "[]LabelSelectorRequirement{LabelSelectorRequirement{Key:x,Operator:In,Values:[yy z],},"
        "LabelSelectorRequirement{Key:w,Operator:Exists,Values:[],},},}"
    )
