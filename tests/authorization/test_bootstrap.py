"""The default roles and bindings: kube's bootstrap policy, branded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.apiserver.features import FeatureGates
from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes
from platform_api.authorization.rbac.bootstrap import (
    AUTOUPDATE,
    BOOTSTRAPPING,
    cluster_role_bindings,
    cluster_roles,
)
from platform_api.authorization.rbac.bootstrap_components import (
    component_roles,
    controller_role_bindings,
    controller_roles,
    role_bindings,
    roles,
)
from platform_api.authorization.rbac.bootstrap_controllers import EXTENSION_GROUPS
from platform_api.authorization.rbac.reconcile import default_policy
from platform_api.authorization.rbac.rules import allows
from platform_api.scheme.builtin import BUILTIN_TYPES, GROUP_ORDER

Obj = dict[str, Any]
RBAC = "rbac.authorization.platform.io"


def by_name(objs: list[Obj]) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in objs}


ROLES = by_name(cluster_roles() + component_roles() + controller_roles())
BINDINGS = by_name(cluster_role_bindings() + controller_role_bindings())


def can(role: Obj, verb: str, group: str, resource: str, sub: str = "") -> bool:
    attrs = Attributes(
        user=UserInfo("u"),
        verb=verb,
        api_group=group,
        resource=resource,
        subresource=sub,
        resource_request=True,
    )
    return any(allows(attrs, r) for r in role.get("rules") or [])


def can_get_url(role: Obj, path: str) -> bool:
    attrs = Attributes(user=UserInfo("u"), verb="get", path=path, resource_request=False)
    return any(allows(attrs, r) for r in role.get("rules") or [])


def test_every_default_is_labelled_and_annotated_and_unique() -> None:
    objs = default_policy()
    keys = [(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objs]
    assert len(set(keys)) == len(keys)
    for obj in objs:
        assert obj["apiVersion"] == f"{RBAC}/v1"
        assert obj["metadata"]["labels"][BOOTSTRAPPING] == "rbac-defaults"
        assert obj["metadata"]["annotations"] == {AUTOUPDATE: "true"}


@pytest.mark.parametrize(
    "name",
    [
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:aggregate-to-admin",
        "system:aggregate-to-edit",
        "system:aggregate-to-view",
        "system:basic-user",
        "system:discovery",
        "system:public-info-viewer",
        "system:monitoring",
        "system:node",
        "system:node-proxier",
        "system:kube-scheduler",
        "system:kube-controller-manager",
        "system:auth-delegator",
        "system:controller:namespace-controller",
        "system:controller:generic-garbage-collector",
        "system:controller:clusterrole-aggregation-controller",
    ],
)
def test_kube_default_cluster_roles_exist(name: str) -> None:
    assert ROLES[name]["kind"] == "ClusterRole"


def test_rules_name_only_groups_this_server_knows() -> None:
    """Or the metrics APIs of aggregated servers, which keep their upstream names."""
    known = {"", "*"} | {t.group for t in BUILTIN_TYPES} | set(GROUP_ORDER)
    for obj in default_policy():
        for rule in obj.get("rules") or []:
            groups = set(rule.get("apiGroups") or []) - EXTENSION_GROUPS
            assert groups <= known, (obj["metadata"]["name"], rule)
            assert not any("k8s.io" in g for g in groups)
    autoscaler = ROLES["system:controller:horizontal-pod-autoscaler"]["rules"]
    assert {g for r in autoscaler for g in r["apiGroups"]} >= EXTENSION_GROUPS


def test_cluster_admin_can_do_everything() -> None:
    role = ROLES["cluster-admin"]
    assert can(role, "delete", "anything.example.com", "widgets")
    assert can_get_url(role, "/any/path")


def test_admin_edit_view_aggregate_by_branded_labels() -> None:
    for name in ("admin", "edit", "view"):
        selectors = ROLES[name]["aggregationRule"]["clusterRoleSelectors"]
        assert selectors == [{"matchLabels": {f"{RBAC}/aggregate-to-{name}": "true"}}]
        assert "rules" not in ROLES[name]  # the aggregation controller fills them
    assert ROLES["edit"]["metadata"]["labels"][f"{RBAC}/aggregate-to-admin"] == "true"
    assert ROLES["view"]["metadata"]["labels"][f"{RBAC}/aggregate-to-edit"] == "true"
    for name in ("admin", "edit", "view"):
        labels = ROLES[f"system:aggregate-to-{name}"]["metadata"]["labels"]
        assert labels[f"{RBAC}/aggregate-to-{name}"] == "true"


def test_view_reads_workloads_but_never_secrets() -> None:
    view = ROLES["system:aggregate-to-view"]
    assert can(view, "list", "", "pods")
    assert can(view, "get", "apps", "deployments")
    assert can(view, "get", "", "pods", "log")
    assert not can(view, "get", "", "secrets")
    assert not can(view, "create", "", "pods")


def test_user_roles_leave_webhook_configurations_to_cluster_admins() -> None:
    """kube's admin, edit and view grant nothing on admission webhook configurations."""
    group = "admissionregistration.platform.io"
    for name in ("admin", "edit", "view"):
        role = ROLES[f"system:aggregate-to-{name}"]
        for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            assert not any(can(role, verb, group, plural) for verb in ("get", "list", "create"))
    assert can(ROLES["cluster-admin"], "create", group, "validatingwebhookconfigurations")


