"""matchPolicy Equivalent: webhooks and policies that name one version of a resource see
requests to its other versions, converted to the version they named."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted

from platform_api import errors
from platform_api.admission import matching
from platform_api.admission.equivalence import Equivalence, Target, VersionError
from platform_api.admission.policy.compiled import compile_binding, compile_policy
from platform_api.admission.policy.dispatch import PolicyAdmission
from platform_api.admission.policy.mutate import MutatingPolicyAdmission
from platform_api.admission.request import AdmissionRequest, request_body
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.types import STATUS_VERBS, ResourceType, Subresource
from tests.admission import test_mutating_policy as mutating_tests
from tests.admission.test_policy import binding
from tests.admission.test_webhook_dispatch import Caller, Source, patch
from tests.admission.test_webhook_dispatch import plugin as webhook_plugin
from tests.admission.test_webhook_matching import request

GROUP = "stable.example.com"
Obj = dict[str, Any]


def widget_type(version: str) -> ResourceType:
    return ResourceType(
        GROUP,
        version,
        "Widget",
        "widgets",
        "widget",
        True,
        subresources=(Subresource("status", "Widget", STATUS_VERBS),),
        definition=f"com.example.stable.{version}.Widget",
        custom=True,
    )


def equivalence() -> Equivalence:
    scheme = builtin_scheme()
    scheme.install("widgets.stable.example.com", [widget_type("v1"), widget_type("v2")], {})
    return Equivalence(scheme)


def widget(version: str, **labels: str) -> Obj:
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "Widget",
        "metadata": {"name": "w", "labels": labels},
        "spec": {"size": 1},
    }


def widget_request(version: str = "v2", **kw: Any) -> AdmissionRequest:
    base: dict[str, Any] = {
        "group": GROUP,
        "version": version,
        "resource": "widgets",
        "kind": (GROUP, version, "Widget"),
        "object": widget(version),
    }
    return request(**{**base, **kw})


def rules(*versions: str, resources: tuple[str, ...] = ("widgets",)) -> list[Obj]:
    return [
        {
            "operations": ["*"],
            "apiGroups": [GROUP],
            "apiVersions": list(versions),
            "resources": list(resources),
        }
    ]


V1 = Target(GROUP, "v1", "widgets", (GROUP, "v1", "Widget"))
V2 = Target(GROUP, "v2", "widgets", (GROUP, "v2", "Widget"))


def test_the_scheme_knows_a_resources_versions() -> None:
    eq = equivalence()
    assert [rt.version for rt in eq.scheme.equivalents(GROUP, "v2", "widgets")] == ["v1", "v2"]
    assert eq.equivalents(widget_request()) == [V1]
    assert eq.equivalents(widget_request(subresource="status")) == [V1]
    # Built-in resources have one version each here; unknown ones none.
    assert [rt.version for rt in eq.scheme.equivalents("apps", "v1", "deployments")] == ["v1"]
    assert eq.scheme.equivalents(GROUP, "v9", "widgets") == []
    eq.scheme.uninstall("widgets.stable.example.com")
    assert eq.scheme.equivalents(GROUP, "v1", "widgets") == []


@pytest.mark.parametrize(
    ("raw", "policy", "expected"),
    [
        (rules("v2"), "Equivalent", V2),  # asked-for version first
        (rules("v1"), "Equivalent", V1),
        (rules("v1"), "Exact", None),
        (rules("v1", resources=("widgets/status",)), "Equivalent", None),
        (rules("v3"), "Equivalent", None),
        (rules("*"), "Exact", V2),
    ],
)
def test_rules_match_an_equivalent_version(raw: list[Obj], policy: str, expected: Any) -> None:
    compiled = tuple(matching.compile_rule(r) for r in raw)
    assert matching.rules_match(compiled, widget_request(), policy, equivalence()) == expected


def test_subresources_match_at_the_equivalent_version() -> None:
    compiled = tuple(matching.compile_rule(r) for r in rules("v1", resources=("widgets/status",)))
    req = widget_request(subresource="status")
    target = Target(GROUP, "v1", "widgets", (GROUP, "v1", "Widget"))
    assert matching.rules_match(compiled, req, "Equivalent", equivalence()) == target


@pytest_twisted.ensureDeferred
async def test_the_request_is_converted_and_back() -> None:
    eq = equivalence()
    req = widget_request(operation="UPDATE", old_object=widget("v2", old="yes"))
    assert await eq.versioned(req, V2) is req
    at_v1 = await eq.versioned(req, V1)
    assert (at_v1.object or {})["apiVersion"] == f"{GROUP}/v1"
    assert (at_v1.old_object or {})["metadata"]["labels"] == {"old": "yes"}
    body = request_body(at_v1, "u")
    assert body["kind"] == {"group": GROUP, "version": "v1", "kind": "Widget"}
    assert body["resource"] == {"group": GROUP, "version": "v1", "resource": "widgets"}
    assert body["requestKind"] == {"group": GROUP, "version": "v2", "kind": "Widget"}
    assert body["requestResource"] == {"group": GROUP, "version": "v2", "resource": "widgets"}
    assert at_v1.warnings is req.warnings  # warnings reach the response either way
    at_v1.object = {**widget("v1"), "spec": {"size": 7}}
    assert await eq.restore(req, at_v1) == {**widget("v2"), "spec": {"size": 7}}

    # A CRD's converter (a conversion webhook too) does the converting.
    async def convert(obj: Obj, api_version: str) -> Obj:
        return {**obj, "apiVersion": api_version, "converted": True}

    eq.converters[(GROUP, "widgets")] = convert
    assert ((await eq.versioned(req, V1)).object or {})["converted"] is True


@pytest_twisted.ensureDeferred
async def test_a_patched_custom_resources_version_is_converted_back() -> None:
    """kube's converter takes a patched custom resource back from any of its versions;
    one it does not have, or none, is its conversion error (the reference's words)."""
    eq = equivalence()
    req = widget_request("v2")

    async def convert(obj: Obj, api_version: str) -> Obj:
        return {**obj, "apiVersion": api_version}

    eq.converters[(GROUP, "widgets")] = convert
    assert (await eq.read_back(req, widget("v1")))["apiVersion"] == f"{GROUP}/v2"
    for api_version, message in (
        (f"{GROUP}/v9", f"request to convert CR from an invalid group/version: {GROUP}/v9"),
        (
            None,
            f'/, Kind=Widget is unstructured and is not suitable for converting to "{GROUP}/v2"',
        ),
    ):
        with pytest.raises(VersionError) as caught:
            await eq.read_back(req, {**widget("v1"), "apiVersion": api_version})
        assert str(caught.value) == message
    # built-in kinds are the typed decoder's: left as they are
    pods = request(object={"apiVersion": "v2", "kind": "Pod"})
    assert await eq.read_back(pods, pods.object or {}) == {"apiVersion": "v2", "kind": "Pod"}


@pytest_twisted.ensureDeferred
async def test_a_webhook_sees_and_patches_the_version_it_named() -> None:
    seen: list[Obj] = []

    def answer(asked: Obj) -> Obj:
        seen.append(asked)
        return patch({"op": "add", "path": "/metadata/labels/hooked", "value": "v1"})

    caller = Caller(
        {"hook": answer, "check": lambda asked: seen.append(asked) or {"allowed": True}}
    )
    hook = {
        "clientConfig": {"url": "https://hook/"},
        "rules": rules("v1"),
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    plugin = webhook_plugin([{**hook, "name": "hook"}], [], caller)
    plugin.equivalence = equivalence()
    req = widget_request()
    await plugin.mutate(req)
    assert seen[0]["kind"] == {"group": GROUP, "version": "v1", "kind": "Widget"}
    assert seen[0]["requestKind"] == {"group": GROUP, "version": "v2", "kind": "Widget"}
    assert seen[0]["object"]["apiVersion"] == f"{GROUP}/v1"
    assert req.object == widget("v2", hooked="v1")  # the patch, in the version asked for

    exact = {**hook, "name": "check", "clientConfig": {"url": "https://check/"}}
    plugin.validating = Source([{**exact, "matchPolicy": "Exact"}], False)  # type: ignore[assignment]
    await plugin.validate(widget_request())
    assert len(seen) == 1
    plugin.validating = Source([exact], False)  # type: ignore[assignment]
    await plugin.validate(widget_request())
    assert seen[1]["resource"]["version"] == "v1"


def policy_spec(**spec: Any) -> Obj:
    return {
        "metadata": {"name": "p", "resourceVersion": "1"},
        "spec": {"matchConstraints": {"resourceRules": rules("v1")}, **spec},
    }


class PolicySource:
    def __init__(self, policies: list, bindings: list[Obj]) -> None:
        compiled = [compile_binding(b) for b in bindings]
        self.pairs = [(p, [b for b in compiled if b.policy == p.name]) for p in policies]

    def hooks(self) -> list:
        return self.pairs


@pytest_twisted.ensureDeferred
async def test_a_validating_policy_evaluates_the_version_it_matched() -> None:
    check = (
        "object.apiVersion == 'stable.example.com/v1' && request.kind.version == 'v1' "
        "&& request.requestKind.version == 'v2' && request.resource.version == 'v1'"
    )
    raw = policy_spec(validations=[{"expression": check, "message": "not at v1"}])
    bindings = [binding()]
    plugin = PolicyAdmission(
        PolicySource([compile_policy(raw)], bindings),  # type: ignore[arg-type]
        mutating_tests.find_params,
        lambda api_version, kind: None,
        lambda name: None,
        equivalence=equivalence(),
    )
    await plugin.validate(widget_request())  # passes: evaluated at v1
    # An excluded equivalent excludes the request too.
    constraints = {"resourceRules": rules("*"), "excludeResourceRules": rules("v1")}
    raw = policy_spec(
        matchConstraints=constraints, validations=[{"expression": "false", "message": "no"}]
    )
    plugin.source = PolicySource([compile_policy(raw)], bindings)  # type: ignore[assignment]
    await plugin.validate(widget_request())
    plugin.equivalence = None  # as with matchPolicy Exact: only v2 is seen, and denied
    with pytest.raises(errors.StatusError) as info:
        await plugin.validate(widget_request())
    assert info.value.message.endswith("denied request: no")


@pytest_twisted.ensureDeferred
async def test_a_mutating_policy_mutates_at_the_version_it_matched() -> None:
    mutation = {
        "patchType": "ApplyConfiguration",
        "applyConfiguration": {
            "expression": "Object{metadata: Object.metadata{labels: {'seen': "
            "object.apiVersion.split('/')[1]}}}"
        },
    }
    raw = policy_spec(mutations=[mutation])
    policy = mutating_tests.compile_mutating_policy(raw)
    plugin = MutatingPolicyAdmission(
        PolicySource([policy], [mutating_tests.binding()]),  # type: ignore[arg-type]
        mutating_tests.find_params,
        lambda api_version, kind: None,
        lambda name: None,
        equivalence=equivalence(),
    )
    req = widget_request()
    await plugin.mutate(req, mutating_tests.merge, mutating_tests.atomics)
    assert req.object == widget("v2", seen="v1")
