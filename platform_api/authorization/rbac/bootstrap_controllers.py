"""The roles of kube-controller-manager's controllers (kube's controller policy), branded.

kube-apiserver makes a ``system:controller:<name>`` ClusterRole for each controller of
kube-controller-manager, and binds it to the service account ``kube-system/<name>``
the controller runs as with ``--use-service-account-credentials``, whichever of them a
cluster runs.  These are those roles as kube-apiserver v1.36 makes them with its
default feature gates (read off the reference build's answers, and checked against
upstream's controller policy), less what bootstrap.py leaves out everywhere: the
``extensions`` group.  The controllers this server's own code runs with other rules
keep those, in bootstrap_components.py.
"""

from __future__ import annotations

from platform_api.authorization.rbac.bootstrap import (
    APPS,
    AUTOSCALING,
    BATCH,
    CERTIFICATES,
    COORDINATION,
    DISCOVERY,
    LEGACY,
    NETWORKING,
    POLICY,
    READ,
    RESOURCE,
    SCHEDULING,
    STORAGE,
    Gates,
    Obj,
    default_gates,
    events_rule,
    rule,
    when,
)
from platform_api.scheme.signers import BRAND_DOMAIN

ADMISSION = "admissionregistration.platform.io"
# The metrics APIs the autoscaler reads are aggregated servers' (metrics-server, metrics
# adapters), which register them under these names whatever this server's brand.
METRICS = "metrics.k8s.io"
CUSTOM_METRICS = "custom.metrics.k8s.io"
EXTERNAL_METRICS = "external.metrics.k8s.io"
EXTENSION_GROUPS = frozenset({METRICS, CUSTOM_METRICS, EXTERNAL_METRICS})
APIEXTENSIONS = "apiextensions.platform.io"
INTERNAL_APISERVER = "internal.apiserver.platform.io"
STORAGE_MIGRATION = "storagemigration.platform.io"


def kube_controller_rules(gates: Gates = default_gates) -> dict[str, list[Obj]]:
    """Each controller's rules, in kube's order, by the controller's name; the roles and
    rules kube makes only while a feature gate is on follow ``gates``."""
    rules = _always()
    if gates("DRADeviceTaints"):
        rules["device-taint-eviction-controller"] = [
            rule(("delete", "get", "list", "watch"), LEGACY, ("pods",)),
            rule(("patch", "update"), LEGACY, ("pods/status",)),
            rule(READ, RESOURCE, ("resourceclaims",)),
            rule(READ, RESOURCE, ("resourceslices",)),
            rule(READ, RESOURCE, ("deviceclasses",)),
            events_rule(),
            *when(
                gates("DRADeviceTaintRules"),
                rule(("patch", "update"), RESOURCE, ("devicetaintrules/status",)),
                rule(READ, RESOURCE, ("devicetaintrules",)),
            ),
        ]
    rules["job-controller"] += when(
        gates("WorkloadWithJob"),
        rule(("create", *READ), SCHEDULING, ("workloads", "podgroups")),
    )
    rules["resource-claim-controller"] += [
        *when(
            gates("DRAWorkloadResourceClaims"),
            rule(READ, SCHEDULING, ("podgroups",)),
            rule(("patch", "update"), SCHEDULING, ("podgroups/status",)),
        ),
        *when(
            gates("DRAResourceClaimGranularStatusAuthorization"),
            rule(("patch", "update"), RESOURCE, ("resourceclaims/binding",)),
        ),
    ]
    rules.update(_gated_roles(gates))
    return dict(sorted(rules.items()))


