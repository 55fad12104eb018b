"""Escalation prevention: what a non-admin may grant through roles and bindings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from twisted.internet.defer import ensureDeferred

from platform_api import errors
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.rbac.escalation import EscalationGuard
from platform_api.authorization.rbac.index import GROUP
from platform_api.scheme.catalog import builtin_scheme
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


def scope_for(plural: str, who: UserInfo = CAROL, namespace: str = "", name: str = "",
              body: bytes = b"{}", store: Any = None) -> Any:  # fmt: skip
    rt = builtin_scheme().lookup(GROUP, "v1", plural)
    return SimpleNamespace(
        resource=rt,
        ctx=SimpleNamespace(user=who),
        namespace=namespace,
        name=name,
        body=lambda: body,
        store=store,
    )


def prepare(guard: EscalationGuard, scope: Any) -> Any:
    d = ensureDeferred(guard.prepare(scope))
    out: list[Any] = []
    d.addBoth(out.append)
    return out[0]


def forbidden_message(check: Any, obj: dict, old: dict | None = None) -> str:
    with pytest.raises(errors.StatusError) as e:
        check(obj, old)
    assert e.value.code == 403
    return e.value.message


def test_roles_need_the_rights_they_grant(cluster: Cluster) -> None:
    guard = EscalationGuard(cluster.index, Grants())
    admin = UserInfo("root", groups=(MASTERS,))
    assert prepare(guard, scope_for("roles", admin, "ns")) is None
    check = prepare(guard, scope_for("roles", namespace="ns"))
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
    guard = EscalationGuard(cluster.index, Grants(("escalate", "roles", "")))
    assert prepare(guard, scope_for("roles", namespace="ns")) is None


def test_aggregation_rule_needs_full_authority(cluster: Cluster) -> None:
    check = prepare(EscalationGuard(cluster.index, Grants()), scope_for("clusterroles"))
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
    check = prepare(
        EscalationGuard(cluster.index, Grants()), scope_for("rolebindings", namespace="ns")
    )
    assert forbidden_message(check, body).startswith(
        f'rolebindings.{GROUP} "b" is forbidden: user "carol" (groups=["system:authenticated"]) '
        "is attempting to grant RBAC permissions not currently held:"
    )
    check(binding("ok", "ClusterRole", "reader", user("dave"), namespace="ns"), None)
    ghost = binding("g", "Role", "ghost", user("dave"), namespace="ns")
    assert forbidden_message(check, ghost) == (
        f'rolebindings.{GROUP} "g" is forbidden: role.{GROUP} "ghost" not found'
    )
    # `bind` on the one role the body names lets exactly that binding through.
    guard = EscalationGuard(cluster.index, Grants(("bind", "clusterroles", "secrets")))
    check = prepare(guard, scope_for("rolebindings", namespace="ns", body=orjson.dumps(body)))
    check(body, None)
    other = binding("b", "ClusterRole", "all-secrets", user("dave"), namespace="ns")
    assert "not found" in forbidden_message(check, other)
