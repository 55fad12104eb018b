"""The default cluster roles and their bindings (kube's ``bootstrappolicy``), branded.

The server creates these at start and reconciles them (``reconcile.py``) so that a
fresh cluster has kube's familiar roles: ``cluster-admin``, the aggregated ``admin``,
``edit`` and ``view``, and the ``system:*`` roles every user holds; those of node agents,
components and controllers are in ``bootstrap_components.py``.  The rules are
those of kube v1.3x with ``*.k8s.io`` groups written ``*.platform.io``; rules for the
``extensions`` group are left out, as this server never serves it.  Each rule's lists
are sorted, as kube's rule builder sorts them, so the objects match kube's exactly.
Rules and roles kube makes only while a feature gate is on follow ``gates`` (the
server's ``--feature-gates``; kube's defaults when not given).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.apiserver.featuregates_data import GATES
from platform_api.scheme import namespaces

Obj = dict[str, Any]
Gates = Callable[[str], bool]  # whether the named feature gate is on

RBAC_GROUP = "rbac.authorization.platform.io"
AUTOUPDATE = "rbac.authorization.platform.io/autoupdate"
BOOTSTRAPPING = "platform.io/bootstrapping"
AGGREGATE_TO = "rbac.authorization.platform.io/aggregate-to-"
SYSTEM_NAMESPACE = namespaces.SYSTEM
PUBLIC_NAMESPACE = namespaces.PUBLIC

LEGACY = ""
APPS = "apps"
AUTHENTICATION = "authentication.platform.io"
AUTHORIZATION = "authorization.platform.io"
AUTOSCALING = "autoscaling"
BATCH = "batch"
CERTIFICATES = "certificates.platform.io"
COORDINATION = "coordination.platform.io"
DISCOVERY = "discovery.platform.io"
EVENTS = "events.platform.io"
RESOURCE = "resource.platform.io"
NETWORKING = "networking.platform.io"
NODE = "node.platform.io"
POLICY = "policy"
SCHEDULING = "scheduling.platform.io"
STORAGE = "storage.platform.io"

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
READ_WRITE = READ + WRITE
READ_UPDATE = ("get", "list", "watch", "update", "patch")


# -- builders ----------------------------------------------------------------------------


def default_gates(name: str) -> bool:
    """kube v1.36's default of the feature gate ``name``."""
    return GATES[name][0]


def when(on: bool, *rules: Obj) -> list[Obj]:
    """``rules`` if ``on`` (a gate's rules, spliced into a role's list)."""
    return list(rules) if on else []


def rule(
    verbs: tuple[str, ...] | str,
    groups: tuple[str, ...] | str,
    resources: tuple[str, ...],
    names: tuple[str, ...] = (),
) -> Obj:
    """A resource rule, its lists sorted as kube's ``NewRule(...).RuleOrDie()`` sorts them."""
    verbs = (verbs,) if isinstance(verbs, str) else verbs
    groups = (groups,) if isinstance(groups, str) else groups
    out: Obj = {"verbs": sorted(verbs), "apiGroups": sorted(groups), "resources": sorted(resources)}
    if names:
        out["resourceNames"] = sorted(names)
    return out


def urls(verbs: tuple[str, ...] | str, *paths: str) -> Obj:
    """A non-resource URL rule."""
    verbs = (verbs,) if isinstance(verbs, str) else verbs
    return {"verbs": sorted(verbs), "nonResourceURLs": sorted(paths)}


def events_rule() -> Obj:
    """What every component needs to record events (kube's ``eventsRule``)."""
    return rule(("create", "update", "patch"), (LEGACY, EVENTS), ("events",))


def metadata(name: str, namespace: str = "", labels: dict[str, str] | None = None) -> Obj:
    """Every default carries kube's bootstrapping label and autoupdate annotation."""
    meta: Obj = {
        "name": name,
        "labels": {BOOTSTRAPPING: "rbac-defaults", **(labels or {})},
        "annotations": {AUTOUPDATE: "true"},
    }
    if namespace:
        meta["namespace"] = namespace
    return meta


def cluster_role(
    name: str,
    rules: list[Obj] | None = None,
    labels: dict[str, str] | None = None,
    aggregate: str = "",
) -> Obj:
    obj: Obj = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": metadata(name, labels=labels),
    }
    if aggregate:
        selector = {"matchLabels": {AGGREGATE_TO + aggregate: "true"}}
        obj["aggregationRule"] = {"clusterRoleSelectors": [selector]}
    if rules is not None:
        obj["rules"] = rules
    return obj


