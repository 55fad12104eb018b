"""Fields of feature gates that are off: kube's strategies drop them from a write.

kube-apiserver v1.36 serves a field whose gate is off (it is in the schema) but its
strategies clear it on create and update (``dropDisabled...Fields``), unless the object
being updated already uses it: a cluster that turned a gate off keeps what was written
while it was on.  ``drop_disabled`` does the same for the gates kube has off by default
among those its strategies consult; ``--feature-gates`` turning one on keeps its field.
The gates kube has on by default need nothing here: their fields are always kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from platform_api.validation.podoptions import PodOptions

Obj = dict[str, Any]
GateCheck = Callable[[str], bool]

CLUSTER_TRUST_BUNDLE_PROJECTION = "ClusterTrustBundleProjection"
CONTAINER_STOP_SIGNALS = "ContainerStopSignals"
DRA_LIST_TYPE_ATTRIBUTES = "DRAListTypeAttributes"
DRA_NODE_ALLOCATABLE_RESOURCES = "DRANodeAllocatableResources"
GENERIC_WORKLOAD = "GenericWorkload"
GIT_REPO_VOLUME_DRIVER = "GitRepoVolumeDriver"  # consulted by the pod warnings
IMAGE_VOLUME_WITH_DIGEST = "ImageVolumeWithDigest"
MAX_UNAVAILABLE_STATEFUL_SET = "MaxUnavailableStatefulSet"
POD_CERTIFICATE_REQUEST = "PodCertificateRequest"
# Consulted by validation, not drops (on in kube v1.36): Service names as DNS-1123 labels.
RELAXED_SERVICE_NAMES = "RelaxedServiceNameValidation"
# Consulted by pod-spec validation (pod_options): tolerations' Lt and Gt, and a pod in its
# own user namespace on the host's network.
TAINT_TOLERATION_COMPARISON_OPERATORS = "TaintTolerationComparisonOperators"
USER_NAMESPACES_HOST_NETWORK_SUPPORT = "UserNamespacesHostNetworkSupport"

# kube v1.36's defaults for the gates consulted here (all off; a test holds them to the
# server's gate table).
OFF_BY_DEFAULT = frozenset(
    {
        CLUSTER_TRUST_BUNDLE_PROJECTION,
        CONTAINER_STOP_SIGNALS,
        DRA_LIST_TYPE_ATTRIBUTES,
        DRA_NODE_ALLOCATABLE_RESOURCES,
        GENERIC_WORKLOAD,
        GIT_REPO_VOLUME_DRIVER,
        IMAGE_VOLUME_WITH_DIGEST,
        MAX_UNAVAILABLE_STATEFUL_SET,
        POD_CERTIFICATE_REQUEST,
        TAINT_TOLERATION_COMPARISON_OPERATORS,
        USER_NAMESPACES_HOST_NETWORK_SUPPORT,
    }
)


def kube_defaults(name: str) -> bool:
    """A consulted gate's value when no ``--feature-gates`` flag set it."""
    return name not in OFF_BY_DEFAULT


_TEMPLATE = ("spec", "template", "spec")
# Where each kind holds a pod spec (kube's DropDisabledTemplateFields callers).
POD_SPECS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Pod"): ("spec",),
    ("", "PodTemplate"): ("template", "spec"),
    ("", "ReplicationController"): _TEMPLATE,
    ("apps", "Deployment"): _TEMPLATE,
    ("apps", "ReplicaSet"): _TEMPLATE,
    ("apps", "DaemonSet"): _TEMPLATE,
    ("apps", "StatefulSet"): _TEMPLATE,
    ("batch", "Job"): _TEMPLATE,
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
}


def drop_disabled(group: str, kind: str, new: Obj, old: Obj | None, enabled: GateCheck) -> None:
    """Clear, in place, what ``new`` holds of gates that are off and ``old`` (None on
    create) does not use."""
    at = POD_SPECS.get((group, kind))
    if at is not None:
        spec = _dig(new, at)
        if spec is not None:
            drop_pod_spec_fields(spec, _dig(old, at) if old is not None else None, enabled)
    if (group, kind) == ("", "Pod"):
        status = new.get("status")
        if isinstance(status, dict):
            before = old.get("status") if old is not None else None
            _drop_pod_status_fields(status, before if isinstance(before, dict) else {}, enabled)
    elif (group, kind) == ("apps", "StatefulSet"):
        _drop_statefulset_fields(new, old, enabled)
    elif (group, kind) == ("resource.platform.io", "ResourceSlice"):
        _drop_resourceslice_fields(new, old, enabled)


def pod_options(group: str, kind: str, old: Obj | None, enabled: GateCheck) -> PodOptions:
    """kube's PodValidationOptions of the two validation gates for a write of a kind
    that holds a pod spec: a gate on, or the object being updated already using what
    it allows (kube's GetValidationOptionsFromPodSpecAndMeta)."""
    at = POD_SPECS.get((group, kind))
    if at is None:
        return PodOptions()
    before = (_dig(old, at) if old is not None else None) or {}
    tolerations = before.get("tolerations")
    compares = isinstance(tolerations, list) and any(
        isinstance(t, dict) and t.get("operator") in ("Lt", "Gt") for t in tolerations
    )
    host_network = before.get("hostUsers") is False and before.get("hostNetwork") is True
    return PodOptions(
        toleration_comparisons=enabled(TAINT_TOLERATION_COMPARISON_OPERATORS) or compares,
        userns_host_network=enabled(USER_NAMESPACES_HOST_NETWORK_SUPPORT) or host_network,
    )


