"""Which webhooks a request calls: rules, scope, selectors and match conditions."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted

from platform_api import errors
from platform_api.admission import matching
from platform_api.admission.request import AdmissionRequest
from platform_api.admission.webhook.hooks import Hook, compile_hook
from platform_api.authentication.user import UserInfo


def request(**kw: Any) -> AdmissionRequest:
    base: dict[str, Any] = {
        "operation": "CREATE",
        "group": "apps",
        "version": "v1",
        "resource": "deployments",
        "subresource": "",
        "kind": ("apps", "v1", "Deployment"),
        "namespaced": True,
        "namespace": "team",
        "name": "web",
        "user": UserInfo("jane", "7", ("dev",)),
        "dry_run": False,
        "options": None,
        "object": {"metadata": {"name": "web", "labels": {"app": "web"}}},
        "old_object": None,
    }
    base.update(kw)
    return AdmissionRequest(**base)


def hook(**kw: Any) -> Hook:
    raw: dict[str, Any] = {
        "name": "h.example.com",
        "clientConfig": {"url": "https://127.0.0.1/"},
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": ["apps"],
                "apiVersions": ["v1"],
                "resources": ["deployments"],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    raw.update(kw)
    return compile_hook("config", 0, raw, mutating=False)


def labels(name: str) -> dict[str, str] | None:
    return {"team": {"env": "prod"}, "default": {}}.get(name)


def rule(**kw: Any) -> list[dict[str, Any]]:
    base = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}
    return [{**base, **kw}]


@pytest.mark.parametrize(
    ("rules", "req", "expected"),
    [
        (rule(), request(), True),
        (rule(operations=["UPDATE"]), request(), False),
        (rule(apiGroups=[""]), request(), False),
        (rule(apiVersions=["v2"]), request(), False),
        (rule(resources=["pods"]), request(), False),
        # "*" is every resource but no sub-resource; "*/*" both; "x/y" exactly.
        (rule(resources=["*"]), request(subresource="scale"), False),
        (rule(resources=["*/*"]), request(subresource="scale"), True),
        (rule(resources=["deployments/scale"]), request(subresource="scale"), True),
        (rule(resources=["deployments/status"]), request(subresource="scale"), False),
        (rule(resources=["*/scale"]), request(subresource="scale"), True),
        (rule(scope="Namespaced"), request(), True),
        (rule(scope="Cluster"), request(), False),
        (rule(scope="Cluster"), request(namespace="", resource="nodes", group=""), True),
        # A namespace is cluster-scoped even though it carries its own name as namespace.
        (
            rule(scope="Cluster"),
            request(group="", resource="namespaces", namespace="team", name="team"),
            True,
        ),
        (
            rule(scope="Namespaced"),
            request(group="", resource="namespaces", namespace="team", name="team"),
            False,
        ),
    ],
)
def test_rules(rules: list[dict[str, Any]], req: AdmissionRequest, expected: bool) -> None:
    assert (matching.selected(hook(rules=rules), req, labels) is not None) is expected


def test_selectors() -> None:
    prod = hook(namespaceSelector={"matchLabels": {"env": "prod"}})
    assert matching.selected(prod, request(), labels)
    assert not matching.selected(prod, request(namespace="default"), labels)
    # Cluster-scoped objects are not filtered by a namespace selector.
    nodes = request(namespace="", group="", resource="nodes")
    assert matching.selected(
        hook(namespaceSelector={"matchLabels": {"x": "y"}}, rules=rule()), nodes, labels
    )
    with pytest.raises(errors.StatusError) as info:
        matching.selected(prod, request(namespace="gone"), labels)
    assert info.value.code == 404
    by_app = hook(objectSelector={"matchLabels": {"app": "web"}})
    assert matching.selected(by_app, request(), labels)
    assert not matching.selected(by_app, request(object={"metadata": {}}), labels)
    # The old object counts too (a label being removed).
    assert matching.selected(
        by_app, request(object={"metadata": {}}, old_object=request().object), labels
    )


def test_a_bad_selector_fails_closed() -> None:
    bad = hook(objectSelector={"matchExpressions": [{"key": "a", "operator": "Near"}]})
    with pytest.raises(errors.StatusError) as info:
        matching.selected(bad, request(), labels)
    assert info.value.code == 500


def test_configurations_are_exempt() -> None:
    kind = ("admissionregistration.platform.io", "v1", "ValidatingWebhookConfiguration")
    assert matching.exempt(request(kind=kind))
    assert not matching.exempt(request())


@pytest_twisted.ensureDeferred
async def test_match_conditions() -> None:
    conditions = [
        {"name": "prod-only", "expression": "object.metadata.name == 'web'"},
        {"name": "creates", "expression": "request.operation == 'CREATE'"},
    ]
    h = hook(matchConditions=conditions)
    assert await matching.conditions_match(h, request(), None)
    assert not await matching.conditions_match(h, request(object={"metadata": {"name": "x"}}), None)


@pytest_twisted.ensureDeferred
async def test_a_condition_error_fails_closed_unless_ignored() -> None:
    conditions = [{"name": "boom", "expression": "object.spec.replicas > 1"}]
    with pytest.raises(errors.StatusError) as info:
        await matching.conditions_match(hook(matchConditions=conditions), request(), None)
    assert info.value.code == 403
    assert info.value.message.startswith(
        "deployments.apps \"web\" is forbidden: expression 'object.spec.replicas > 1' "
        "resulted in error: "
    )
    ignoring = hook(matchConditions=conditions, failurePolicy="Ignore")
    assert not await matching.conditions_match(ignoring, request(), None)


@pytest_twisted.ensureDeferred
async def test_conditions_ask_the_authorizer() -> None:
    asked: list[Any] = []

    async def authorize(attrs: Any) -> tuple[str, str]:
        asked.append(attrs)
        return ("allow", "") if attrs.verb == "update" else ("deny", "no")

    conditions = [
        {"name": "a", "expression": "authorizer.requestResource.check('update').allowed()"},
        {"name": "b", "expression": "!authorizer.requestResource.check('delete').allowed()"},
    ]
    assert await matching.conditions_match(hook(matchConditions=conditions), request(), authorize)
    assert [(a.verb, a.resource, a.namespace, a.user["username"]) for a in asked] == [
        ("update", "deployments", "team", "jane"),
        ("delete", "deployments", "team", "jane"),
    ]
