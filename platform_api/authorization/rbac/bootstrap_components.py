"""Default roles of node agents, control-plane components and controllers, and the
namespaced defaults (kube's policy, controller and namespace policies), branded:
``kube-system`` is ``platform-system``; user names such as ``system:kube-scheduler``
keep kube's spelling, as the spec's component roles do.

kube gives each controller a ``system:controller:<name>`` ClusterRole bound to the
service account ``kube-system/<name>`` it runs as; the service-account names are kube's
(``generic-garbage-collector`` for the garbage collector).  The roles of the controllers
whose rules this server's own code needs are here; kube-controller-manager's others,
as kube makes them, in bootstrap_controllers.py.
"""

from __future__ import annotations

from platform_api.authorization.rbac.bootstrap import (
    APPS,
    AUTHENTICATION,
    AUTHORIZATION,
    CERTIFICATES,
    COORDINATION,
    DISCOVERY,
    LEGACY,
    NETWORKING,
    NODE,
    POLICY,
    PUBLIC_NAMESPACE,
    RBAC_GROUP,
    READ,
    READ_UPDATE,
    READ_WRITE,
    RESOURCE,
    SCHEDULING,
    STORAGE,
    SYSTEM_NAMESPACE,
    Gates,
    Obj,
    binding,
    cluster_role,
    default_gates,
    events_rule,
    role,
    rule,
    service_account,
    urls,
    users,
    when,
)
from platform_api.authorization.rbac.bootstrap_controllers import kube_controller_rules
from platform_api.scheme import signers

CONTROLLER_PREFIX = "system:controller:"


def node_rules(gates: Gates = default_gates) -> list[Obj]:
    """What a node agent needs; the Node authorizer narrows it to the node's own objects."""
    return [
        rule("create", AUTHENTICATION, ("tokenreviews",)),
        rule("create", AUTHORIZATION, ("subjectaccessreviews", "localsubjectaccessreviews")),
        rule(READ, LEGACY, ("services",)),
        rule(("create", "get", "list", "watch"), LEGACY, ("nodes",)),
        rule(("update", "patch"), LEGACY, ("nodes/status",)),
        rule(("update", "patch"), LEGACY, ("nodes",)),
        events_rule(),
        rule(READ, LEGACY, ("pods",)),
        rule(("create", "delete"), LEGACY, ("pods",)),
        rule(("update", "patch"), LEGACY, ("pods/status",)),
        rule("create", LEGACY, ("pods/eviction",)),
        rule(READ, LEGACY, ("secrets", "configmaps")),
        rule("get", LEGACY, ("persistentvolumeclaims", "persistentvolumes")),
        rule("get", LEGACY, ("endpoints",)),
        rule(("create", "get", "list", "watch"), CERTIFICATES, ("certificatesigningrequests",)),
        rule(("get", "create", "update", "patch", "delete"), COORDINATION, ("leases",)),
        rule("get", STORAGE, ("volumeattachments",)),
        rule("create", LEGACY, ("serviceaccounts/token",)),
        rule(("get", "update", "patch"), LEGACY, ("persistentvolumeclaims/status",)),
        rule(READ, STORAGE, ("csidrivers",)),
        rule(("get", "create", "update", "patch", "delete"), STORAGE, ("csinodes",)),
        rule(READ, NODE, ("runtimeclasses",)),
        rule("get", RESOURCE, ("resourceclaims",)),
        rule("deletecollection", RESOURCE, ("resourceslices",)),
        *when(gates("ClusterTrustBundle"), rule(READ, CERTIFICATES, ("clustertrustbundles",))),
        *when(
            gates("KubeletServiceAccountTokenForCredentialProviders"),
            rule("get", LEGACY, ("serviceaccounts",)),
        ),
        *when(
            gates("PodCertificateRequest"),
            rule(("create", *READ), CERTIFICATES, ("podcertificaterequests",)),
        ),
    ]


