"""The rules of a pod volume's source (kube's validateVolumeSource), in the order kube
checks the sources: the first one present is validated, each further one refused.

Where kube validates a pod's source with the same function as a PersistentVolume's, the
check is pvsources.py's; the pod's own ones differ in their secret references (a name in
the pod's namespace) and in iSCSI's words for a name of no known form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.quantity import QuantityError, parse
from platform_api.registry import pvsources
from platform_api.registry.claimspec import validate_claim_spec
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import (
    is_dns1123_subdomain,
    validate_annotations,
    validate_labels,
)
from platform_api.validation.objectmeta import OBJECT_META_ORDER

Obj = dict[str, Any]
Check = Callable[[Obj, str], list[FieldError]]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
NAME_FORMS = "must be valid format starting with iqn, eui, or naa"
TOO_LONG = (
    "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
    "iscsi.initiatorName is specified."
)


def _required(source: Obj, at: str, *keys: str) -> list[FieldError]:
    return [field.required(f"{at}.{key}") for key in keys if not source.get(key)]


def _secret_name(source: Obj, at: str) -> list[FieldError]:
    """A LocalObjectReference's name, when the reference is given."""
    ref = source.get("secretRef")
    return _required(ref, f"{at}.secretRef", "name") if isinstance(ref, dict) else []


def _iscsi_name(name: str, at: str) -> list[FieldError]:
    if not name.startswith(("iqn", "eui", "naa")):
        return [field.invalid(at, name, NAME_FORMS)]
    return pvsources.iscsi_name(name, at)


def iscsi(source: Obj, at: str) -> list[FieldError]:
    """``validateISCSIVolumeSource``: the length of the volume's name with the portal
    is the caller's (kube checks it beside the source)."""
    errs = _required(source, at, "targetPortal")
    iqn = source.get("iqn") or ""
    errs += _iscsi_name(iqn, f"{at}.iqn") if iqn else [field.required(f"{at}.iqn")]
    lun = source.get("lun") or 0
    if not 0 <= lun <= 255:
        errs.append(field.invalid(f"{at}.lun", lun, pvsources.LUN_RANGE))
    chap = source.get("chapAuthDiscovery") or source.get("chapAuthSession")
    if chap and source.get("secretRef") is None:
        errs.append(field.required(f"{at}.secretRef"))
    initiator = source.get("initiatorName")
    if initiator is not None:
        errs += _iscsi_name(initiator, f"{at}.initiatorname")
    return errs


def _git_repo(source: Obj, at: str) -> list[FieldError]:
    directory = source.get("directory") or ""
    errs = _required(source, at, "repository")
    return errs + pvsources.descending_path(directory, f"{at}.directory")


def _empty_dir(source: Obj, at: str) -> list[FieldError]:
    limit = source.get("sizeLimit")
    try:
        negative = limit is not None and parse(str(limit)).value < 0
    except QuantityError:
        negative = False  # the decoder refuses what is no quantity
    if negative:
        return [
            field.forbidden(f"{at}.sizeLimit", "SizeLimit field must be a valid resource quantity")
        ]
    return []


def _cinder(source: Obj, at: str) -> list[FieldError]:
    return _required(source, at, "volumeID") + _secret_name(source, at)


def _azure_file(source: Obj, at: str) -> list[FieldError]:
    return _required(source, at, "secretName", "shareName")


def _storageos(source: Obj, at: str) -> list[FieldError]:
    name, namespace = source.get("volumeName") or "", source.get("volumeNamespace") or ""
    label = pvsources.label_errors
    errs = label(name, f"{at}.volumeName") if name else [field.required(f"{at}.volumeName")]
    if namespace:
        errs += label(namespace, f"{at}.volumeNamespace")
    return errs + _secret_name(source, at)


def _csi(source: Obj, at: str) -> list[FieldError]:
    errs = pvsources.validate_driver_name(source.get("driver") or "", f"{at}.driver")
    ref = source.get("nodePublishSecretRef")
    if isinstance(ref, dict):
        name = ref.get("name") or ""
        if not name:
            errs.append(field.required(f"{at}.nodePublishSecretRef.name"))
        else:  # kube names the source's path here, not the reference's
            errs += [field.invalid(f"{at}.name", name, m) for m in is_dns1123_subdomain(name)]
    return errs


def _glusterfs(source: Obj, at: str) -> list[FieldError]:
    return _required(source, at, "endpoints", "path")


def image(source: Obj, at: str, pod: bool) -> list[FieldError]:
    """``validateImageVolumeSource``: a template may leave the reference to be filled."""
    errs = _required(source, at, "reference") if pod else []
    policy = source.get("pullPolicy") or ""
    if not policy:
        errs.append(field.required(f"{at}.pullPolicy"))
    elif policy not in PULL_POLICIES:
        errs.append(field.not_supported(f"{at}.pullPolicy", policy, PULL_POLICIES))
    return errs


def _ephemeral(source: Obj, at: str) -> list[FieldError]:
    template = source.get("volumeClaimTemplate")
    if not isinstance(template, dict):
        return [field.required(f"{at}.volumeClaimTemplate")]
    at = f"{at}.volumeClaimTemplate"
    meta = template.get("metadata") or {}
    errs = validate_annotations(meta.get("annotations") or {}, f"{at}.metadata.annotations")
    errs += validate_labels(meta.get("labels") or {}, f"{at}.metadata.labels")
    for key in OBJECT_META_ORDER:  # kube's ValidateTemplateObjectMeta: nothing else set
        if key not in ("labels", "annotations") and meta.get(key) not in (None, "", 0):
            name = "uID" if key == "uid" else key  # the Go field's name, lower-cased first
            errs.append(field.forbidden(f"{at}.metadata.{name}", "cannot be set"))
    return errs + validate_claim_spec(template.get("spec") or {}, f"{at}.spec")


# The sources checked here, by key (podvolumes.py checks the common ones).
CHECKS: dict[str, Check] = {
    "gitRepo": _git_repo,
    "emptyDir": _empty_dir,
    "gcePersistentDisk": pvsources.gce_disk,
    "awsElasticBlockStore": pvsources.aws_disk,
    "nfs": pvsources.nfs,
    "iscsi": iscsi,
    "glusterfs": _glusterfs,
    "flocker": pvsources.flocker,
    "rbd": pvsources.rbd,
    "cinder": _cinder,
    "cephfs": pvsources.cephfs,
    "quobyte": pvsources.quobyte,
    "fc": pvsources.fc,
    "flexVolume": pvsources.flex,
    "azureFile": _azure_file,
    "vsphereVolume": pvsources.one_field("volumePath"),
    "photonPersistentDisk": pvsources.one_field("pdID"),
    "portworxVolume": pvsources.one_field("volumeID"),
    "azureDisk": pvsources.azure_disk,
    "storageos": _storageos,
    "scaleIO": pvsources.scale_io,
    "csi": _csi,
    "ephemeral": _ephemeral,
}