def test_edit_writes_workloads_and_reads_secrets() -> None:
    edit = ROLES["system:aggregate-to-edit"]
    for verb in ("create", "update", "patch", "delete"):
        assert can(edit, verb, "apps", "deployments")
    assert can(edit, "get", "", "secrets")
    assert can(edit, "create", "", "pods", "exec")
    assert can(edit, "update", "apps", "deployments", "scale")
    assert not can(edit, "create", RBAC, "rolebindings")


def test_admin_adds_roles_and_bindings() -> None:
    admin = ROLES["system:aggregate-to-admin"]
    assert can(admin, "create", RBAC, "rolebindings")
    assert can(admin, "delete", RBAC, "roles")
    assert can(admin, "create", "authorization.platform.io", "localsubjectaccessreviews")


def test_basic_discovery_public_and_monitoring_roles() -> None:
    assert can(
        ROLES["system:basic-user"],
        "create",
        "authorization.platform.io",
        "selfsubjectaccessreviews",
    )
    assert can(
        ROLES["system:basic-user"], "create", "authentication.platform.io", "selfsubjectreviews"
    )
    assert can_get_url(ROLES["system:discovery"], "/apis/apps/v1")
    assert can_get_url(ROLES["system:public-info-viewer"], "/version")
    assert not can_get_url(ROLES["system:public-info-viewer"], "/apis")
    monitoring = ROLES["system:monitoring"]
    for path in ("/metrics", "/metrics/slis", "/livez", "/readyz/ping", "/healthz/log"):
        assert can_get_url(monitoring, path)
    assert not can_get_url(monitoring, "/apis")
    # kube-apiserver v1.36's role, as the reference created it
    assert monitoring["rules"] == [
        {
            "verbs": ["get"],
            "nonResourceURLs": [
                "/flagz",
                "/healthz",
                "/healthz/*",
                "/livez",
                "/livez/*",
                "/metrics",
                "/metrics/slis",
                "/readyz",
                "/readyz/*",
                "/statusz",
            ],
        },
        {"verbs": ["get"], "apiGroups": [""], "resources": ["nodes/metrics"]},
    ]


def test_node_and_component_roles_carry_kube_rules() -> None:
    node = ROLES["system:node"]
    assert can(node, "create", "", "nodes") and can(node, "patch", "", "nodes", "status")
    assert can(node, "get", "", "secrets") and not can(node, "delete", "", "secrets")
    assert can(node, "update", "coordination.platform.io", "leases")
    scheduler = ROLES["system:kube-scheduler"]
    assert can(scheduler, "create", "", "pods", "binding")
    lease = next(r for r in scheduler["rules"] if r.get("resourceNames"))
    assert lease == {
        "verbs": ["get", "list", "update", "watch"],
        "apiGroups": ["coordination.platform.io"],
        "resources": ["leases"],
        "resourceNames": ["kube-scheduler"],
    }
    assert can(ROLES["system:kube-controller-manager"], "list", "apps", "deployments")
    assert can(
        ROLES["system:auth-delegator"], "create", "authentication.platform.io", "tokenreviews"
    )


def test_controller_roles_cover_what_the_controllers_do() -> None:
    aggregation = ROLES["system:controller:clusterrole-aggregation-controller"]
    assert can(aggregation, "escalate", RBAC, "clusterroles")
    assert can(aggregation, "update", RBAC, "clusterroles")
    namespaces = ROLES["system:controller:namespace-controller"]
    assert can(namespaces, "update", "", "namespaces", "finalize")
    assert can(namespaces, "deletecollection", "apps", "deployments")
    assert can(ROLES["system:controller:generic-garbage-collector"], "patch", "batch", "jobs")


def subjects(name: str) -> list[tuple[str, str, str]]:
    return [
        (s["kind"], s["name"], s.get("namespace", "")) for s in BINDINGS[name].get("subjects", [])
    ]


def test_cluster_role_bindings_are_kubes() -> None:
    assert subjects("cluster-admin") == [("Group", "system:masters", "")]
    assert subjects("system:basic-user") == [("Group", "system:authenticated", "")]
    assert subjects("system:discovery") == [("Group", "system:authenticated", "")]
    assert subjects("system:public-info-viewer") == [
        ("Group", "system:authenticated", ""),
        ("Group", "system:unauthenticated", ""),
    ]
    assert subjects("system:monitoring") == [("Group", "system:monitoring", "")]
    assert subjects("system:kube-scheduler") == [("User", "system:kube-scheduler", "")]
    assert subjects("system:node") == []  # kept without subjects: the Node authorizer decides
    for name, binding in BINDINGS.items():
        assert binding["roleRef"] == {"apiGroup": RBAC, "kind": "ClusterRole", "name": name}
        for subject in binding.get("subjects", []):
            if subject["kind"] in ("User", "Group"):
                assert subject["apiGroup"] == RBAC