def component_roles(gates: Gates = default_gates) -> list[Obj]:
    """Roles of the node agents and control-plane components (kube-style users)."""
    leases = (COORDINATION,)
    return [
        cluster_role(
            "system:heapster",
            [rule(READ, LEGACY, ("events", "pods", "nodes", "namespaces"))],
        ),
        cluster_role("system:node", node_rules(gates)),
        cluster_role(
            "system:node-problem-detector",
            [
                rule("get", LEGACY, ("nodes",)),
                rule("patch", LEGACY, ("nodes/status",)),
                events_rule(),
            ],
        ),
        cluster_role(
            "system:node-proxier",
            [
                rule(("list", "watch"), LEGACY, ("services", "endpoints")),
                rule(READ, LEGACY, ("nodes",)),
                events_rule(),
                rule(("list", "watch"), NETWORKING, ("servicecidrs",)),
                rule(("list", "watch"), DISCOVERY, ("endpointslices",)),
            ],
        ),
        cluster_role(
            "system:kubelet-api-admin",
            [
                rule(READ, LEGACY, ("nodes",)),
                rule("proxy", LEGACY, ("nodes",)),
                rule("*", LEGACY, ("nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log")),
                rule("*", LEGACY, ("nodes/configz", "nodes/healthz", "nodes/pods")),
            ],
        ),
        cluster_role(
            "system:node-bootstrapper",
            [
                rule(
                    ("create", "get", "list", "watch"),
                    CERTIFICATES,
                    ("certificatesigningrequests",),
                )
            ],
        ),
        cluster_role(
            "system:auth-delegator",
            [
                rule("create", AUTHENTICATION, ("tokenreviews",)),
                rule("create", AUTHORIZATION, ("subjectaccessreviews",)),
            ],
        ),
        cluster_role("system:kube-aggregator", [rule(READ, LEGACY, ("services", "endpoints"))]),
        cluster_role(
            "system:kube-controller-manager",
            [
                events_rule(),
                rule("create", leases, ("leases",)),
                rule(("get", "update"), leases, ("leases",), ("kube-controller-manager",)),
                rule("create", LEGACY, ("secrets", "serviceaccounts")),
                rule("delete", LEGACY, ("secrets",)),
                rule("get", LEGACY, ("namespaces", "secrets", "serviceaccounts", "configmaps")),
                rule("update", LEGACY, ("secrets", "serviceaccounts")),
                rule("create", AUTHENTICATION, ("tokenreviews",)),
                rule("create", AUTHORIZATION, ("subjectaccessreviews",)),
                rule(("list", "watch"), "*", ("*",)),
                rule("create", LEGACY, ("serviceaccounts/token",)),
            ],
        ),
        cluster_role(
            "system:kube-dns", [rule(("list", "watch"), LEGACY, ("endpoints", "services"))]
        ),
        cluster_role(
            "system:persistent-volume-provisioner",
            [
                rule(("get", "list", "watch", "create", "delete"), LEGACY, ("persistentvolumes",)),
                rule(("get", "list", "watch", "update"), LEGACY, ("persistentvolumeclaims",)),
                rule(READ, STORAGE, ("storageclasses",)),
                rule("watch", LEGACY, ("events",)),
                events_rule(),
            ],
        ),
        cluster_role("system:kube-scheduler", _scheduler_rules(gates)),
        cluster_role(
            "system:volume-scheduler",
            [
                rule(READ_UPDATE, LEGACY, ("persistentvolumes",)),
                rule(READ, STORAGE, ("storageclasses",)),
                rule(READ_UPDATE, LEGACY, ("persistentvolumeclaims",)),
            ],
        ),
        cluster_role(
            "system:service-account-issuer-discovery",
            [
                urls(
                    "get",
                    "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/",
                    "/openid/v1/jwks",
                    "/openid/v1/jwks/",
                )
            ],
        ),
        *certificate_roles(),
    ]