def _dig(obj: Obj, path: tuple[str, ...]) -> Obj | None:
    for key in path:
        obj = obj.get(key)  # type: ignore[assignment]
        if not isinstance(obj, dict):
            return None
    return obj


def _dicts(value: Any) -> Iterator[Obj]:
    return (
        (item for item in value or () if isinstance(item, dict))
        if isinstance(value, list)
        else iter(())
    )


def _containers(spec: Obj) -> Iterator[Obj]:
    """Every container of the spec: regular, init and ephemeral (kube's AllContainers)."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from _dicts(spec.get(key))


def _sources(spec: Obj) -> Iterator[Obj]:
    """The sources of every projected volume."""
    for volume in _dicts(spec.get("volumes")):
        projected = volume.get("projected")
        if isinstance(projected, dict):
            yield from _dicts(projected.get("sources"))


def drop_pod_spec_fields(spec: Obj, old: Obj | None, enabled: GateCheck) -> None:
    """kube's dropDisabledFields for the gates off by default (``old``: the spec being
    updated, None on create)."""
    before = old or {}
    if not enabled(CONTAINER_STOP_SIGNALS) and not _uses_stop_signals(before):
        for container in _containers(spec):
            lifecycle = container.get("lifecycle")
            if not isinstance(lifecycle, dict) or lifecycle.pop("stopSignal", None) is None:
                continue
            if not any(value is not None for value in lifecycle.values()):
                del container["lifecycle"]  # an empty Lifecycle goes, as in kube
    for gate, key in (
        (CLUSTER_TRUST_BUNDLE_PROJECTION, "clusterTrustBundle"),
        (POD_CERTIFICATE_REQUEST, "podCertificate"),
    ):
        if not enabled(gate) and not any(s.get(key) is not None for s in _sources(before)):
            for source in _sources(spec):
                source.pop(key, None)  # the source stays, empty, as kube leaves it
    if not enabled(GENERIC_WORKLOAD) and before.get("schedulingGroup") is None:
        spec.pop("schedulingGroup", None)


def _uses_stop_signals(spec: Obj) -> bool:
    return any(
        isinstance(c.get("lifecycle"), dict) and c["lifecycle"].get("stopSignal") is not None
        for c in _containers(spec)
    )


_STATUS_LISTS = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")


def _mounts(status: Obj) -> Iterator[Obj]:
    for key in _STATUS_LISTS:
        for container in _dicts(status.get(key)):
            yield from _dicts(container.get("volumeMounts"))


def _drop_pod_status_fields(status: Obj, old: Obj, enabled: GateCheck) -> None:
    """kube's dropDisabledPodStatusFields for the gates off by default."""
    if not enabled(IMAGE_VOLUME_WITH_DIGEST) and not any(
        m.get("volumeStatus") is not None for m in _mounts(old)
    ):
        for mount in _mounts(status):
            mount.pop("volumeStatus", None)
    if not enabled(DRA_NODE_ALLOCATABLE_RESOURCES) and not old.get(
        "nodeAllocatableResourceClaimStatuses"
    ):
        status.pop("nodeAllocatableResourceClaimStatuses", None)


def _rolling(obj: Obj | None) -> Obj:
    strategy = ((obj or {}).get("spec") or {}).get("updateStrategy")
    rolling = strategy.get("rollingUpdate") if isinstance(strategy, dict) else None
    return rolling if isinstance(rolling, dict) else {}


def _drop_statefulset_fields(new: Obj, old: Obj | None, enabled: GateCheck) -> None:
    if not enabled(MAX_UNAVAILABLE_STATEFUL_SET) and _rolling(old).get("maxUnavailable") is None:
        _rolling(new).pop("maxUnavailable", None)


def _devices(slice_: Obj | None) -> Iterator[Obj]:
    spec = (slice_ or {}).get("spec")
    return _dicts(spec.get("devices")) if isinstance(spec, dict) else iter(())


# A device attribute's list values (DRAListTypeAttributes), by their JSON names.
LIST_VALUES = ("bools", "ints", "strings", "versions")


def _attributes(device: Obj) -> Iterator[Obj]:
    attributes = device.get("attributes")
    if isinstance(attributes, dict):
        yield from (a for a in attributes.values() if isinstance(a, dict))


def _drop_resourceslice_fields(new: Obj, old: Obj | None, enabled: GateCheck) -> None:
    """kube's ResourceSlice strategy: node-allocatable mappings and list attributes."""
    if not enabled(DRA_NODE_ALLOCATABLE_RESOURCES) and not any(
        d.get("nodeAllocatableResourceMappings") for d in _devices(old)
    ):
        for device in _devices(new):
            device.pop("nodeAllocatableResourceMappings", None)
    if not enabled(DRA_LIST_TYPE_ATTRIBUTES) and not any(
        a.get(key) is not None for d in _devices(old) for a in _attributes(d) for key in LIST_VALUES
    ):
        for device in _devices(new):
            for attribute in _attributes(device):
                for key in LIST_VALUES:
                    attribute.pop(key, None)