def role(name: str, namespace: str, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "Role",
        "metadata": metadata(name, namespace),
        "rules": rules,
    }


def users(*names: str) -> list[Obj]:
    return [{"kind": "User", "apiGroup": RBAC_GROUP, "name": n} for n in names]


def groups(*names: str) -> list[Obj]:
    return [{"kind": "Group", "apiGroup": RBAC_GROUP, "name": n} for n in names]


def service_account(namespace: str, name: str) -> list[Obj]:
    return [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]


def binding(
    name: str, subjects: list[Obj], role_name: str = "", namespace: str = "", kind: str = ""
) -> Obj:
    """A ClusterRoleBinding, or with ``namespace`` a RoleBinding (to a Role by default)."""
    ref_kind = kind or ("Role" if namespace else "ClusterRole")
    obj: Obj = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding" if namespace else "ClusterRoleBinding",
        "metadata": metadata(name, namespace),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": ref_kind, "name": role_name or name},
    }
    if subjects:
        obj["subjects"] = subjects
    return obj


def aggregate_label(to: str) -> dict[str, str]:
    return {AGGREGATE_TO + to: "true"}


# -- roles ---------------------------------------------------------------------------------


def _aggregate_to_edit(gates: Gates) -> list[Obj]:
    return [
        rule(
            READ,
            LEGACY,
            (
                "pods/attach",
                "pods/proxy",
                "pods/exec",
                "pods/portforward",
                "secrets",
                "services/proxy",
            ),
        ),
        rule("impersonate", LEGACY, ("serviceaccounts",)),
        rule(WRITE, LEGACY, ("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward")),
        rule("create", LEGACY, ("pods/eviction",)),
        rule(
            WRITE,
            LEGACY,
            (
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/proxy",
                "persistentvolumeclaims",
                "configmaps",
                "secrets",
            ),
        ),
        rule("create", LEGACY, ("serviceaccounts/token",)),
        rule(WRITE, (LEGACY, EVENTS), ("events",)),
        rule(
            WRITE,
            APPS,
            (
                "statefulsets",
                "statefulsets/scale",
                "daemonsets",
                "deployments",
                "deployments/scale",
                "deployments/rollback",
                "replicasets",
                "replicasets/scale",
            ),
        ),
        rule(WRITE, AUTOSCALING, ("horizontalpodautoscalers",)),
        rule(WRITE, BATCH, ("jobs", "cronjobs")),
        rule(WRITE, POLICY, ("poddisruptionbudgets",)),
        rule(WRITE, NETWORKING, ("networkpolicies", "ingresses")),
        rule(READ_WRITE, COORDINATION, ("leases",)),
        rule(WRITE, RESOURCE, ("resourceclaims", "resourceclaimtemplates")),
        *when(gates("GenericWorkload"), rule(WRITE, SCHEDULING, ("workloads", "podgroups"))),
    ]


def _aggregate_to_view(gates: Gates) -> list[Obj]:
    """Read access to everything in a namespace but secrets (reading them escalates)."""
    return [
        rule(
            READ,
            LEGACY,
            (
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "configmaps",
            ),
        ),
        rule(
            READ,
            LEGACY,
            (
                "limitranges",
                "resourcequotas",
                "bindings",
                "pods/status",
                "resourcequotas/status",
                "namespaces/status",
                "replicationcontrollers/status",
                "pods/log",
            ),
        ),
        rule(READ, LEGACY, ("namespaces",)),
        rule(READ, (LEGACY, EVENTS), ("events",)),
        rule(READ, DISCOVERY, ("endpointslices",)),
        rule(
            READ,
            APPS,
            (
                "controllerrevisions",
                "statefulsets",
                "statefulsets/status",
                "statefulsets/scale",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/status",
                "deployments/scale",
                "replicasets",
                "replicasets/status",
                "replicasets/scale",
            ),
        ),
        rule(READ, AUTOSCALING, ("horizontalpodautoscalers", "horizontalpodautoscalers/status")),
        rule(READ, BATCH, ("jobs", "cronjobs", "cronjobs/status", "jobs/status")),
        rule(READ, POLICY, ("poddisruptionbudgets", "poddisruptionbudgets/status")),
        rule(READ, NETWORKING, ("ingresses", "ingresses/status", "networkpolicies")),
        rule(READ, RESOURCE, ("resourceclaims", "resourceclaims/status", "resourceclaimtemplates")),
        *when(
            gates("GenericWorkload"),
            rule(READ, SCHEDULING, ("workloads", "podgroups", "podgroups/status")),
        ),
    ]