def certificate_roles(upstream: bool = False) -> list[Obj]:
    """Roles kubeadm binds for node bootstrap (the approving controller's reviews ask for
    these subresources) and one approver role per built-in signer, named as kube's are
    with the group's name; ``upstream``: kube's own names, group and signer names, which
    kubeadm's bindings name under --serve-upstream-groups."""
    group = "certificates.k8s.io" if upstream else CERTIFICATES
    prefix = f"system:{group}:"
    csrs = "certificatesigningrequests"
    names = (
        signers.LEGACY_UNKNOWN,
        signers.KUBELET_SERVING,
        signers.KUBE_APISERVER_CLIENT,
        signers.KUBE_APISERVER_CLIENT_KUBELET,
    )
    approvers = [
        cluster_role(
            f"{prefix}{signer.split('/', 1)[1]}-approver",
            [
                rule(
                    "approve",
                    group,
                    ("signers",),
                    (signers.upstream_name(signer) if upstream else signer,),
                )
            ],
        )
        for signer in names
    ]
    return [
        cluster_role(
            f"{prefix}{csrs}:nodeclient", [rule("create", group, (f"{csrs}/nodeclient",))]
        ),
        cluster_role(
            f"{prefix}{csrs}:selfnodeclient", [rule("create", group, (f"{csrs}/selfnodeclient",))]
        ),
        *approvers,
    ]


def _scheduler_rules(gates: Gates) -> list[Obj]:
    leases = (COORDINATION,)
    return [
        events_rule(),
        rule("create", leases, ("leases",)),
        rule(("get", "update", "list", "watch"), leases, ("leases",), ("kube-scheduler",)),
        rule(READ_WRITE, leases, ("leasecandidates",)),
        rule(READ, LEGACY, ("nodes",)),
        rule(("get", "list", "watch", "delete"), LEGACY, ("pods",)),
        rule("create", LEGACY, ("bindings", "pods/binding")),
        rule(("patch", "update"), LEGACY, ("pods/status",)),
        rule(READ, LEGACY, ("replicationcontrollers", "services")),
        rule(READ, APPS, ("replicasets",)),
        rule(READ, APPS, ("statefulsets",)),
        rule(READ, POLICY, ("poddisruptionbudgets",)),
        rule(READ, LEGACY, ("persistentvolumeclaims", "persistentvolumes")),
        rule("create", AUTHENTICATION, ("tokenreviews",)),
        rule("create", AUTHORIZATION, ("subjectaccessreviews",)),
        rule(READ, STORAGE, ("csinodes",)),
        rule(READ, STORAGE, ("volumeattachments",)),
        rule(READ, LEGACY, ("namespaces",)),
        rule(READ, STORAGE, ("csidrivers",)),
        rule(READ, STORAGE, ("csistoragecapacities",)),
        # dynamic resource allocation: the scheduler allocates claims and binds them
        rule(READ, RESOURCE, ("deviceclasses",)),
        rule(READ_UPDATE, RESOURCE, ("resourceclaims",)),
        rule(READ_UPDATE, RESOURCE, ("resourceclaims/status",)),
        rule("update", LEGACY, ("pods/finalizers",)),
        rule(READ, RESOURCE, ("resourceslices",)),
        *when(
            gates("DRAExtendedResource"), rule(("create", "delete"), RESOURCE, ("resourceclaims",))
        ),
        *when(gates("DRADeviceTaintRules"), rule(READ, RESOURCE, ("devicetaintrules",))),
        *when(
            gates("DRAResourceClaimGranularStatusAuthorization"),
            rule(("update", "patch"), RESOURCE, ("resourceclaims/binding",)),
        ),
        *when(
            gates("GenericWorkload"),
            rule(READ, SCHEDULING, ("podgroups",)),
            rule(("patch", "update"), SCHEDULING, ("podgroups/status",)),
        ),
    ]


def _controller_rules(gates: Gates) -> dict[str, list[Obj]]:
    return {**_own_controller_rules(), **kube_controller_rules(gates)}


