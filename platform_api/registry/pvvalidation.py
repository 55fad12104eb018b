"""PersistentVolumes as kube-apiserver v1.36 checks them: ValidatePersistentVolume(Spec),
ValidatePersistentVolumeUpdate, the mount-options rule of pkg/volume/validation, the
warnings of pkg/api/persistentvolume and the strategy's phase transition times.

A volume names its capacity (``storage``, above zero), access modes, reclaim policy and
exactly one source (``pvsources``).  After creation the source never changes (a CSI
volume may gain a controllerExpandSecretRef), nor does the volume mode; node affinity,
once set, changes only from a beta zone/region/os/arch label to its GA name.
"""

from __future__ import annotations

import copy
from typing import Any

from platform_api.gotext import path_clean
from platform_api.quantity import QuantityError, parse
from platform_api.registry.claimspec import (
    VOLUME_MODES,
    access_mode_errors,
    basic_resource,
    class_name_errors,
)
from platform_api.registry.gointernal import go_text, go_value, same, struct_diff
from platform_api.registry.node import DEPRECATED_NODE_LABELS
from platform_api.registry.podscheduling import node_selector_term
from platform_api.registry.pvsources import SOURCE_KEYS, default_sources, validate_sources
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_label_value

Obj = dict[str, Any]
RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]
MOUNT_OPTIONS = "volume.beta.platform.io/mount-options"  # kube's volume.beta.kubernetes.io/...
STORAGE_CLASS = "volume.beta.platform.io/storage-class"
# Sources that take mount options (pkg/volume/validation's checkMountOption).
MOUNTABLE = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "iscsi",
    "cinder",
    "cephfs",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
)
# Beta node labels an affinity may trade for their GA names (kube's betaToGALabel).
BETA_TO_GA = {
    "failure-domain.beta.platform.io/zone": "topology.platform.io/zone",
    "failure-domain.beta.platform.io/region": "topology.platform.io/region",
    "beta.platform.io/os": "platform.io/os",
    "beta.platform.io/arch": "platform.io/arch",
    "beta.platform.io/instance-type": "node.platform.io/instance-type",
}
SOURCE_TYPE, AFFINITY_TYPE = "core.PersistentVolumeSource", "*core.VolumeNodeAffinity"
AFFINITY_IMMUTABLE = "field is immutable, except for updating from beta label to GA"
EXPAND = "controllerExpandSecretRef"
SOURCE_IMMUTABLE = "spec.persistentvolumesource is immutable after creation"
DEPRECATED_ANNOTATIONS = (
    (STORAGE_CLASS, 'deprecated since v1.8; use "storageClassName" attribute instead'),
    (MOUNT_OPTIONS, 'deprecated since v1.31; use "mountOptions" attribute instead'),
)
# Sources whose plugins are gone: (key, the path kube's warning names, why).
DEPRECATED_SOURCES = (
    ("cephfs", "cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    (
        "photonPersistentDisk",
        "photonPersistentDisk",
        "deprecated in v1.11, non-functional in v1.16+",
    ),
    ("scaleIO", "scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("storageos", "storageOS", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    ("rbd", "rbd", "deprecated in v1.28, non-functional in v1.31+"),
)


def _terms(affinity: Any) -> list[Obj]:
    required = (affinity or {}).get("required") if isinstance(affinity, dict) else None
    return (required or {}).get("nodeSelectorTerms") or []


def has_invalid_label_values(affinity: Any) -> bool:
    """kube's HasInvalidLabelValueInNodeSelectorTerms: an old volume holding one keeps
    being accepted with it."""
    return any(
        is_label_value(value)
        for term in _terms(affinity)
        for expr in (term or {}).get("matchExpressions") or []
        for value in expr.get("values") or []
    )


def validate_volume_node_affinity(affinity: Obj, allow_invalid: bool) -> list[FieldError]:
    """``validateVolumeNodeAffinity``: required terms, each as a pod's required term."""
    at = "spec.nodeAffinity.required"
    required = affinity.get("required")
    if required is None:
        return [field.required(at, "must specify required node constraints")]
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        detail = "must have at least one node selector term"
        return [field.required(f"{at}.nodeSelectorTerms", detail)]
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        where = f"{at}.nodeSelectorTerms[{i}]"
        errs += node_selector_term(term or {}, where, label_values=not allow_invalid)
    return errs


def _capacity(capacity: Any) -> list[FieldError]:
    errs: list[FieldError] = []
    if not capacity:
        errs.append(field.required("spec.capacity"))
    if not isinstance(capacity, dict) or "storage" not in capacity or len(capacity) > 1:
        errs.append(field.not_supported("spec.capacity", capacity, ["storage"]))
    for name in sorted(capacity or {}):  # a Go map: kube's order varies
        where = f"spec.capacity[{name}]"
        errs += basic_resource(capacity[name], where)
        try:
            quantity = parse(str(capacity[name]))
        except QuantityError:
            continue  # the decoder refused it already
        if quantity.value <= 0:
            errs.append(field.invalid(where, str(quantity), "must be greater than zero"))
    return errs


def _recycles_root(spec: Obj) -> list[FieldError]:
    """A hostPath of ``/`` (as Go's path.Clean reads it) may not be recycled."""
    host = spec.get("hostPath")
    if not isinstance(host, dict) or spec.get("persistentVolumeReclaimPolicy") != "Recycle":
        return []
    if path_clean(host.get("path") or "") != "/":
        return []
    detail = "may not be 'recycle' for a hostPath mount of '/'"
    return [field.forbidden("spec.persistentVolumeReclaimPolicy", detail)]


def _attributes_class(spec: Obj) -> list[FieldError]:
    name = spec.get("volumeAttributesClassName")
    if name is None:
        return []
    at = "spec.volumeAttributesClassName"
    if name == "":
        errs = [field.required(at, "an empty string is disallowed")]
    else:
        errs = class_name_errors(name, at)
    if spec.get("csi") is None:
        detail = "has to be specified when using volumeAttributesClassName"
        errs.append(field.required("spec.csi", detail))
    return errs


def validate_pv_spec(spec: Obj, name: str, old_spec: Obj | None = None) -> list[FieldError]:
    """``ValidatePersistentVolumeSpec`` of a (non-inline) volume."""
    modes = spec.get("accessModes") or []
    errs = [] if modes else [field.required("spec.accessModes")]
    errs += access_mode_errors(modes, "spec.accessModes")
    errs += _capacity(spec.get("capacity"))
    policy = spec.get("persistentVolumeReclaimPolicy") or ""
    if policy and policy not in RECLAIM_POLICIES:
        at = "spec.persistentVolumeReclaimPolicy"
        errs.append(field.not_supported(at, policy, RECLAIM_POLICIES))
    affinity = spec.get("nodeAffinity")
    if affinity is not None:
        allow = old_spec is not None and has_invalid_label_values(old_spec.get("nodeAffinity"))
        errs += validate_volume_node_affinity(affinity, allow)
    errs += validate_sources(spec, name, "spec")
    errs += _recycles_root(spec)
    errs += class_name_errors(spec.get("storageClassName") or "", "spec.storageClassName")
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(field.not_supported("spec.volumeMode", mode, VOLUME_MODES))
    return errs + _attributes_class(spec)


INLINE = "may not be specified in the context of inline volumes"


def validate_inline_pv_spec(spec: Obj, at: str) -> list[FieldError]:
    """``ValidatePersistentVolumeSpec`` of an inline volume (a VolumeAttachment's): a CSI
    volume with no capacity, claim, class or node affinity of its own."""
    errs: list[FieldError] = []
    if spec.get("claimRef") is not None:
        errs.append(field.forbidden(f"{at}.claimRef", INLINE))
    if spec.get("capacity"):
        errs.append(field.forbidden(f"{at}.capacity", INLINE))
    if spec.get("csi") is None:
        detail = "has to be specified in the context of inline volumes"
        errs.append(field.required(f"{at}.csi", detail))
    modes = spec.get("accessModes") or []
    errs += [] if modes else [field.required(f"{at}.accessModes")]
    errs += access_mode_errors(modes, f"{at}.accessModes")
    if (spec.get("persistentVolumeReclaimPolicy") or "Retain") != "Retain":
        detail = "may only be Retain in the context of inline volumes"
        errs.append(field.forbidden(f"{at}.persistentVolumeReclaimPolicy", detail))
    if spec.get("nodeAffinity") is not None:
        errs.append(field.forbidden(f"{at}.nodeAffinity", INLINE))
    errs += validate_sources(spec, "", at)
    if spec.get("storageClassName"):
        errs.append(field.forbidden(f"{at}.storageClassName", INLINE))
    if spec.get("volumeMode") not in (None, "Filesystem"):
        detail = "may not specify volumeMode other than Filesystem in the context of inline volumes"
        errs.append(field.forbidden(f"{at}.volumeMode", detail))
    return errs


def mount_option_errors(obj: Obj) -> list[FieldError]:
    """The mount-options annotation is for the sources that mount with options only."""
    spec = obj.get("spec") or {}
    if any(spec.get(key) is not None for key in MOUNTABLE):
        return []
    if MOUNT_OPTIONS not in ((obj.get("metadata") or {}).get("annotations") or {}):
        return []
    detail = "may not specify mount options for this volume type"
    return [field.forbidden(f"metadata.annotations.{MOUNT_OPTIONS}", detail)]


def validate_pv(obj: Obj, old: Obj | None = None, mounts: bool = True) -> list[FieldError]:
    """The spec and (``mounts``) its mount options; the metadata is the strategy's."""
    name = (obj.get("metadata") or {}).get("name") or ""
    old_spec = (old.get("spec") or {}) if old is not None else None
    errs = validate_pv_spec(obj.get("spec") or {}, name, old_spec)
    return errs + mount_option_errors(obj) if mounts else errs


def _sources(spec: Obj) -> Obj:
    return {key: spec[key] for key in SOURCE_KEYS if spec.get(key) is not None}


def _source_update(spec: Obj, old_spec: Obj) -> list[FieldError]:
    old_spec = copy.deepcopy(old_spec)
    default_sources(old_spec)  # as kube's decoder reads a volume stored before its defaults
    sources, old_sources = _sources(spec), _sources(old_spec)
    csi, old_csi = sources.get("csi"), old_sources.get("csi")
    # a CSI volume may gain a controllerExpandSecretRef
    if isinstance(csi, dict) and isinstance(old_csi, dict) and old_csi.get(EXPAND) is None:
        sources["csi"] = {k: v for k, v in csi.items() if k != EXPAND}
    if same(SOURCE_TYPE, old_sources, sources):
        return []
    diff = struct_diff(go_value(SOURCE_TYPE, old_sources), go_value(SOURCE_TYPE, sources))
    detail = f"{SOURCE_IMMUTABLE}\n{diff}"
    return [field.forbidden("spec.persistentvolumesource", detail)]


def _masked_beta_labels(affinity: Any, old_affinity: Any) -> Any:
    """The old affinity with each requirement's beta key read as the GA key the new one
    holds in its place (kube's getMaskNodeSelectorLabelChangeEqualities)."""
    masked = copy.deepcopy(old_affinity)
    for term, old_term in zip(_terms(affinity), _terms(masked), strict=False):
        for part in ("matchExpressions", "matchFields"):
            pairs = zip(
                (term or {}).get(part) or [], (old_term or {}).get(part) or [], strict=False
            )
            for req, old_req in pairs:
                key, old_key = req.get("key"), old_req.get("key")
                if key != old_key and BETA_TO_GA.get(old_key) == key:
                    old_req["key"] = key
    return masked


def _affinity_update(affinity: Any, old_affinity: Any) -> list[FieldError]:
    masked = _masked_beta_labels(affinity, old_affinity)
    if same(AFFINITY_TYPE, masked, affinity):
        return []
    return [field.invalid("nodeAffinity", go_text(AFFINITY_TYPE, affinity), AFFINITY_IMMUTABLE)]


def validate_pv_update(new: Obj, old: Obj) -> list[FieldError]:
    """``ValidatePersistentVolumeUpdate``'s own rules (the new volume's are validate_pv's)."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs = _source_update(spec, old_spec)
    mode = spec.get("volumeMode")
    if mode != old_spec.get("volumeMode"):
        errs.append(field.invalid("volumeMode", mode, "field is immutable"))
    if old_spec.get("nodeAffinity") is not None:  # MutablePVNodeAffinity is off
        errs += _affinity_update(spec.get("nodeAffinity"), old_spec["nodeAffinity"])
    before, after = old_spec.get("volumeAttributesClassName"), spec.get("volumeAttributesClassName")
    if before is not None and after is None:
        detail = "update from non-nil value to nil is forbidden"
        errs.append(field.forbidden("spec.volumeAttributesClassName", detail))
    return errs


def stamp_phase_transition(status: Obj, old_status: Obj, now: str) -> None:
    """A status write: the phase's transition time kept while the phase stays, set to
    now when it changes (unless the writer set a new time of its own)."""
    phase, old_phase = status.get("phase"), old_status.get("phase")
    stamp, old_stamp = (
        status.get("lastPhaseTransitionTime"),
        old_status.get("lastPhaseTransitionTime"),
    )
    if phase == old_phase and stamp is None:
        if old_stamp is not None:
            status["lastPhaseTransitionTime"] = old_stamp
    elif phase != old_phase and (stamp is None or stamp == old_stamp):
        status["lastPhaseTransitionTime"] = now


def pv_warnings(obj: Obj) -> list[str]:
    """kube's GetWarningsForPersistentVolume."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    spec = obj.get("spec") or {}
    warnings = [
        f"metadata.annotations[{key}]: {why}"
        for key, why in DEPRECATED_ANNOTATIONS
        if key in annotations
    ]
    if spec.get("persistentVolumeReclaimPolicy") == "Recycle":
        warnings.append(
            "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. "
            "Instead, the recommended approach is to use dynamic provisioning."
        )
    for i, term in enumerate(_terms(spec.get("nodeAffinity"))):
        for j, expr in enumerate((term or {}).get("matchExpressions") or []):
            key = expr.get("key") or ""
            if key in DEPRECATED_NODE_LABELS:
                at = f"spec.nodeAffinity.required.nodeSelectorTerms[{i}].matchExpressions[{j}].key"
                warnings.append(f"{at}: {key} is {DEPRECATED_NODE_LABELS[key]}")
    warnings += [
        f"spec.{at}: {why}" for key, at, why in DEPRECATED_SOURCES if spec.get(key) is not None
    ]
    return warnings