def _user_roles(gates: Gates) -> list[Obj]:
    """The roles people are given: everything, the aggregated three, and basic access."""
    return [
        cluster_role("cluster-admin", [rule("*", "*", ("*",)), urls("*", "*")]),
        cluster_role(
            "system:discovery",
            [
                urls(
                    "get",
                    "/livez",
                    "/readyz",
                    "/healthz",
                    "/version",
                    "/version/",
                    "/openapi",
                    "/openapi/*",
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                )
            ],
        ),
        cluster_role(
            "system:monitoring",
            [
                urls(
                    "get",
                    "/metrics",
                    "/metrics/slis",
                    "/livez",
                    "/readyz",
                    "/healthz",
                    "/livez/*",
                    "/readyz/*",
                    "/healthz/*",
                    *(["/flagz"] if gates("ComponentFlagz") else []),
                    *(["/statusz"] if gates("ComponentStatusz") else []),
                ),
                rule("get", LEGACY, ("nodes/metrics",)),  # kubelets' metrics
            ],
        ),
        cluster_role(
            "system:basic-user",
            [
                rule(
                    "create", AUTHORIZATION, ("selfsubjectaccessreviews", "selfsubjectrulesreviews")
                ),
                rule("create", AUTHENTICATION, ("selfsubjectreviews",)),
            ],
        ),
        cluster_role(
            "system:public-info-viewer",
            [urls("get", "/livez", "/readyz", "/healthz", "/version", "/version/")],
        ),
        cluster_role("admin", aggregate="admin"),
        cluster_role("edit", labels=aggregate_label("admin"), aggregate="edit"),
        cluster_role("view", labels=aggregate_label("edit"), aggregate="view"),
        cluster_role(
            "system:aggregate-to-admin",
            [
                rule("create", AUTHORIZATION, ("localsubjectaccessreviews",)),
                rule(READ_WRITE, RBAC_GROUP, ("roles", "rolebindings")),
            ],
            labels=aggregate_label("admin"),
        ),
        cluster_role(
            "system:aggregate-to-edit", _aggregate_to_edit(gates), labels=aggregate_label("edit")
        ),
        cluster_role(
            "system:aggregate-to-view", _aggregate_to_view(gates), labels=aggregate_label("view")
        ),
    ]


def cluster_roles(gates: Gates = default_gates) -> list[Obj]:
    """The ClusterRoles people are given (fresh objects on every call)."""
    trust_bundles = [rule(READ, CERTIFICATES, ("clustertrustbundles",))]
    return _user_roles(gates) + when(
        gates("ClusterTrustBundle"),
        cluster_role("system:cluster-trust-bundle-discovery", trust_bundles),
    )


def cluster_role_bindings(gates: Gates = default_gates) -> list[Obj]:
    """kube's default ClusterRoleBindings; ``system:node`` keeps no subjects, as in kube."""
    trust_bundles = "system:cluster-trust-bundle-discovery"
    return [
        binding("cluster-admin", groups("system:masters")),
        binding("system:monitoring", groups("system:monitoring")),
        binding("system:discovery", groups("system:authenticated")),
        binding("system:basic-user", groups("system:authenticated")),
        binding(
            "system:public-info-viewer", groups("system:authenticated", "system:unauthenticated")
        ),
        binding("system:node-proxier", users("system:kube-proxy")),
        binding("system:kube-controller-manager", users("system:kube-controller-manager")),
        binding("system:kube-dns", service_account(SYSTEM_NAMESPACE, "kube-dns")),
        binding("system:kube-scheduler", users("system:kube-scheduler")),
        binding("system:volume-scheduler", users("system:kube-scheduler")),
        binding("system:node", []),
        binding("system:service-account-issuer-discovery", groups("system:serviceaccounts")),
        *when(
            gates("ClusterTrustBundle"),
            binding(trust_bundles, groups("system:serviceaccounts")),
        ),
    ]