def _gated_roles(gates: Gates) -> dict[str, list[Obj]]:
    """The controllers kube gives a role only while their gate is on."""
    roles: dict[str, list[Obj]] = {}
    if gates("DRAResourcePoolStatus"):
        roles["resourcepoolstatusrequest-controller"] = [
            rule(("delete", *READ), RESOURCE, ("resourcepoolstatusrequests",)),
            rule(("patch", "update"), RESOURCE, ("resourcepoolstatusrequests/status",)),
            rule(READ, RESOURCE, ("resourceslices",)),
            rule(READ, RESOURCE, ("resourceclaims",)),
            events_rule(),
        ]
    if gates("PodCertificateRequest"):
        roles["podcertificaterequestcleaner"] = [
            rule(("delete", *READ), CERTIFICATES, ("podcertificaterequests",))
        ]
    if gates("GenericWorkload"):
        roles["podgroup-protection-controller"] = [
            rule(("update", *READ), SCHEDULING, ("podgroups",)),
            rule(READ, LEGACY, ("pods",)),
        ]
    if gates("ClusterTrustBundle"):
        signer = f"{BRAND_DOMAIN}/kube-apiserver-serving"
        roles["kube-apiserver-serving-clustertrustbundle-publisher"] = [
            rule("attest", CERTIFICATES, ("signers",), (signer,)),
            rule(
                ("create", "update", "delete", "list", "watch"),
                CERTIFICATES,
                ("clustertrustbundles",),
            ),
            events_rule(),
        ]
    if gates("StorageVersionAPI") and gates("APIServerIdentity"):
        roles["storage-version-garbage-collector"] = [
            rule(READ, COORDINATION, ("leases",)),
            rule(("delete", "patch", "update", *READ), INTERNAL_APISERVER, ("storageversions",)),
            rule(("get", "patch", "update"), INTERNAL_APISERVER, ("storageversions/status",)),
        ]
    if gates("StorageVersionMigrator"):
        roles["storage-version-migrator-controller"] = [
            rule(("list", "create", "patch"), "*", ("*",)),
            rule("get", APIEXTENSIONS, ("customresourcedefinitions",)),
            rule("patch", APIEXTENSIONS, ("customresourcedefinitions/status",)),
            rule("update", STORAGE_MIGRATION, ("storageversionmigrations/status",)),
        ]
    return roles


