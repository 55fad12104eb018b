"""MutatingAdmissionPolicy: mutations in order, failure policies, kube's refusal."""

from __future__ import annotations

from typing import Any

import pytest_twisted

from platform_api import errors
from platform_api.admission.policy.compiled import compile_binding
from platform_api.admission.policy.mutate import MutatingPolicyAdmission
from platform_api.admission.policy.mutating import compile_mutating_policy
from platform_api.fieldmanager import walk
from platform_api.fieldmanager.typed import Typed
from tests.admission.test_policy import RULES, deployment, find_params
from tests.admission.test_webhook_matching import request

TYPED = Typed(None)  # no schema: maps merge granularly, lists are atomic


def policy(name: str = "p", *mutations: dict[str, Any], **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "matchConstraints": {"resourceRules": RULES},
        "reinvocationPolicy": "Never",
        "mutations": list(mutations),
    }
    return {"metadata": {"name": name, "resourceVersion": "1"}, "spec": {**base, **spec}}


def apply(expression: str) -> dict[str, Any]:
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}


def patch(expression: str) -> dict[str, Any]:
    return {"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}


def binding(policy_name: str = "p", name: str = "b") -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": "1"}, "spec": {"policyName": policy_name}}


class Source:
    def __init__(self, policies: list[dict], bindings: list[dict]) -> None:
        compiled = [compile_binding(b) for b in bindings]
        self.pairs = [
            (p, [b for b in compiled if b.policy == p.name])
            for p in sorted((compile_mutating_policy(o) for o in policies), key=lambda p: p.name)
        ]

    def hooks(self) -> list:
        return self.pairs


def plugin(policies: list[dict], bindings: list[dict]) -> MutatingPolicyAdmission:
    return MutatingPolicyAdmission(
        Source(policies, bindings),  # type: ignore[arg-type]
        find_params,
        lambda api_version, kind: True if kind == "ConfigMap" else None,
        lambda name: {"metadata": {"name": name}},
    )


def merge(live: dict, config: dict) -> dict:
    merged: dict = walk.merge(TYPED, {}, live, config)
    return merged


def atomics(config: dict) -> list[str]:
    return walk.atomic_paths(TYPED, {}, config)


async def run(admission: MutatingPolicyAdmission, obj: dict) -> Any:
    req = request(object=obj)
    try:
        await admission.mutate(req, merge, atomics)
    except errors.StatusError as e:
        return e
    return req.object


@pytest_twisted.ensureDeferred
async def test_mutations_apply_in_order_across_policies() -> None:
    first = policy(
        "a",
        apply('Object{metadata: Object.metadata{labels: {"team": "blue"}}}'),
        patch('[JSONPatch{op: "replace", path: "/spec/replicas", value: 3}]'),
    )
    second = policy(
        "b",
        apply(
            "Object{spec: Object.spec{replicas: object.spec.replicas * 2,"
            ' paused: object.metadata.labels["team"] == "blue"}}'
        ),
    )
    out = await run(plugin([second, first], [binding("a", "x"), binding("b", "y")]), deployment(1))
    assert out["metadata"]["labels"] == {"team": "blue"}
    assert out["spec"] == {"replicas": 6, "paused": True}


@pytest_twisted.ensureDeferred
async def test_conditions_and_failed_tests_leave_the_object() -> None:
    skipped = policy(
        "p",
        apply("Object{spec: Object.spec{replicas: 9}}"),
        matchConditions=[{"name": "big", "expression": "object.spec.replicas > 5"}],
    )
    tested = policy(
        "q",
        patch(
            '[JSONPatch{op: "test", path: "/spec/replicas", value: 7},'
            ' JSONPatch{op: "replace", path: "/spec/replicas", value: 8}]'
        ),
    )
    out = await run(plugin([skipped, tested], [binding("p"), binding("q", "c")]), deployment(1))
    assert out["spec"] == {"replicas": 1}


@pytest_twisted.ensureDeferred
async def test_failures_refuse_with_kube_wording_unless_ignored() -> None:
    broken = policy("p", patch('[JSONPatch{op: "remove", path: "/spec/missing"}]'))
    error = await run(plugin([broken], [binding()]), deployment(1))
    assert error.code == 403
    assert error.reason == "Invalid"
    assert error.message.startswith("policy 'p' with binding 'b' denied request: JSON Patch: ")
    ignored = policy(
        "p", patch('[JSONPatch{op: "remove", path: "/spec/missing"}]'), failurePolicy="Ignore"
    )
    assert (await run(plugin([ignored], [binding()]), deployment(1)))["spec"] == {"replicas": 1}


@pytest_twisted.ensureDeferred
async def test_atomic_lists_are_refused() -> None:
    lists = policy("p", apply('Object{spec: Object.spec{args: ["a"]}}'))
    error = await run(plugin([lists], [binding()]), deployment(1))
    assert error.message == (
        "policy 'p' with binding 'b' denied request: error applying patch: invalid "
        "ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.args"
    )


@pytest_twisted.ensureDeferred
async def test_compile_errors_are_configuration_errors() -> None:
    bad = policy("p", apply('"x"'))
    error = await run(plugin([bad], [binding()]), deployment(1))
    assert error.message == (
        "policy 'p' with binding 'b' denied request: must evaluate to Object but got string"
    )
    assert error.details["causes"] == [{"message": error.message}]


@pytest_twisted.ensureDeferred
async def test_json_patch_refusals_in_kubes_library_words() -> None:
    """The patch applies as gopkg.in/evanphx/json-patch.v4 applies it (kube's reference
    answered these words): an add under a missing object, an unknown operation."""
    missing = policy("p", patch('[JSONPatch{op: "add", path: "/status/x", value: "v"}]'))
    error = await run(plugin([missing], [binding()]), deployment(1))
    assert error.message == (
        "policy 'p' with binding 'b' denied request: JSON Patch: add operation does not "
        'apply: doc is missing path: "/status/x": missing value'
    )
    bogus = policy("p", patch('[JSONPatch{op: "bogus", path: "/spec"}]'))
    error = await run(plugin([bogus], [binding()]), deployment(1))
    assert error.message == (
        "policy 'p' with binding 'b' denied request: JSON Patch: Unexpected kind: bogus"
    )


@pytest_twisted.ensureDeferred
async def test_an_evaluation_failure_names_its_expression() -> None:
    expression = '[JSONPatch{op: "add", path: "/spec/paused", value: object.nope}]'
    error = await run(plugin([policy("p", patch(expression))], [binding()]), deployment(1))
    assert error.message == (
        f"policy 'p' with binding 'b' denied request: expression '{expression}' resulted in "
        "error: no such key: nope"
    )


@pytest_twisted.ensureDeferred
async def test_a_failed_mutation_is_passed_over_and_the_next_runs() -> None:
    both = policy(
        "p",
        patch('[JSONPatch{op: "remove", path: "/spec/missing"}]'),
        patch('[JSONPatch{op: "replace", path: "/spec/replicas", value: 4}]'),
        failurePolicy="Ignore",
    )
    out = await run(plugin([both], [binding()]), deployment(1))
    assert out["spec"] == {"replicas": 4}


@pytest_twisted.ensureDeferred
async def test_what_the_type_cannot_hold_is_an_internal_error_whatever_the_policy() -> None:
    """kube decodes a JSON patch's result strictly into the versioned type; the error
    is returned as it is, past the failure policy."""
    for failure_policy in ("Fail", "Ignore"):
        unknown = policy(
            "p",
            patch('[JSONPatch{op: "add", path: "/spec/nope", value: 1}]'),
            failurePolicy=failure_policy,
        )
        error = await run(plugin([unknown], [binding()]), deployment(1))
        assert (error.code, error.reason) == (500, "InternalError")
        assert (
            error.message
            == 'Internal error occurred: strict decoding error: unknown field "spec.nope"'
        )
    # unknown fields in the order kube's decoder meets them: the patch library writes the
    # objects it decoded with sorted keys ("aaa" before "metadata")
    two = policy(
        "p",
        patch(
            '[JSONPatch{op: "add", path: "/metadata/zzz", value: 2},'
            ' JSONPatch{op: "add", path: "/aaa", value: 1}]'
        ),
    )
    error = await run(plugin([two], [binding()]), deployment(1))
    assert error.message == (
        'Internal error occurred: strict decoding error: unknown field "aaa", '
        'unknown field "metadata.zzz"'
    )
    wrong = policy("p", patch('[JSONPatch{op: "replace", path: "/spec/replicas", value: "x"}]'))
    error = await run(plugin([wrong], [binding()]), deployment(1))
    assert error.message == (
        "Internal error occurred: json: cannot unmarshal string into Go struct field "
        "DeploymentSpec.spec.replicas of type int32"
    )
    other = policy("p", patch('[JSONPatch{op: "replace", path: "/kind", value: "StatefulSet"}]'))
    error = await run(plugin([other], [binding()]), deployment(1))
    assert error.message == (
        "Internal error occurred: failed to convert object: converting (v1.StatefulSet) to "
        "(apps.Deployment): unknown conversion"
    )


@pytest_twisted.ensureDeferred
async def test_a_missing_parameter_refuses_as_forbidden() -> None:
    """A configuration error (the binding's parameter is not there) keeps the Forbidden
    reason kube's refusal starts with; a mutation's failure is Invalid."""
    needs = policy(
        "p",
        patch('[JSONPatch{op: "replace", path: "/spec/replicas", value: 2}]'),
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
    )
    absent = binding()
    absent["spec"]["paramRef"] = {
        "name": "absent",
        "namespace": "team",
        "parameterNotFoundAction": "Deny",
    }
    error = await run(plugin([needs], [absent]), deployment(1))
    assert (error.code, error.reason) == (403, "Forbidden")
    assert error.message.startswith(
        "policy 'p' with binding 'b' denied request: failed to configure binding: "
    )


@pytest_twisted.ensureDeferred
async def test_a_json_patch_field_of_another_type_fails_the_evaluation() -> None:
    """A dyn value of another type in op, path or from: kube's evaluation fails building
    the JSONPatch (the reference's words, for int, bool and double)."""
    for value, go_type in (("dyn(1)", "int64"), ("dyn(true)", "bool"), ("dyn(2.5)", "float64")):
        expression = f'[JSONPatch{{op: "add", path: {value}, value: "x"}}]'
        error = await run(plugin([policy("p", patch(expression))], [binding()]), deployment(1))
        assert error.message == (
            f"policy 'p' with binding 'b' denied request: expression '{expression}' resulted "
            f"in error: unexpected type {go_type} for JSONPatchType 'path' field"
        )
