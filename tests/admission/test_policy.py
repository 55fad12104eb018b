"""ValidatingAdmissionPolicy decisions: matching, parameters, actions, failure policies."""

from __future__ import annotations

from typing import Any

import pytest_twisted

from platform_api import errors
from platform_api.admission.policy import evaluate
from platform_api.admission.policy.compiled import compile_binding, compile_policy
from platform_api.admission.policy.dispatch import PolicyAdmission
from tests.admission.test_webhook_matching import request

RULES = [
    {
        "apiGroups": ["apps"],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["deployments"],
    }
]


def policy(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "matchConstraints": {"resourceRules": RULES},
        "validations": [{"expression": "object.spec.replicas < 5", "message": "too many"}],
    }
    return {"metadata": {"name": "p", "resourceVersion": "1"}, "spec": {**base, **spec}}


def binding(**spec: Any) -> dict[str, Any]:
    base = {"policyName": "p", "validationActions": ["Deny"]}
    return {"metadata": {"name": "b", "resourceVersion": "1"}, "spec": {**base, **spec}}


def deployment(replicas: int, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": labels},
        "spec": {"replicas": replicas},
    }


class Source:
    def __init__(self, policies: list[dict], bindings: list[dict]) -> None:
        compiled = [compile_binding(b) for b in bindings]
        self.pairs = [
            (p, [b for b in compiled if b.policy == p.name])
            for p in (compile_policy(obj) for obj in policies)
        ]

    def hooks(self) -> list:
        return self.pairs

    def start(self) -> None: ...

    def stop(self) -> None: ...


PARAMS: dict[tuple[str, str], dict[str, Any]] = {
    ("team", "limits"): {"metadata": {"name": "limits"}, "data": {"max": "3"}}
}


def find_params(api_version: str, kind: str, ns: str, name: str, selector: Any) -> list | None:
    if kind != "ConfigMap":
        return None
    found = PARAMS.get((ns, name))
    return [found] if found else []


def admission(policies: list[dict], bindings: list[dict]) -> PolicyAdmission:
    return PolicyAdmission(
        Source(policies, bindings),  # type: ignore[arg-type]
        find_params,
        lambda api_version, kind: True if kind == "ConfigMap" else None,
        lambda name: {"metadata": {"name": name, "labels": {"env": "prod"}}},
    )


async def decide(plugin: PolicyAdmission, obj: dict[str, Any]) -> tuple[Any, list[str]]:
    req = request(object=obj)
    try:
        await plugin.validate(req)
    except errors.StatusError as e:
        return e, req.warnings
    return None, req.warnings


@pytest_twisted.ensureDeferred
async def test_deny_and_pass() -> None:
    plugin = admission([policy()], [binding()])
    error, _ = await decide(plugin, deployment(9))
    assert (error.code, error.reason) == (422, "Invalid")
    assert error.message == (
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding "
        "'b' denied request: too many"
    )
    assert error.details == {
        "name": "web",
        "group": "apps",
        "kind": "deployments",
        "causes": [{"message": error.message.split("is forbidden: ", 1)[1]}],
    }
    assert await decide(plugin, deployment(1)) == (None, [])


@pytest_twisted.ensureDeferred
async def test_unbound_or_unmatched_policies_do_nothing() -> None:
    assert await decide(admission([policy()], []), deployment(9)) == (None, [])
    excluded = policy(matchConstraints={"resourceRules": RULES, "excludeResourceRules": RULES})
    assert await decide(admission([excluded], [binding()]), deployment(9)) == (None, [])
    named = [{**RULES[0], "resourceNames": ["other"]}]
    other = policy(matchConstraints={"resourceRules": named})
    assert await decide(admission([other], [binding()]), deployment(9)) == (None, [])
    narrowed = binding(matchResources={"objectSelector": {"matchLabels": {"tier": "x"}}})
    assert await decide(admission([policy()], [narrowed]), deployment(9)) == (None, [])
    error, _ = await decide(admission([policy()], [narrowed]), deployment(9, tier="x"))
    assert error.code == 422


@pytest_twisted.ensureDeferred
async def test_warn_and_audit_actions() -> None:
    plugin = admission([policy()], [binding(validationActions=["Warn", "Audit"])])
    req = request(object=deployment(9))
    await plugin.validate(req)
    assert req.warnings == [
        "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': too many"
    ]
    assert req.audit_annotations == {
        "validation.policy.admission.platform.io/validation_failure": (
            '[{"message":"too many","policy":"p","binding":"b","expressionIndex":0,'
            '"validationActions":["Warn","Audit"]}]'
        )
    }


