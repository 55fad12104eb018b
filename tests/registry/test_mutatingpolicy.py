"""MutatingAdmissionPolicies and bindings: v1 defaults, every validation message, the
strategies' generation and update rules, and the table columns.

The expected texts were taken from a real kube-apiserver v1.36 given the same objects
(groups rebranded; 48 bad and good objects).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from platform_api.endpoints.tables import COLUMNS
from platform_api.validation.names import (
    is_dns1035_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
)
from tests.registry.builders import GROUP, create_errors, created, strategy, update_errors

POLICY = "MutatingAdmissionPolicy"
BINDING = "MutatingAdmissionPolicyBinding"
SUBDOMAIN = is_dns1123_subdomain("A_")[0]
LABEL_VALUE = is_label_value("b c")[0]
DNS1035 = is_dns1035_label("V1")[0]
NAME_PART = is_qualified_name("a b")[0]
MC = "spec.matchConstraints"
M0 = "spec.mutations[0]"
AC = "ApplyConfiguration"
JP = "JSONPatch"
OPERATIONS = 'supported values: "*", "CONNECT", "CREATE", "UPDATE"'
RULE: dict[str, Any] = {
    "apiGroups": ["apps"],
    "apiVersions": ["v1"],
    "operations": ["CREATE"],
    "resources": ["deployments"],
}


def mutation(patch_type: str = AC, expression: str = "Object{}") -> dict[str, Any]:
    member = "applyConfiguration" if patch_type == AC else "jsonPatch"
    return {"patchType": patch_type, member: {"expression": expression}}


def policy(name: str = "p", **spec: Any) -> dict[str, Any]:
    """A valid mutating policy; a spec field given as None is left out."""
    fields: dict[str, Any] = {
        "matchConstraints": {"resourceRules": [copy.deepcopy(RULE)]},
        "mutations": [mutation()],
        "reinvocationPolicy": "Never",
    }
    fields.update(spec)
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": POLICY,
        "metadata": {"name": name},
        "spec": {k: v for k, v in fields.items() if v is not None},
    }


def binding(name: str = "b", **spec: Any) -> dict[str, Any]:
    """A valid mutating binding; a spec field given as None is left out."""
    fields: dict[str, Any] = {"policyName": "p", **spec}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": BINDING,
        "metadata": {"name": name},
        "spec": {k: v for k, v in fields.items() if v is not None},
    }


def cel(line: int, column: int, message: str, source_line: str) -> str:
    """A cel-go compile error as kube shows it, caret under ``column`` (1-based)."""
    caret = "." * (column - 1) + "^"
    return f"compilation failed: ERROR: <input>:{line}:{column}: {message}\n | {source_line}\n | {caret}"


def invalid(path: str, value: str, detail: str) -> str:
    return f'{path}: Invalid value: "{value}": {detail}'


def rules(*operations: list[str]) -> dict[str, Any]:
    return {"resourceRules": [dict(RULE, operations=ops) for ops in operations]}


PARAMS = {"apiVersion": "v1", "kind": "ConfigMap"}
LABELS = "Object{metadata: Object.metadata{labels: %s}}"
ESCAPED = (
    "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('a/b'), value: 'b'}]"
)
UNDECLARED = "undeclared reference to '{}' (in container '')"

POLICY_CASES = [
    pytest.param(policy(), [], id="valid"),
    pytest.param(
        policy(
            paramKind=PARAMS,
            matchConditions=[{"name": "c", "expression": "params.data.x == 'y'"}],
            variables=[{"name": "x", "expression": "object.metadata.name"}],
            mutations=[
                mutation(AC, LABELS % "params.data"),
                mutation(AC, LABELS % "{'n': variables.x}"),
                mutation(JP, ESCAPED),
                mutation(
                    AC, "authorizer.requestResource.check('get').allowed() ? Object{} : Object{}"
                ),
            ],
            reinvocationPolicy="IfNeeded",
            matchConstraints=rules(["*"]),
        ),
        [],
        id="valid with params, variables, JSON patch, authorizer",
    ),
    pytest.param(
        policy(matchConstraints=None, mutations=None, reinvocationPolicy=None),
        [
            f"{MC}: Required value",
            "spec.mutations: Required value: mutations must contain at least one item",
            "spec.reinvocationPolicy: Required value",
        ],
        id="empty spec",
    ),
    pytest.param(
        policy(mutations=[]),
        ["spec.mutations: Required value: mutations must contain at least one item"],
        id="mutations empty",
    ),
    pytest.param(
        policy(failurePolicy="Maybe"),
        ['spec.failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"'],
        id="failure policy",
    ),
    pytest.param(
        policy(reinvocationPolicy="Sometimes"),
        [
            'spec.reinvocationPolicy: Unsupported value: "Sometimes": supported values: '
            '"IfNeeded", "Never"'
        ],
        id="reinvocation policy",
    ),
    pytest.param(
        policy(mutations=[{"applyConfiguration": {"expression": "Object{}"}}]),
        [f"{M0}.patchType: Required value"],
        id="patch type required",
    ),
    pytest.param(
        policy(mutations=[{"patchType": "Merge", "applyConfiguration": {"expression": "x"}}]),
        [
            f'{M0}.patchType: Unsupported value: "Merge": supported values: '
            '"ApplyConfiguration", "JSONPatch"'
        ],
        id="patch type unsupported",
    ),
    pytest.param(
        policy(mutations=[{"patchType": JP, "applyConfiguration": {"expression": "Object{}"}}]),
        [
            f"{M0}.jsonPatch: Required value: must be specified when patchType is JSONPatch",
            invalid(
                f"{M0}.applyConfiguration",
                "{applyConfiguration}",
                "must not be specified when patchType is JSONPatch",
            ),
        ],
        id="JSON patch member",
    ),
    pytest.param(
        policy(mutations=[{"patchType": AC, "jsonPatch": {"expression": "[]"}}]),
        [
            f"{M0}.applyConfiguration: Required value: must be specified when patchType is "
            "ApplyConfiguration",
            invalid(
                f"{M0}.jsonPatch",
                "{jsonPatch}",
                "must not be specified when patchType is ApplyConfiguration",
            ),
        ],
        id="apply configuration member",
    ),
    pytest.param(
        policy(mutations=[dict(mutation(), jsonPatch={"expression": "[]"})]),
        [
            invalid(
                f"{M0}.jsonPatch",
                "{jsonPatch}",
                "must not be specified when patchType is ApplyConfiguration",
            )
        ],
        id="both members",
    ),
    pytest.param(
        policy(mutations=[mutation(AC, "  "), {"patchType": JP, "jsonPatch": {}}]),
        [
            f"{M0}.applyConfiguration.expression: Required value",
            "spec.mutations[1].jsonPatch.expression: Required value",
        ],
        id="expressions required",
    ),
    pytest.param(
        policy(mutations=[mutation(AC, "  nope  ")]),
        [
            invalid(
                f"{M0}.applyConfiguration.expression",
                "nope",
                cel(1, 1, UNDECLARED.format("nope"), "nope"),
            )
        ],
        id="expression trimmed",
    ),
    pytest.param(
        policy(mutations=[mutation(AC, "1"), mutation(AC, "[]"), mutation(JP, "'x'")]),
        [
            invalid(
                f"{M0}.applyConfiguration.expression", "1", "must evaluate to Object but got int"
            ),
            invalid(
                "spec.mutations[1].applyConfiguration.expression",
                "[]",
                "must evaluate to Object but got list(dyn)",
            ),
            invalid(
                "spec.mutations[2].jsonPatch.expression",
                "'x'",
                "must evaluate to list(JSONPatch) but got string",
            ),
        ],
        id="result types",
    ),
    pytest.param(
        policy(variables=[{"name": "1x", "expression": ""}, {"name": " ", "expression": "nope"}]),
        [
            invalid("spec.variables[0].name", "1x", "must be a valid CEL identifier"),
            "spec.variables[0].expression: Required value: expression is not specified",
            "spec.variables[1].name: Required value: name is not specified",
            invalid(
                "spec.variables[1].expression", "nope", cel(1, 1, UNDECLARED.format("nope"), "nope")
            ),
        ],
        id="variables",
    ),
    pytest.param(
        policy(matchConstraints=rules(["DELETE", "CONNECT", "*"])),
        [
            f"{MC}.resourceRules[0].operations: Invalid value: "
            '["DELETE","CONNECT","*"]: if \'*\' is present, must not specify other operations',
            f'{MC}.resourceRules.operations: Unsupported value: "DELETE": {OPERATIONS}',
        ],
        id="no DELETE",
    ),
    pytest.param(
        policy(matchConstraints=rules(["DELETE"], ["DELETE", "UPDATE"])),
        [f'{MC}.resourceRules.operations: Unsupported value: "DELETE": {OPERATIONS}'] * 2,
        id="operations of every rule at one path",
    ),
    pytest.param(
        policy(matchConstraints=rules(["delete"])),
        [
            f'{MC}.resourceRules[0].operations[0]: Unsupported value: "delete": supported values: '
            '"*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
            f'{MC}.resourceRules.operations: Unsupported value: "delete": {OPERATIONS}',
        ],
        id="operations unknown",
    ),
    pytest.param(
        policy(
            matchConstraints={
                **rules(["CREATE"]),
                "excludeResourceRules": [RULE | {"operations": ["DELETE"]}],
            }
        ),
        [],
        id="excluded DELETE allowed",
    ),
    pytest.param(
        policy(matchConstraints={"namespaceSelector": {"matchLabels": {"a": "b c"}}}),
        [
            invalid(f"{MC}.namespaceSelector.matchLabels", "b c", LABEL_VALUE),
            f"{MC}.resourceRules: Required value",
        ],
        id="resource rules required, selectors strict",
    ),
    pytest.param(
        policy(paramKind={"apiVersion": "a/b/c", "kind": "Bad_Kind"}),
        [
            invalid("spec.paramKind.apiVersion", "a/b/c", "unexpected GroupVersion string: a/b/c"),
            invalid(
                "spec.paramKind.kind",
                "Bad_Kind",
                f"may have mixed case, but should otherwise match: {DNS1035}",
            ),
        ],
        id="param kind",
    ),
    pytest.param(
        policy(
            matchConditions=[
                {"name": "a b", "expression": "params.x"},
                {"name": "c", "expression": "1"},
                {"name": "c", "expression": "true"},
            ]
        ),
        [
            invalid(
                "spec.matchConditions[0].expression",
                "params.x",
                cel(1, 1, UNDECLARED.format("params"), "params.x"),
            ),
            invalid("spec.matchConditions[0].name", "a b", NAME_PART),
            invalid("spec.matchConditions[1].expression", "1", "must evaluate to bool but got int"),
            'spec.matchConditions[2].name: Duplicate value: "c"',
        ],
        id="match conditions",
    ),
    pytest.param(
        policy(name="Bad_Name"),
        [invalid("metadata.name", "Bad_Name", SUBDOMAIN)],
        id="name",
    ),
]

# Compile errors of mutation expressions: positions in the source as written.
EXPRESSION_CASES = [
    pytest.param(
        mutation(AC, LABELS % "params.data"),
        invalid(
            f"{M0}.applyConfiguration.expression",
            LABELS % "params.data",
            cel(1, 42, UNDECLARED.format("params"), LABELS % "params.data"),
        ),
        id="params need a paramKind",
    ),
    pytest.param(
        mutation(AC, LABELS % "{'n': variables.x}"),
        invalid(
            f"{M0}.applyConfiguration.expression",
            LABELS % "{'n': variables.x}",
            cel(1, 57, "undefined field 'x'", LABELS % "{'n': variables.x}"),
        ),
        id="variables declared even without any",
    ),
    pytest.param(
        mutation(AC, "\nObject{\n  spec: nope\n}\n"),
        invalid(
            f"{M0}.applyConfiguration.expression",
            "Object{\\n  spec: nope\\n}",
            cel(2, 9, UNDECLARED.format("nope"), "  spec: nope"),
        ),
        id="several lines",
    ),
    pytest.param(
        mutation(JP, "Object{}"),
        invalid(
            f"{M0}.jsonPatch.expression",
            "Object{}",
            "must evaluate to list(JSONPatch) but got Object",
        ),
        id="JSON patch of an Object",
    ),
]

BINDING_CASES = [
    pytest.param(binding(), [], id="valid"),
    pytest.param(
        binding(
            paramRef={"selector": {"matchLabels": {"a": "b"}}, "parameterNotFoundAction": "Allow"},
            matchResources={"namespaceSelector": {}, **rules(["CREATE", "UPDATE"])},
        ),
        [],
        id="valid with params and match resources",
    ),
    pytest.param(binding(policyName=None), ["spec.policyName: Required value"], id="policy name"),
    pytest.param(
        binding(policyName="Bad_P"),
        [invalid("spec.policyName", "Bad_P", SUBDOMAIN)],
        id="policy name subdomain",
    ),
    pytest.param(
        binding(
            paramRef={
                "name": "a/b",
                "selector": {"matchLabels": {"a": "b c"}},
                "parameterNotFoundAction": "Maybe",
            }
        ),
        [
            invalid("spec.paramRef.name", "a/b", "may not contain '/'"),
            "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
            invalid("spec.paramRef.selector.matchLabels", "b c", LABEL_VALUE),
            "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
            'spec.paramRef.parameterNotFoundAction: Unsupported value: "Maybe": supported values: '
            '"Deny", "Allow"',
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
        binding(matchResources={**rules(["DELETE"]), "matchPolicy": "Nope"}),
        [
            'spec.matchResources.matchPolicy: Unsupported value: "Nope": supported values: '
            '"Equivalent", "Exact"',
            f'spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": {OPERATIONS}',
        ],
        id="match resources",
    ),
    pytest.param(
        binding(matchResources={"excludeResourceRules": [RULE | {"operations": ["DELETE"]}]}),
        [],
        id="excluded DELETE allowed",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), POLICY_CASES)
def test_policy_validation_messages(obj: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(obj) == expected


@pytest.mark.parametrize(("one", "expected"), EXPRESSION_CASES)
def test_mutation_compile_messages(one: dict[str, Any], expected: str) -> None:
    assert create_errors(policy(mutations=[one])) == [expected]


@pytest.mark.parametrize(("obj", "expected"), BINDING_CASES)
def test_binding_validation_messages(obj: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(obj) == expected


def test_defaults() -> None:
    excluded = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["x"]}
    obj = created(
        policy(matchConstraints={"resourceRules": [{}], "excludeResourceRules": [excluded]})
    )
    spec = obj["spec"]
    assert spec["failurePolicy"] == "Fail" and spec["reinvocationPolicy"] == "Never"
    constraints = spec["matchConstraints"]
    assert constraints["matchPolicy"] == "Equivalent"
    assert constraints["namespaceSelector"] == {} and constraints["objectSelector"] == {}
    assert constraints["resourceRules"][0]["scope"] == "*"
    assert constraints["excludeResourceRules"][0]["scope"] == "*"
    assert "status" not in obj and obj["metadata"]["generation"] == 1
    # no reinvocationPolicy default: kube requires it
    assert "reinvocationPolicy" not in created(policy(reinvocationPolicy=None))["spec"]
    bound = created(binding(matchResources={"resourceRules": [{"scope": "Cluster"}]}))
    resources = bound["spec"]["matchResources"]
    assert (resources["matchPolicy"], resources["resourceRules"][0]["scope"]) == (
        "Equivalent",
        "Cluster",
    )
    assert "matchResources" not in created(binding())["spec"]


def test_no_status_subresource() -> None:
    for kind in (POLICY, BINDING):
        assert not strategy(kind).resource.has_status()


def test_generation_counts_spec_changes() -> None:
    for old in (created(policy()), created(binding())):
        main = strategy(old["kind"])
        new = copy.deepcopy(old)
        new["metadata"]["labels"] = {"a": "b"}
        main.prepare_for_update(new, old)
        assert new["metadata"]["generation"] == 1
        new["spec"]["policyName" if old["kind"] == BINDING else "reinvocationPolicy"] = "IfNeeded"
        main.prepare_for_update(new, old)
        assert new["metadata"]["generation"] == 2
        assert not main.allow_unconditional_update
        assert not main.allow_create_on_update


def test_updates_skip_unchanged_match_conditions() -> None:
    """kube compiles match conditions on update only when they or the paramKind changed."""
    old = created(policy(matchConditions=[{"name": "a", "expression": "1"}]))
    new = copy.deepcopy(old)
    new["spec"]["reinvocationPolicy"] = "IfNeeded"
    assert update_errors(new, old) == []
    new["spec"]["paramKind"] = PARAMS
    assert [str(e) for e in update_errors(new, old)] == [
        'spec.matchConditions[0].expression: Invalid value: "1": must evaluate to bool but got int'
    ]
    new["spec"]["mutations"] = []
    assert [str(e) for e in update_errors(new, old)][1:] == [
        "spec.mutations: Required value: mutations must contain at least one item"
    ]


def test_updates_check_the_metadata() -> None:
    old = created(binding())
    new = copy.deepcopy(old)
    new["metadata"]["name"] = "other"
    assert [str(e) for e in update_errors(new, old)] == [
        'metadata.name: Invalid value: "other": field is immutable'
    ]


def test_static_suffix_warns() -> None:
    for obj in (
        created(policy(name="x.static.platform.io")),
        created(binding("x.static.platform.io")),
    ):
        assert strategy(obj["kind"]).warnings(obj, None) == [
            'metadata.name: names ending with ".static.platform.io" are reserved for static '
            "manifest-based configurations and cannot be managed via the API"
        ]


def _row(plural: str, obj: dict[str, Any]) -> list[Any]:
    return COLUMNS[(GROUP, plural)].cells(obj)[:-1]  # AGE left out


def test_table_columns() -> None:
    policies = COLUMNS[(GROUP, "mutatingadmissionpolicies")]
    assert [c.name for c in policies.columns] == ["Name", "Mutations", "ParamKind", "Age"]
    assert policies.columns[1].description == (
        "Mutation indicates the number of mutations rules defined in this configuration"
    )
    two = policy(paramKind=PARAMS, mutations=[mutation(), mutation()])
    assert _row("mutatingadmissionpolicies", policy()) == ["p", 1, "<unset>"]
    assert _row("mutatingadmissionpolicies", two) == ["p", 2, "v1/ConfigMap"]
    bindings = COLUMNS[(GROUP, "mutatingadmissionpolicybindings")]
    assert [c.name for c in bindings.columns] == ["Name", "PolicyName", "ParamRef", "Age"]
    plural = "mutatingadmissionpolicybindings"
    assert _row(plural, binding()) == ["b", "p", "<unset>"]
    assert _row(plural, binding(paramRef={"name": "x"}))[2] == "*/x"
    assert _row(plural, binding(paramRef={"selector": {"matchLabels": {"a": "b"}}}))[2] == (
        "&LabelSelector{MatchLabels:map[string]string{a: b,},"
        "MatchExpressions:[]LabelSelectorRequirement{},}"
    )
