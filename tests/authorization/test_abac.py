"""ABAC policies: kube's matching rules and file format."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_twisted

from platform_api.authentication.user import UserInfo
from platform_api.authorization.abac import ABACAuthorizer, PolicyError, load_policies
from platform_api.authorization.interface import Attributes, Decision

POLICIES = """# comments and blank lines are skipped

{"apiVersion": "abac.authorization.platform.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*"}}
{"apiVersion": "abac.authorization.platform.io/v1beta1", "kind": "Policy", "spec": {"group": "viewers", "readonly": true, "namespace": "projectA", "resource": "pods", "apiGroup": ""}}
{"user": "bob", "nonResourcePath": "/apis/*"}
{"apiVersion": "abac.authorization.platform.io/v1beta1", "kind": "Policy", "spec": {"group": "system:authenticated", "readonly": true, "nonResourcePath": "/version"}}
"""


def attrs(user: UserInfo, verb: str, **kwargs: str) -> Attributes:
    return Attributes(user=user, verb=verb, resource_request="path" not in kwargs, **kwargs)


@pytest_twisted.ensureDeferred
async def test_rules(tmp_path: Path) -> None:
    path = tmp_path / "policy.jsonl"
    path.write_text(POLICIES)
    abac = ABACAuthorizer(load_policies(str(path)))
    alice = UserInfo("alice", groups=("system:authenticated",))
    viewer = UserInfo("vic", groups=("viewers", "system:authenticated"))
    bob = UserInfo("bob")
    cases = [
        (attrs(alice, "delete", namespace="x", resource="secrets"), Decision.ALLOW),
        (attrs(viewer, "list", namespace="projectA", resource="pods"), Decision.ALLOW),
        (attrs(viewer, "create", namespace="projectA", resource="pods"), Decision.NO_OPINION),
        (attrs(viewer, "list", namespace="projectB", resource="pods"), Decision.NO_OPINION),
        (attrs(bob, "get", path="/apis/apps"), Decision.ALLOW),
        (attrs(bob, "get", path="/api"), Decision.NO_OPINION),
        (attrs(viewer, "get", path="/version"), Decision.ALLOW),
        (attrs(bob, "get", namespace="x", resource="pods"), Decision.NO_OPINION),
    ]
    for request, expected in cases:
        decision, reason = await abac.authorize(request)
        assert decision is expected, request
        assert reason == ("" if expected is Decision.ALLOW else "No policy matched.")


def test_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "policy.jsonl"
    path.write_text('{"apiVersion": "v1", "kind": "Policy"}\n')
    with pytest.raises(PolicyError, match="line 1: expected apiVersion"):
        load_policies(str(path))
    path.write_text("\n{not json\n")
    with pytest.raises(PolicyError, match="line 2"):
        load_policies(str(path))


def test_rules_for_lists_the_matching_policies(tmp_path: Path) -> None:
    path = tmp_path / "policy.jsonl"
    path.write_text(
        '{"user": "carol", "namespace": "a", "resource": "pods", "readonly": true}\n'
        '{"group": "devs", "namespace": "*", "apiGroup": "apps", "resource": "*"}\n'
        '{"user": "*", "namespace": "*", "nonResourcePath": "/version", "readonly": true}\n'
        '{"user": "dave", "namespace": "*", "resource": "*"}\n'
    )
    abac = ABACAuthorizer(load_policies(str(path)))
    rules = abac.rules_for(UserInfo("carol", groups=("devs",)), "a")
    assert rules.resource == [
        {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["*"], "apiGroups": ["apps"], "resources": ["*"]},
    ]
    assert rules.non_resource == [
        {"verbs": ["get", "list", "watch"], "nonResourceURLs": ["/version"]}
    ]
    assert (rules.incomplete, rules.errors) == (False, [])
    assert abac.rules_for(UserInfo("carol"), "b").resource == []