@pytest_twisted.ensureDeferred
async def test_audit_keeps_the_requests_first_failure() -> None:
    """kube's AddAnnotation keeps a key's first value: a later failure, of this policy
    or another, does not replace it; the index counts every validation, passed or not."""
    two = policy(
        validations=[
            {"expression": "true"},
            {"expression": "object.spec.replicas < 5", "message": "first <b>"},
            {"expression": "object.spec.replicas < 3", "message": "second"},
        ]
    )
    plugin = admission([two], [binding(validationActions=["Audit"])])
    req = request(object=deployment(9))
    await plugin.validate(req)
    (value,) = req.audit_annotations.values()
    assert value == (
        '[{"message":"first \\u003cb\\u003e","policy":"p","binding":"b","expressionIndex":1,'
        '"validationActions":["Audit"]}]'
    )


@pytest_twisted.ensureDeferred
async def test_parameters() -> None:
    with_params = policy(
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        validations=[{"expression": "object.spec.replicas <= int(params.data.max)"}],
    )
    ref = {"name": "limits", "parameterNotFoundAction": "Deny"}
    plugin = admission([with_params], [binding(paramRef=ref)])
    error, _ = await decide(plugin, deployment(4))
    assert error.message.endswith(
        "denied request: failed expression: object.spec.replicas <= int(params.data.max)"
    )
    assert await decide(plugin, deployment(3)) == (None, [])
    missing = admission([with_params], [binding(paramRef={**ref, "name": "gone"})])
    error, _ = await decide(missing, deployment(1))
    assert error.message.endswith(
        "denied request: failed to configure binding: no params found for policy binding "
        "with `Deny` parameterNotFoundAction"
    )
    allow = admission(
        [with_params], [binding(paramRef={"name": "gone", "parameterNotFoundAction": "Allow"})]
    )
    assert await decide(allow, deployment(9)) == (None, [])


@pytest_twisted.ensureDeferred
async def test_errors_follow_the_failure_policy() -> None:
    failing = [{"expression": "object.spec.missing > 1"}]
    error, _ = await decide(admission([policy(validations=failing)], [binding()]), deployment(1))
    assert error.message.endswith(
        "denied request: expression 'object.spec.missing > 1' resulted in error: "
        "no such key: missing"
    )
    ignoring = policy(validations=failing, failurePolicy="Ignore")
    assert await decide(admission([ignoring], [binding()]), deployment(1)) == (None, [])


@pytest_twisted.ensureDeferred
async def test_variables_and_match_conditions() -> None:
    spec = policy(
        variables=[
            {"name": "r", "expression": "object.spec.replicas"},
            {"name": "broken", "expression": "object.spec.nothing"},
        ],
        matchConditions=[
            {"name": "prod", "expression": "namespaceObject.metadata.labels.env == 'prod'"}
        ],
        validations=[
            {"expression": "variables.r < 5", "messageExpression": "'got ' + string(variables.r)"},
            {"expression": "variables.broken == 1"},
        ],
    )
    plugin = admission([spec], [binding()])
    error, _ = await decide(plugin, deployment(7))
    assert error.message.endswith("denied request: got 7")
    error, _ = await decide(plugin, deployment(1))
    # kube's composition names the variable that failed (the reference's answer)
    assert error.message.endswith(
        "expression 'variables.broken == 1' resulted in error: "
        'composited variable "broken" fails to evaluate: no such key: nothing'
    )


@pytest_twisted.ensureDeferred
async def test_a_message_expression_kube_would_not_print_falls_back() -> None:
    multi_line = [
        {"expression": "false", "messageExpression": "'two\\nlines'", "message": "plain"},
    ]
    plugin = admission([policy(validations=multi_line)], [binding()])
    error, _ = await decide(plugin, deployment(1))
    assert error.message.endswith("denied request: plain")
    too_long = [
        {"expression": "false", "messageExpression": f"'{'x' * (evaluate.MAX_MESSAGE + 1)}'"}
    ]
    plugin = admission([policy(validations=too_long)], [binding()])
    error, _ = await decide(plugin, deployment(1))
    assert error.message.endswith("denied request: failed expression: false")


@pytest_twisted.ensureDeferred
async def test_audit_annotations_are_published_under_the_policy_name() -> None:
    annotations = [
        {"key": "replicas", "valueExpression": "string(object.spec.replicas)"},
        {"key": "skipped", "valueExpression": "null"},
    ]
    plugin = admission([policy(auditAnnotations=annotations)], [binding()])
    req = request(object=deployment(2))
    await plugin.validate(req)
    assert req.audit_annotations == {"p/replicas": "2"}
    broken = [{"key": "bad", "valueExpression": "string(object.spec.missing)"}]
    plugin = admission([policy(auditAnnotations=broken)], [binding()])
    error, _ = await decide(plugin, deployment(2))
    assert (error.code, error.reason) == (422, "Invalid")
    assert error.message == (
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' "
        "denied request: expression 'string(object.spec.missing)' resulted in error: no such "
        "key: missing"
    )
