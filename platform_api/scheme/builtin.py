"""The built-in resource types: data only, read by the scheme at start.

Names, short names, categories and sub-resources follow kube-apiserver's discovery
documents (v1.36), with ``*.k8s.io`` groups written ``*.platform.io``.  Only
sub-resources this server implements are listed, so discovery never advertises a
verb that would answer 404.
"""

from __future__ import annotations

from platform_api.scheme.types import OBJECT_VERBS, STATUS_VERBS, ResourceType, Subresource

_NO_COLLECTION_DELETE = tuple(v for v in OBJECT_VERBS if v != "deletecollection")


def _status(kind: str) -> Subresource:
    return Subresource("status", kind, STATUS_VERBS)


def _scale() -> Subresource:
    return Subresource("scale", "Scale", STATUS_VERBS, "autoscaling", "v1")


# The verbs of kube's connect subresources (exec, attach, portforward; proxies).
CONNECT_VERBS = ("create", "get")
PROXY_VERBS = ("create", "delete", "get", "patch", "update")


def _t(
    group: str,
    kind: str,
    plural: str,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    status: bool = False,
    scale: bool = False,
    extra: tuple[Subresource, ...] = (),
    verbs: tuple[str, ...] = OBJECT_VERBS,
    name_rule: str = "subdomain",
    version: str = "v1",
    stored: bool = True,
) -> ResourceType:
    subs: tuple[Subresource, ...] = ()
    if scale:
        subs += (_scale(),)
    if status:
        subs += (_status(kind),)
    return ResourceType(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        short_names=short,
        categories=categories,
        verbs=verbs,
        subresources=tuple(sorted(subs + extra, key=lambda sub: sub.name)),  # as kube lists them
        name_rule=name_rule,
        stored=stored,
    )


ALL = ("all",)

