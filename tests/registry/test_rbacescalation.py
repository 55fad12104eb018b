"""Escalation prevention: what a non-admin may grant through roles and bindings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred

from platform_api import errors
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.rbac.index import GROUP
from platform_api.registry.rbacescalation import EscalationGuard
from tests.authorization.test_rbac_authorizer import Cluster, binding, role, user

CAROL = UserInfo("carol", groups=("system:authenticated",))
READ_CM = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}
SECRETS = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}


class Grants:
    """An authorizer allowing exactly the (verb, resource, name) triples it was given."""

    def __init__(self, *allowed: tuple[str, str, str]) -> None:
        self.allowed = set(allowed)

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        key = (attrs.verb, attrs.resource, attrs.name)
        return (Decision.ALLOW if key in self.allowed else Decision.NO_OPINION), ""


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(str(tmp_path / "db"))
    c.index.start()
    c.put("clusterroles", role("reader", READ_CM))
    c.put("clusterrolebindings", binding("carol", "ClusterRole", "reader", user("carol")))
    yield c
    c.index.stop()


def check_with(guard: EscalationGuard, who: UserInfo = CAROL, namespace: str = "") -> Any:
    """The guard's check as a synchronous call (the test authorizer answers at once)."""

    def check(obj: dict, old: dict | None = None) -> None:
        d = ensureDeferred(guard.check(who, namespace, obj, old))
        failures: list[Any] = []
        d.addErrback(failures.append)
        if failures:
            failures[0].raiseException()

    return check


def forbidden_message(check: Any, obj: dict, old: dict | None = None) -> str:
    with pytest.raises(errors.StatusError) as e:
        check(obj, old)
    assert e.value.code == 403
    return e.value.message


def refusal(check: Any, obj: dict) -> tuple[int, str]:
    with pytest.raises(errors.StatusError) as e:
        check(obj, None)
    return e.value.code, e.value.message


def test_roles_need_the_rights_they_grant(cluster: Cluster) -> None:
    guard = EscalationGuard(cluster.index, Grants(), "roles")
    admin = UserInfo("root", groups=(MASTERS,))
    check_with(guard, admin, "ns")(role("more", READ_CM, SECRETS, namespace="ns"), None)
    check = check_with(guard, namespace="ns")
    check(role("fine", READ_CM, namespace="ns"), None)
    message = forbidden_message(check, role("more", READ_CM, SECRETS, namespace="ns"))
    assert message == (
        f'roles.{GROUP} "more" is forbidden: user "carol" (groups=["system:authenticated"]) is '
        "attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
    )
    # Only owner references or finalizers changing: no rights needed (the GC does this).
    old = role("more", SECRETS, namespace="ns")
    new = {**old, "metadata": {**old["metadata"], "finalizers": ["x"]}}
    check(new, old)
    # `escalate` on roles lifts the check entirely.
    guard = EscalationGuard(cluster.index, Grants(("escalate", "roles", "more")), "roles")
    check_with(guard, namespace="ns")(role("more", READ_CM, SECRETS, namespace="ns"), None)


def test_aggregation_rule_needs_full_authority(cluster: Cluster) -> None:
    check = check_with(EscalationGuard(cluster.index, Grants(), "clusterroles"))
    aggregated = {
        **role("agg"),
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]},
    }
    assert forbidden_message(check, aggregated) == (
        f'clusterroles.{GROUP} "agg" is forbidden: must have cluster-admin privileges to use '
        "the aggregationRule"
    )
    cluster.put(
        "clusterroles",
        role("all", {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
             {"nonResourceURLs": ["*"], "verbs": ["*"]}),
    )  # fmt: skip
    cluster.put("clusterrolebindings", binding("all", "ClusterRole", "all", user("carol")))
    check(aggregated, None)


def test_bindings_need_the_role_or_bind(cluster: Cluster) -> None:
    cluster.put("clusterroles", role("secrets", SECRETS))
    body = binding("b", "ClusterRole", "secrets", user("dave"), namespace="ns")
    check = check_with(EscalationGuard(cluster.index, Grants(), "rolebindings"), namespace="ns")
    assert forbidden_message(check, body).startswith(
        f'rolebindings.{GROUP} "b" is forbidden: user "carol" (groups=["system:authenticated"]) '
        "is attempting to grant RBAC permissions not currently held:"
    )
    check(binding("ok", "ClusterRole", "reader", user("dave"), namespace="ns"), None)
    ghost = binding("g", "Role", "ghost", user("dave"), namespace="ns")
    # kube passes its role getter's NotFound on, naming the request's resource
    assert refusal(check, ghost) == (404, f'rolebindings.{GROUP} "ghost" not found')
    # `bind` on the one role the binding names lets exactly that binding through.
    guard = EscalationGuard(
        cluster.index, Grants(("bind", "clusterroles", "secrets")), "rolebindings"
    )
    check = check_with(guard, namespace="ns")
    check(body, None)
    other = binding("b", "ClusterRole", "all-secrets", user("dave"), namespace="ns")
    assert refusal(check, other) == (404, f'rolebindings.{GROUP} "all-secrets" not found')