def test_controller_roles_bound_to_their_service_accounts() -> None:
    for name in ("namespace-controller", "generic-garbage-collector"):
        assert subjects(f"system:controller:{name}") == [
            ("ServiceAccount", name, "platform-system")
        ]


def test_namespaced_defaults_live_in_platform_namespaces() -> None:
    namespaced = roles() + role_bindings()
    assert {o["metadata"]["namespace"] for o in namespaced} == {
        "platform-system",
        "platform-public",
    }
    reader = next(
        b
        for b in role_bindings()
        if b["metadata"]["name"] == "system::extension-apiserver-authentication-reader"
    )
    assert reader["roleRef"] == {
        "apiGroup": RBAC,
        "kind": "Role",
        "name": "extension-apiserver-authentication-reader",
    }
    role_names = {(r["metadata"]["namespace"], r["metadata"]["name"]) for r in roles()}
    for b in role_bindings():
        assert (b["metadata"]["namespace"], b["roleRef"]["name"]) in role_names


def test_every_call_returns_fresh_objects() -> None:
    first = cluster_roles()
    first[0]["metadata"]["labels"]["x"] = "y"
    assert "x" not in cluster_roles()[0]["metadata"]["labels"]


def test_the_issuer_documents_are_readable_with_a_trailing_slash_too() -> None:
    (rule,) = ROLES["system:service-account-issuer-discovery"]["rules"]
    assert rule == {
        "verbs": ["get"],
        "nonResourceURLs": [
            "/.well-known/openid-configuration",
            "/.well-known/openid-configuration/",
            "/openid/v1/jwks",
            "/openid/v1/jwks/",
        ],
    }


def _reference_rules() -> dict[str, list[Obj]]:
    """The reference kube-apiserver v1.36's default ClusterRoles' rules (branded, saved
    in reference_cluster_roles.json; not the aggregated admin, edit and view, nor
    OpenShift's own), less the ``extensions`` group, which this server does not serve."""
    saved = json.loads((Path(__file__).parent / "reference_cluster_roles.json").read_text())
    return _without_extensions(saved)


def _without_extensions(saved: dict[str, list[Obj]]) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for name, rules in saved.items():
        out[name] = []
        for rule in rules:
            groups = [g for g in rule.get("apiGroups", []) if g != "extensions"]
            if rule.get("apiGroups") and not groups:
                continue
            out[name].append({**rule, "apiGroups": groups} if "apiGroups" in rule else rule)
    return out


def test_every_default_cluster_role_is_kubes() -> None:
    reference = _reference_rules()
    assert sorted(set(ROLES) - {"admin", "edit", "view"}) == sorted(reference)
    for name, rules in reference.items():
        assert ROLES[name]["rules"] == rules, name


def test_every_controller_role_is_bound_to_its_service_account() -> None:
    names = [n for n in _reference_rules() if n.startswith("system:controller:")]
    assert len(names) == 39
    bound = {b["metadata"]["name"]: b["subjects"] for b in controller_role_bindings()}
    assert sorted(bound) == sorted(names)
    for name in names:
        assert bound[name] == [
            {
                "kind": "ServiceAccount",
                "name": name.removeprefix("system:controller:"),
                "namespace": "platform-system",
            }
        ]


def _reference_with_gates() -> tuple[str, dict[str, list[Obj]], list[str]]:
    """The reference's default ClusterRoles and ClusterRoleBindings with every feature gate
    its policy reads and that can change flipped from its default (saved, branded, in
    reference_cluster_roles_gates.json; DRADeviceTaints stays on: DRADeviceTaintRules,
    turned on, needs it)."""
    saved = json.loads((Path(__file__).parent / "reference_cluster_roles_gates.json").read_text())
    return saved["gates"], _without_extensions(saved["roles"]), saved["bindings"]


def test_the_default_policy_follows_the_feature_gates_as_kubes() -> None:
    text, reference, bindings = _reference_with_gates()
    gates = FeatureGates.parse(text)
    objs = default_policy(gates=gates.enabled)
    roles = by_name([o for o in objs if o["kind"] == "ClusterRole"])
    assert sorted(set(roles) - {"admin", "edit", "view"}) == sorted(reference)
    for name, rules in reference.items():
        assert roles[name]["rules"] == rules, name
    assert sorted(o["metadata"]["name"] for o in objs if o["kind"] == "ClusterRoleBinding") == (
        bindings
    )


def test_the_gated_roles_and_rules_are_absent_at_kubes_defaults() -> None:
    roles = by_name([o for o in default_policy() if o["kind"] == "ClusterRole"])
    assert "system:cluster-trust-bundle-discovery" not in roles
    assert "system:controller:podgroup-protection-controller" not in roles
    assert roles["system:monitoring"]["rules"][0]["nonResourceURLs"][:2] == ["/flagz", "/healthz"]