def _own_controller_rules() -> dict[str, list[Obj]]:
    return {
        "clusterrole-aggregation-controller": [
            # "escalate": an aggregated role may hold rights the controller does not.
            rule(
                ("escalate", "get", "list", "watch", "update", "patch"),
                RBAC_GROUP,
                ("clusterroles",),
            ),
        ],
        "generic-garbage-collector": [
            rule(("get", "list", "watch", "patch", "update", "delete"), "*", ("*",)),
            events_rule(),
        ],
        "certificate-controller": [
            rule(("get", "list", "watch", "delete"), CERTIFICATES, ("certificatesigningrequests",)),
            rule(
                "update",
                CERTIFICATES,
                ("certificatesigningrequests/status", "certificatesigningrequests/approval"),
            ),
            rule("approve", CERTIFICATES, ("signers",), (signers.KUBE_APISERVER_CLIENT_KUBELET,)),
            rule("sign", CERTIFICATES, ("signers",), signers.BUILT_IN),
            rule("create", AUTHORIZATION, ("subjectaccessreviews",)),
            events_rule(),
        ],
        "namespace-controller": [
            rule(("get", "list", "watch", "delete"), LEGACY, ("namespaces",)),
            rule("update", LEGACY, ("namespaces/finalize", "namespaces/status")),
            rule(("get", "list", "watch", "delete", "deletecollection"), "*", ("*",)),
        ],
    }


def controller_roles(gates: Gates = default_gates) -> list[Obj]:
    return [
        cluster_role(CONTROLLER_PREFIX + name, rules)
        for name, rules in _controller_rules(gates).items()
    ]


def controller_role_bindings(gates: Gates = default_gates) -> list[Obj]:
    return [
        binding(CONTROLLER_PREFIX + name, service_account(SYSTEM_NAMESPACE, name))
        for name in _controller_rules(gates)
    ]


def _leader_locking() -> list[Obj]:
    verbs = ("create", "get", "list", "update", "watch")
    return [rule(verbs, COORDINATION, ("leases",)), rule(verbs, COORDINATION, ("leasecandidates",))]


def roles(system: str = SYSTEM_NAMESPACE, public: str = PUBLIC_NAMESPACE) -> list[Obj]:
    """kube's namespaced default Roles, in the system and public namespaces."""
    return [
        role(
            "extension-apiserver-authentication-reader",
            system,
            [rule(READ, LEGACY, ("configmaps",), ("extension-apiserver-authentication",))],
        ),
        role("system::leader-locking-kube-controller-manager", system, _leader_locking()),
        role("system::leader-locking-kube-scheduler", system, _leader_locking()),
        role(CONTROLLER_PREFIX + "bootstrap-signer", system, [rule(READ, LEGACY, ("secrets",))]),
        role(
            CONTROLLER_PREFIX + "cloud-provider",
            system,
            [rule(("create", "get", "list", "watch"), LEGACY, ("configmaps",))],
        ),
        role(
            CONTROLLER_PREFIX + "token-cleaner",
            system,
            [rule(("delete", "get", "list", "watch"), LEGACY, ("secrets",)), events_rule()],
        ),
        role(
            CONTROLLER_PREFIX + "bootstrap-signer",
            public,
            [
                rule(READ, LEGACY, ("configmaps",)),
                rule("update", LEGACY, ("configmaps",), ("cluster-info",)),
                events_rule(),
            ],
        ),
    ]


def role_bindings(system: str = SYSTEM_NAMESPACE, public: str = PUBLIC_NAMESPACE) -> list[Obj]:
    signer = CONTROLLER_PREFIX + "bootstrap-signer"
    return [
        binding(
            "system::extension-apiserver-authentication-reader",
            users("system:kube-controller-manager", "system:kube-scheduler"),
            role_name="extension-apiserver-authentication-reader",
            namespace=system,
        ),
        binding(
            "system::leader-locking-kube-controller-manager",
            users("system:kube-controller-manager")
            + service_account(system, "kube-controller-manager")
            + service_account(system, "leader-election-controller"),
            namespace=system,
        ),
        binding(
            "system::leader-locking-kube-scheduler",
            users("system:kube-scheduler") + service_account(system, "kube-scheduler"),
            namespace=system,
        ),
        binding(signer, service_account(system, "bootstrap-signer"), namespace=system),
        binding(
            CONTROLLER_PREFIX + "cloud-provider",
            service_account(system, "cloud-provider"),
            namespace=system,
        ),
        binding(
            CONTROLLER_PREFIX + "token-cleaner",
            service_account(system, "token-cleaner"),
            namespace=system,
        ),
        binding(signer, service_account(system, "bootstrap-signer"), namespace=public),
    ]
