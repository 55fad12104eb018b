"""The alpha and beta versions of built-in groups (and GA resource.k8s.io/v1): data only.

kube-apiserver v1.36 serves the alpha and beta ones only when ``--runtime-config``
turns their version on (pkg/controlplane/instance.go lists them disabled) and, for some,
when a feature gate is on too (the storage providers in pkg/registry/*/rest check
both).  Kinds whose ``APILifecycleRemoved`` is 1.36 or earlier are left out, as kube's
``RemoveUnavailableKinds`` drops them: admissionregistration v1beta1 keeps only the
mutating policies, authentication v1beta1 and storage v1alpha1 serve nothing.

``REGISTERED`` is kube's scheme registry (pkg/apis/*/install plus the apiextensions and
aggregator schemes): the group versions ``--runtime-config`` may name without an
error, served or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from platform_api.scheme.builtin import _t
from platform_api.scheme.types import ResourceType

_ADMISSION = "admissionregistration.platform.io"
_CERTIFICATES = "certificates.platform.io"
_COORDINATION = "coordination.platform.io"
_NETWORKING = "networking.platform.io"
_RESOURCE = "resource.platform.io"
_SCHEDULING = "scheduling.platform.io"
_STORAGE = "storage.platform.io"
_MIGRATION = "storagemigration.platform.io"
_INTERNAL = "internal.apiserver.platform.io"
_EXT = ("api-extensions",)


def _mutating_policies(version: str) -> tuple[ResourceType, ...]:
    return (
        _t(
            _ADMISSION,
            "MutatingAdmissionPolicy",
            "mutatingadmissionpolicies",
            namespaced=False,
            categories=_EXT,
            version=version,
        ),
        _t(
            _ADMISSION,
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
            namespaced=False,
            categories=_EXT,
            version=version,
        ),
    )


def _dra(version: str, taints: bool) -> tuple[ResourceType, ...]:
    kinds: tuple[ResourceType, ...] = (
        _t(
            _RESOURCE,
            "DeviceClass",
            "deviceclasses",
            namespaced=False,
            version=version,
            name_rule="long-name",
        ),
        _t(_RESOURCE, "ResourceClaim", "resourceclaims", status=True, version=version),
        _t(_RESOURCE, "ResourceClaimTemplate", "resourceclaimtemplates", version=version),
        _t(_RESOURCE, "ResourceSlice", "resourceslices", namespaced=False, version=version),
    )
    if taints:
        kinds += (_device_taint_rules(version),)
    return kinds


def _device_taint_rules(version: str) -> ResourceType:
    return _t(
        _RESOURCE,
        "DeviceTaintRule",
        "devicetaintrules",
        namespaced=False,
        status=True,
        version=version,
    )


def _cluster_trust_bundles(version: str) -> ResourceType:
    return _t(
        _CERTIFICATES,
        "ClusterTrustBundle",
        "clustertrustbundles",
        namespaced=False,
        version=version,
    )


def _lease_candidates(version: str) -> ResourceType:
    return _t(_COORDINATION, "LeaseCandidate", "leasecandidates", version=version)


OPTIONAL_TYPES: tuple[ResourceType, ...] = (
    # resource.k8s.io/v1 is GA (on by default); its beta versions share its storage.
    *_dra("v1", taints=False),
    *_mutating_policies("v1beta1"),
    *_mutating_policies("v1alpha1"),
    _cluster_trust_bundles("v1beta1"),
    _t(
        _CERTIFICATES,
        "PodCertificateRequest",
        "podcertificaterequests",
        status=True,
        version="v1beta1",
    ),
    _cluster_trust_bundles("v1alpha1"),
    _lease_candidates("v1beta1"),
    _lease_candidates("v1alpha2"),
    _t(
        _NETWORKING,
        "IPAddress",
        "ipaddresses",
        namespaced=False,
        short=("ip",),
        name_rule="ip",
        version="v1beta1",
    ),
    _t(
        _NETWORKING, "ServiceCIDR", "servicecidrs", namespaced=False, status=True, version="v1beta1"
    ),
    *_dra("v1beta2", taints=True),
    *_dra("v1beta1", taints=False),
    _device_taint_rules("v1alpha3"),
    _t(
        _RESOURCE,
        "ResourcePoolStatusRequest",
        "resourcepoolstatusrequests",
        namespaced=False,
        status=True,
        version="v1alpha3",
    ),
    _t(_SCHEDULING, "Workload", "workloads", version="v1alpha2"),
    _t(_SCHEDULING, "PodGroup", "podgroups", status=True, version="v1alpha2"),
    _t(
        _STORAGE,
        "VolumeAttributesClass",
        "volumeattributesclasses",
        namespaced=False,
        short=("vac",),
        version="v1beta1",
    ),
    _t(
        _MIGRATION,
        "StorageVersionMigration",
        "storageversionmigrations",
        namespaced=False,
        status=True,
        version="v1beta1",
    ),
    _t(
        _INTERNAL,
        "StorageVersion",
        "storageversions",
        namespaced=False,
        status=True,
        version="v1alpha1",
    ),
)

# The feature gate a resource also needs (kube's storage providers check it).
GATES: Mapping[tuple[str, str], str] = MappingProxyType(
    {
        (_CERTIFICATES, "clustertrustbundles"): "ClusterTrustBundle",
        (_CERTIFICATES, "podcertificaterequests"): "PodCertificateRequest",
        (_SCHEDULING, "workloads"): "GenericWorkload",
        (_SCHEDULING, "podgroups"): "GenericWorkload",
        (_MIGRATION, "storageversionmigrations"): "StorageVersionMigrator",
    }
)


def _versions(*names: str) -> frozenset[str]:
    return frozenset(names)


# kube's scheme registry, groups branded: group -> registered versions.
REGISTERED: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "": _versions("v1"),
        "admission.platform.io": _versions("v1", "v1beta1"),
        _ADMISSION: _versions("v1", "v1beta1", "v1alpha1"),
        _INTERNAL: _versions("v1alpha1"),
        "apps": _versions("v1", "v1beta1", "v1beta2"),
        "authentication.platform.io": _versions("v1", "v1beta1", "v1alpha1"),
        "authorization.platform.io": _versions("v1", "v1beta1"),
        "autoscaling": _versions("v1", "v2"),
        "batch": _versions("v1", "v1beta1"),
        _CERTIFICATES: _versions("v1", "v1beta1", "v1alpha1"),
        _COORDINATION: _versions("v1", "v1beta1", "v1alpha2"),
        "discovery.platform.io": _versions("v1", "v1beta1"),
        "events.platform.io": _versions("v1", "v1beta1"),
        "extensions": _versions("v1beta1"),
        "flowcontrol.apiserver.platform.io": _versions("v1", "v1beta1", "v1beta2", "v1beta3"),
        "imagepolicy.platform.io": _versions("v1alpha1"),
        _NETWORKING: _versions("v1", "v1beta1"),
        "node.platform.io": _versions("v1", "v1beta1", "v1alpha1"),
        "policy": _versions("v1", "v1beta1"),
        "rbac.authorization.platform.io": _versions("v1", "v1beta1", "v1alpha1"),
        _RESOURCE: _versions("v1", "v1beta1", "v1beta2", "v1alpha3"),
        _SCHEDULING: _versions("v1", "v1beta1", "v1alpha2"),
        _STORAGE: _versions("v1", "v1beta1", "v1alpha1"),
        _MIGRATION: _versions("v1beta1"),
        "apiextensions.platform.io": _versions("v1", "v1beta1"),
        "apiregistration.platform.io": _versions("v1", "v1beta1"),
    }
)

# Versions kube's default resource configuration lists (instance.go): GA ones on,
# the alpha and beta ones off.  api/all, api/ga, api/beta and api/alpha act on these.
_GA_GROUPS = (
    _ADMISSION,
    "",
    "authentication.platform.io",
    "authorization.platform.io",
    _CERTIFICATES,
    _COORDINATION,
    "events.platform.io",
    "rbac.authorization.platform.io",
    "flowcontrol.apiserver.platform.io",
    "apps",
    "autoscaling",
    "batch",
    "discovery.platform.io",
    _NETWORKING,
    "node.platform.io",
    "policy",
    _RESOURCE,
    _STORAGE,
    _SCHEDULING,
    "apiextensions.platform.io",
    "apiregistration.platform.io",
)
_OFF_BY_DEFAULT = (
    (_ADMISSION, "v1beta1"),
    ("authentication.platform.io", "v1beta1"),
    (_CERTIFICATES, "v1beta1"),
    (_COORDINATION, "v1beta1"),
    ("flowcontrol.apiserver.platform.io", "v1beta1"),
    ("flowcontrol.apiserver.platform.io", "v1beta2"),
    ("flowcontrol.apiserver.platform.io", "v1beta3"),
    (_MIGRATION, "v1beta1"),
    (_STORAGE, "v1beta1"),
    (_NETWORKING, "v1beta1"),
    (_RESOURCE, "v1beta1"),
    (_RESOURCE, "v1beta2"),
    (_ADMISSION, "v1alpha1"),
    (_INTERNAL, "v1alpha1"),
    ("authentication.platform.io", "v1alpha1"),
    (_COORDINATION, "v1alpha2"),
    (_CERTIFICATES, "v1alpha1"),
    (_RESOURCE, "v1alpha3"),
    (_SCHEDULING, "v1alpha2"),
    (_STORAGE, "v1alpha1"),
)
DEFAULT_VERSIONS: Mapping[tuple[str, str], bool] = MappingProxyType(
    {
        **dict.fromkeys(((g, "v1") for g in _GA_GROUPS), True),
        ("autoscaling", "v2"): True,
        **dict.fromkeys(_OFF_BY_DEFAULT, False),
    }
)