def _always() -> dict[str, list[Obj]]:
    return {
        "attachdetach-controller": [
            rule(("list", "watch"), LEGACY, ("persistentvolumeclaims", "persistentvolumes")),
            rule(READ, LEGACY, ("nodes",)),
            rule(("patch", "update"), LEGACY, ("nodes/status",)),
            rule(("list", "watch"), LEGACY, ("pods",)),
            events_rule(),
            rule(("create", "delete", "get", "list", "watch"), STORAGE, ("volumeattachments",)),
            rule(READ, STORAGE, ("csidrivers",)),
            rule(READ, STORAGE, ("csinodes",)),
        ],
        "cronjob-controller": [
            rule(("get", "list", "update", "watch"), BATCH, ("cronjobs",)),
            rule(("create", "delete", "get", "list", "patch", "update", "watch"), BATCH, ("jobs",)),
            rule("update", BATCH, ("cronjobs/status",)),
            rule("update", BATCH, ("cronjobs/finalizers",)),
            rule(("delete", "list", "watch"), LEGACY, ("pods",)),
            events_rule(),
        ],
        "daemon-set-controller": [
            rule(READ, APPS, ("daemonsets",)),
            rule("update", APPS, ("daemonsets/status",)),
            rule("update", APPS, ("daemonsets/finalizers",)),
            rule(("list", "watch"), LEGACY, ("nodes",)),
            rule(("create", "delete", "list", "patch", "watch"), LEGACY, ("pods",)),
            rule("create", LEGACY, ("pods/binding",)),
            rule(
                ("create", "delete", "get", "list", "patch", "update", "watch"),
                APPS,
                ("controllerrevisions",),
            ),
            events_rule(),
        ],
        "deployment-controller": [
            rule(("get", "list", "update", "watch"), APPS, ("deployments",)),
            rule("update", APPS, ("deployments/status",)),
            rule("update", APPS, ("deployments/finalizers",)),
            rule(
                ("create", "delete", "get", "list", "patch", "update", "watch"),
                APPS,
                ("replicasets",),
            ),
            rule(("get", "list", "update", "watch"), LEGACY, ("pods",)),
            events_rule(),
        ],
        "disruption-controller": [
            rule(READ, APPS, ("deployments",)),
            rule(READ, APPS, ("replicasets",)),
            rule(READ, LEGACY, ("replicationcontrollers",)),
            rule(READ, POLICY, ("poddisruptionbudgets",)),
            rule(READ, APPS, ("statefulsets",)),
            rule("update", POLICY, ("poddisruptionbudgets/status",)),
            rule(("patch", "update"), LEGACY, ("pods/status",)),
            rule("get", "*", ("*/scale",)),
            events_rule(),
        ],
        "endpoint-controller": [
            rule(READ, LEGACY, ("pods", "services")),
            rule(("create", "delete", "get", "list", "update", "watch"), LEGACY, ("endpoints",)),
            rule("create", LEGACY, ("endpoints/restricted",)),
            events_rule(),
        ],
        "endpointslice-controller": [
            rule(READ, LEGACY, ("nodes", "pods", "services")),
            rule("update", LEGACY, ("services/finalizers",)),
            *_slice_writes(),
        ],
        "endpointslicemirroring-controller": [
            rule(READ, LEGACY, ("endpoints", "services")),
            rule("update", LEGACY, ("services/finalizers",)),
            rule("update", LEGACY, ("endpoints/finalizers",)),
            *_slice_writes(),
        ],
        "ephemeral-volume-controller": [
            rule(READ, LEGACY, ("pods",)),
            rule("update", LEGACY, ("pods/finalizers",)),
            rule(("create", "get", "list", "watch"), LEGACY, ("persistentvolumeclaims",)),
            events_rule(),
        ],
        "expand-controller": [
            rule(("get", "list", "patch", "update", "watch"), LEGACY, ("persistentvolumes",)),
            rule(("patch", "update"), LEGACY, ("persistentvolumeclaims/status",)),
            rule(READ, LEGACY, ("persistentvolumeclaims",)),
            events_rule(),
        ],
        "horizontal-pod-autoscaler": [
            rule(READ, AUTOSCALING, ("horizontalpodautoscalers",)),
            rule("update", AUTOSCALING, ("horizontalpodautoscalers/status",)),
            rule(("get", "update"), "*", ("*/scale",)),
            rule(("list", "watch"), LEGACY, ("pods",)),
            rule(("list", "watch"), METRICS, ("pods",)),
            rule(READ, CUSTOM_METRICS, ("*",)),
            rule(READ, EXTERNAL_METRICS, ("*",)),
            events_rule(),
        ],
        "job-controller": [
            rule(("get", "list", "patch", "update", "watch"), BATCH, ("jobs",)),
            rule("update", BATCH, ("jobs/status",)),
            rule("update", BATCH, ("jobs/finalizers",)),
            rule(("create", "delete", "list", "patch", "watch"), LEGACY, ("pods",)),
            events_rule(),
        ],
        "legacy-service-account-token-cleaner": [
            rule(
                "get",
                LEGACY,
                ("configmaps",),
                ("kube-apiserver-legacy-service-account-token-tracking",),
            ),
            rule(("delete", "patch"), LEGACY, ("secrets",)),
        ],
        "node-controller": [
            rule(("delete", "get", "list", "patch", "update", "watch"), LEGACY, ("nodes",)),
            rule(("patch", "update"), LEGACY, ("nodes/status",)),
            rule(("patch", "update"), LEGACY, ("pods/status",)),
            rule(("delete", "get", "list", "watch"), LEGACY, ("pods",)),
            events_rule(),
        ],
        "persistent-volume-binder": [
            rule(
                ("create", "delete", "get", "list", "update", "watch"),
                LEGACY,
                ("persistentvolumes",),
            ),
            rule("update", LEGACY, ("persistentvolumes/status",)),
            rule(("get", "list", "update", "watch"), LEGACY, ("persistentvolumeclaims",)),
            rule("update", LEGACY, ("persistentvolumeclaims/status",)),
            rule(("create", "delete", "get", "list", "watch"), LEGACY, ("pods",)),
            rule(READ, STORAGE, ("storageclasses",)),
            rule(("list", "watch"), LEGACY, ("nodes",)),
            events_rule(),
            rule("watch", LEGACY, ("events",)),
        ],
        "pod-garbage-collector": [
            rule(("delete", "list", "watch"), LEGACY, ("pods",)),
            rule(READ, LEGACY, ("nodes",)),
            rule("patch", LEGACY, ("pods/status",)),
        ],
        "pv-protection-controller": [
            rule(("get", "list", "update", "watch"), LEGACY, ("persistentvolumes",)),
            events_rule(),
        ],
        "pvc-protection-controller": [
            rule(("get", "list", "update", "watch"), LEGACY, ("persistentvolumeclaims",)),
            rule("update", LEGACY, ("persistentvolumeclaims/status",)),
            rule(READ, LEGACY, ("pods",)),
            events_rule(),
        ],
        "replicaset-controller": [
            rule(("get", "list", "update", "watch"), APPS, ("replicasets",)),
            rule("update", APPS, ("replicasets/status",)),
            rule("update", APPS, ("replicasets/finalizers",)),
            rule(("create", "delete", "list", "patch", "watch"), LEGACY, ("pods",)),
            events_rule(),
        ],
        "replication-controller": [
            rule(("get", "list", "update", "watch"), LEGACY, ("replicationcontrollers",)),
            rule("update", LEGACY, ("replicationcontrollers/status",)),
            rule("update", LEGACY, ("replicationcontrollers/finalizers",)),
            rule(("create", "delete", "list", "patch", "watch"), LEGACY, ("pods",)),
            events_rule(),
        ],
        "resource-claim-controller": [
            rule(READ, LEGACY, ("pods",)),
            rule("update", LEGACY, ("pods/finalizers",)),
            rule(("create", "delete", "get", "list", "watch"), RESOURCE, ("resourceclaims",)),
            rule(("patch", "update"), RESOURCE, ("resourceclaims", "resourceclaims/status")),
            rule(("patch", "update"), LEGACY, ("pods/status",)),
            events_rule(),
        ],
        "resourcequota-controller": [
            rule(("list", "watch"), "*", ("*",)),
            rule("update", LEGACY, ("resourcequotas/status",)),
            events_rule(),
        ],
        "root-ca-cert-publisher": [
            rule(("create", "update"), LEGACY, ("configmaps",)),
            events_rule(),
        ],
        "route-controller": [
            rule(("list", "watch"), LEGACY, ("nodes",)),
            rule("patch", LEGACY, ("nodes/status",)),
            events_rule(),
        ],
        "selinux-warning-controller": [
            events_rule(),
            rule(READ, LEGACY, ("persistentvolumes",)),
            rule(READ, LEGACY, ("persistentvolumeclaims",)),
            rule(READ, LEGACY, ("pods",)),
            rule(READ, STORAGE, ("csidrivers",)),
        ],
        "service-account-controller": [
            rule("create", LEGACY, ("serviceaccounts",)),
            events_rule(),
        ],
        "service-ca-cert-publisher": [
            rule(("create", "update"), LEGACY, ("configmaps",)),
            events_rule(),
        ],
        "service-cidrs-controller": [
            rule(("get", "list", "patch", "update", "watch"), NETWORKING, ("servicecidrs",)),
            rule(("patch", "update"), NETWORKING, ("servicecidrs/finalizers",)),
            rule(("patch", "update"), NETWORKING, ("servicecidrs/status",)),
            rule(READ, NETWORKING, ("ipaddresses",)),
            events_rule(),
        ],
        "service-controller": [
            rule(READ, LEGACY, ("services",)),
            rule(("patch", "update"), LEGACY, ("services/status",)),
            rule(("list", "watch"), LEGACY, ("nodes",)),
            events_rule(),
        ],
        "statefulset-controller": [
            rule(("list", "watch"), LEGACY, ("pods",)),
            rule(READ, APPS, ("statefulsets",)),
            rule("update", APPS, ("statefulsets/status",)),
            rule("update", APPS, ("statefulsets/finalizers",)),
            rule(("create", "delete", "get", "patch", "update"), LEGACY, ("pods",)),
            rule(
                ("create", "delete", "get", "list", "patch", "update", "watch"),
                APPS,
                ("controllerrevisions",),
            ),
            rule(("create", "get", "list", "watch"), LEGACY, ("persistentvolumeclaims",)),
            rule(("delete", "update"), LEGACY, ("persistentvolumeclaims",)),
            rule("update", LEGACY, ("pods/finalizers",)),
            events_rule(),
        ],
        "ttl-after-finished-controller": [
            rule(("delete", "get", "list", "watch"), BATCH, ("jobs",)),
            events_rule(),
        ],
        "ttl-controller": [
            rule(("list", "patch", "update", "watch"), LEGACY, ("nodes",)),
            events_rule(),
        ],
        "validatingadmissionpolicy-status-controller": [
            rule(READ, ADMISSION, ("validatingadmissionpolicies",)),
            rule(("get", "patch", "update"), ADMISSION, ("validatingadmissionpolicies/status",)),
            events_rule(),
        ],
        "volumeattributesclass-protection-controller": [
            rule(READ, LEGACY, ("persistentvolumeclaims",)),
            rule(READ, LEGACY, ("persistentvolumes",)),
            rule(("get", "list", "update", "watch"), STORAGE, ("volumeattributesclasses",)),
            events_rule(),
        ],
    }


def _slice_writes() -> list[Obj]:
    """What both EndpointSlice controllers write (after what each reads and owns)."""
    return [
        rule(
            ("create", "delete", "get", "list", "update", "watch"), DISCOVERY, ("endpointslices",)
        ),
        rule("create", DISCOVERY, ("endpointslices/restricted",)),
        events_rule(),
    ]