BUILTIN_TYPES: tuple[ResourceType, ...] = (
    # core/v1
    _t("", "Binding", "bindings", verbs=("create",), stored=False),  # POST only (endpoints/pods.py)
    # Probed on each request, never stored (endpoints/componentstatus.py).
    _t(
        "",
        "ComponentStatus",
        "componentstatuses",
        False,
        ("cs",),
        verbs=("get", "list"),
        stored=False,
    ),
    _t("", "ConfigMap", "configmaps", short=("cm",)),
    _t("", "Endpoints", "endpoints", short=("ep",)),
    _t("", "Event", "events", short=("ev",), name_rule="generic"),
    _t("", "LimitRange", "limitranges", short=("limits",)),
    _t(
        "",
        "Namespace",
        "namespaces",
        namespaced=False,
        short=("ns",),
        status=True,
        extra=(Subresource("finalize", "Namespace", ("update",)),),
        verbs=_NO_COLLECTION_DELETE,
        name_rule="label",
    ),
    _t(
        "",
        "Node",
        "nodes",
        namespaced=False,
        short=("no",),
        status=True,
        extra=(Subresource("proxy", "NodeProxyOptions", PROXY_VERBS),),
    ),
    _t("", "PersistentVolumeClaim", "persistentvolumeclaims", short=("pvc",), status=True),
    _t("", "PersistentVolume", "persistentvolumes", namespaced=False, short=("pv",), status=True),
    _t(
        "",
        "Pod",
        "pods",
        short=("po",),
        categories=ALL,
        status=True,
        extra=(
            Subresource("attach", "PodAttachOptions", CONNECT_VERBS),
            Subresource("binding", "Binding", ("create",)),
            Subresource("ephemeralcontainers", "Pod", STATUS_VERBS),
            Subresource("eviction", "Eviction", ("create",), "policy", "v1"),
            Subresource("exec", "PodExecOptions", CONNECT_VERBS),
            Subresource("log", "Pod", ("get",)),
            Subresource("portforward", "PodPortForwardOptions", CONNECT_VERBS),
            Subresource("proxy", "PodProxyOptions", PROXY_VERBS),
            Subresource("resize", "Pod", STATUS_VERBS),
        ),
    ),
    _t("", "PodTemplate", "podtemplates"),
    _t(
        "",
        "ReplicationController",
        "replicationcontrollers",
        short=("rc",),
        categories=ALL,
        status=True,
        scale=True,
        name_rule="long-name",
    ),
    _t("", "ResourceQuota", "resourcequotas", short=("quota",), status=True),
    _t("", "Secret", "secrets"),
    _t(
        "",
        "ServiceAccount",
        "serviceaccounts",
        short=("sa",),
        extra=(
            Subresource("token", "TokenRequest", ("create",), "authentication.platform.io", "v1"),
        ),
    ),
    _t(
        "",
        "Service",
        "services",
        short=("svc",),
        categories=ALL,
        status=True,
        extra=(Subresource("proxy", "ServiceProxyOptions", PROXY_VERBS),),
        name_rule="dns1035",
    ),
    # apps/v1
    _t("apps", "DaemonSet", "daemonsets", short=("ds",), categories=ALL, status=True),
    _t(
        "apps",
        "Deployment",
        "deployments",
        short=("deploy",),
        categories=ALL,
        status=True,
        scale=True,
    ),
    _t("apps", "ReplicaSet", "replicasets", short=("rs",), categories=ALL, status=True, scale=True),
    _t(
        "apps",
        "StatefulSet",
        "statefulsets",
        short=("sts",),
        categories=ALL,
        status=True,
        scale=True,
        name_rule="label",  # kube's ValidateStatefulSetName: its pods' hostnames
    ),
    _t("apps", "ControllerRevision", "controllerrevisions"),
    # autoscaling/v1 (stored as v2: registry/hpaconversion.py) and autoscaling/v2
    *(
        _t(
            "autoscaling",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            short=("hpa",),
            categories=ALL,
            status=True,
            version=version,
        )
        for version in ("v2", "v1")  # v2 preferred, as kube's discovery lists them
    ),
    # batch/v1
    _t("batch", "CronJob", "cronjobs", short=("cj",), categories=ALL, status=True),
    _t("batch", "Job", "jobs", categories=ALL, status=True),
    # coordination.platform.io/v1
    _t("coordination.platform.io", "Lease", "leases"),
    # discovery.platform.io/v1 (no controller fills them here: no pod runs)
    _t("discovery.platform.io", "EndpointSlice", "endpointslices"),
    # events.platform.io/v1
    _t("events.platform.io", "Event", "events", short=("ev",)),
    # networking.platform.io/v1
    _t("networking.platform.io", "IngressClass", "ingressclasses", namespaced=False),
    _t("networking.platform.io", "Ingress", "ingresses", short=("ing",), status=True),
    _t(
        "networking.platform.io",
        "IPAddress",
        "ipaddresses",
        namespaced=False,
        short=("ip",),
        name_rule="ip",
    ),
    _t("networking.platform.io", "NetworkPolicy", "networkpolicies", short=("netpol",)),
    _t("networking.platform.io", "ServiceCIDR", "servicecidrs", namespaced=False, status=True),
    # policy/v1
    # kube's PDB validation checks no name of its own: the generic path-segment rule
    _t(
        "policy",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        short=("pdb",),
        status=True,
        name_rule="path-segment",
    ),
    # rbac.authorization.platform.io/v1
    _t(
        "rbac.authorization.platform.io",
        "ClusterRoleBinding",
        "clusterrolebindings",
        namespaced=False,
        name_rule="path-segment",
    ),
    _t(
        "rbac.authorization.platform.io",
        "ClusterRole",
        "clusterroles",
        namespaced=False,
        name_rule="path-segment",
    ),
    _t("rbac.authorization.platform.io", "RoleBinding", "rolebindings", name_rule="path-segment"),
    _t("rbac.authorization.platform.io", "Role", "roles", name_rule="path-segment"),
    # scheduling.platform.io/v1
    _t(
        "scheduling.platform.io",
        "PriorityClass",
        "priorityclasses",
        namespaced=False,
        short=("pc",),
    ),
    # flowcontrol.apiserver.platform.io/v1 (API Priority and Fairness)
    _t(
        "flowcontrol.apiserver.platform.io",
        "FlowSchema",
        "flowschemas",
        namespaced=False,
        status=True,
    ),
    _t(
        "flowcontrol.apiserver.platform.io",
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        namespaced=False,
        status=True,
    ),
    # authentication.platform.io/v1: reviews are answered, never stored
    _t(
        "authentication.platform.io",
        "TokenReview",
        "tokenreviews",
        namespaced=False,
        verbs=("create",),
        stored=False,
    ),
    _t(
        "authentication.platform.io",
        "SelfSubjectReview",
        "selfsubjectreviews",
        namespaced=False,
        verbs=("create",),
        stored=False,
    ),
    # authorization.platform.io/v1: access reviews, answered by the authorizer
    _t(
        "authorization.platform.io",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        verbs=("create",),
        stored=False,
    ),
    _t(
        "authorization.platform.io",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        namespaced=False,
        verbs=("create",),
        stored=False,
    ),
    _t(
        "authorization.platform.io",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        namespaced=False,
        verbs=("create",),
        stored=False,
    ),
    _t(
        "authorization.platform.io",
        "SubjectAccessReview",
        "subjectaccessreviews",
        namespaced=False,
        verbs=("create",),
        stored=False,
    ),
    # apiextensions.platform.io/v1
    _t(
        "apiextensions.platform.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        namespaced=False,
        short=("crd", "crds"),
        categories=("api-extensions",),
        status=True,
    ),
    # admissionregistration.platform.io/v1: webhook configurations
    _t(
        "admissionregistration.platform.io",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        namespaced=False,
        categories=("api-extensions",),
    ),
    _t(
        "admissionregistration.platform.io",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        namespaced=False,
        categories=("api-extensions",),
    ),
    # admissionregistration.platform.io/v1: admission policies (no short names, as kube)
    _t(
        "admissionregistration.platform.io",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        namespaced=False,
        categories=("api-extensions",),
        status=True,
    ),
    _t(
        "admissionregistration.platform.io",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        namespaced=False,
        categories=("api-extensions",),
    ),
    # mutating policies have no status sub-resource (kube serves none)
    _t(
        "admissionregistration.platform.io",
        "MutatingAdmissionPolicy",
        "mutatingadmissionpolicies",
        namespaced=False,
        categories=("api-extensions",),
    ),
    _t(
        "admissionregistration.platform.io",
        "MutatingAdmissionPolicyBinding",
        "mutatingadmissionpolicybindings",
        namespaced=False,
        categories=("api-extensions",),
    ),
    # certificates.platform.io/v1: approval and status change their own parts
    _t(
        "certificates.platform.io",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        namespaced=False,
        short=("csr",),
        extra=(
            Subresource("approval", "CertificateSigningRequest", STATUS_VERBS),
            _status("CertificateSigningRequest"),
        ),
        name_rule="any",
    ),
    # apiregistration.platform.io/v1: the aggregation layer's registrations
    _t(
        "apiregistration.platform.io",
        "APIService",
        "apiservices",
        namespaced=False,
        categories=("api-extensions",),
        status=True,
        name_rule="path-segment",
    ),
    # node.platform.io/v1
    _t("node.platform.io", "RuntimeClass", "runtimeclasses", namespaced=False),
    # storage.platform.io/v1
    _t("storage.platform.io", "CSIDriver", "csidrivers", namespaced=False),
    _t("storage.platform.io", "CSINode", "csinodes", namespaced=False),
    _t("storage.platform.io", "CSIStorageCapacity", "csistoragecapacities"),
    _t("storage.platform.io", "StorageClass", "storageclasses", namespaced=False, short=("sc",)),
    _t(
        "storage.platform.io",
        "VolumeAttachment",
        "volumeattachments",
        namespaced=False,
        status=True,
    ),
    _t(
        "storage.platform.io",
        "VolumeAttributesClass",
        "volumeattributesclasses",
        namespaced=False,
        short=("vac",),
    ),
)

# Group order of kube's /apis document; groups not listed sort after, by name.
GROUP_ORDER = (
    "apiregistration.platform.io",
    "apps",
    "events.platform.io",
    "authentication.platform.io",
    "authorization.platform.io",
    "autoscaling",
    "batch",
    "certificates.platform.io",
    "networking.platform.io",
    "policy",
    "rbac.authorization.platform.io",
    "storage.platform.io",
    "admissionregistration.platform.io",
    "apiextensions.platform.io",
    "scheduling.platform.io",
    "coordination.platform.io",
    "node.platform.io",
    "discovery.platform.io",
    "resource.platform.io",
    "flowcontrol.apiserver.platform.io",
)
