"""A pod's volumes, as kube's ValidateVolumes checks them: names, one source each, and
the rules of that source: the common ones here (secrets, config maps, host paths,
claims: projections' keys, paths and modes), the others in podvolumesources.py.
"""

from __future__ import annotations

from typing import Any

from platform_api.gotext import json_string
from platform_api.registry.imagerefs import pull_policy
from platform_api.registry.podprojections import (
    default_projections,
    default_selectors,
    downward_api,
    file_mode,
    key_path,
    projected,
)
from platform_api.registry.podvolumesources import CHECKS, TOO_LONG, image
from platform_api.registry.pvsources import host_path
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1123_label, is_dns1123_subdomain

Obj = dict[str, Any]
# Every VolumeSource member, in the order kube checks them: the first present is
# validated, each further one refused (under kube's name for it, two misspelt).
SOURCES = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
)
_REFUSED_AS = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}
# The path a source's own fields are named under, where it is not its key.
_CHECKED_AS = {"gcePersistentDisk": "persistentDisk"}


def validate_volumes(
    volumes: list[Obj], path: str, pod_name: str | None = None
) -> tuple[dict[str, Obj], list[FieldError]]:
    """The pod's valid volumes by name (a mount of any other is not found) and the
    volumes' errors: each one's source first, then its name, as kube orders them.
    ``pod_name``: a pod's, None for a template (a pod's ephemeral volumes' claims are
    named after it; a template's image volume may leave its reference to be filled)."""
    valid: dict[str, Obj] = {}
    errs: list[FieldError] = []
    for i, volume in enumerate(volumes):
        at = f"{path}[{i}]"
        name = volume.get("name", "")
        found = _source(volume, at, pod_name)
        found += field.checked(f"{at}.name", name, is_dns1123_label)
        if name in valid:
            found.append(field.duplicate(f"{at}.name", name))
        if found:
            errs += found
        else:
            valid[name] = volume
    return valid, errs


def _source(volume: Obj, at: str, pod_name: str | None) -> list[FieldError]:
    errs: list[FieldError] = []
    present = [key for key in SOURCES if volume.get(key) is not None]
    for i, key in enumerate(present):
        source = volume[key] if isinstance(volume[key], dict) else {}
        if i:
            why = "may not specify more than 1 volume type"
            errs.append(field.forbidden(f"{at}.{_REFUSED_AS.get(key, key)}", why))
        elif key == "image":
            errs += image(source, f"{at}.image", pod=pod_name is not None)
        else:
            check = _CHECKS.get(key) or CHECKS.get(key)
            errs += check(source, f"{at}.{_CHECKED_AS.get(key, key)}") if check else []
        errs += _named_after(key, source, volume.get("name", ""), pod_name, at)
    if not present:
        return [field.required(at, "must specify a volume type")]
    return errs


def _named_after(
    key: str, source: Obj, name: str, pod_name: str | None, at: str
) -> list[FieldError]:
    """kube's checks of the volume's name beside its source: an iSCSI initiator's
    ``<volume>:<portal>`` and an ephemeral volume's claim name, ``<pod>-<volume>``."""
    portal = source.get("targetPortal") or ""
    if key == "iscsi" and source.get("initiatorName") is not None and len(f"{name}:{portal}") > 64:
        return [field.invalid(f"{at}.name", name, TOO_LONG)]
    if key == "ephemeral" and pod_name and name:
        claim = f"{pod_name}-{name}"
        why = f"PVC name {json_string(claim)}: "
        return [field.invalid(f"{at}.name", name, why + m) for m in is_dns1123_subdomain(claim)]
    return []


def _secret(source: Obj, at: str) -> list[FieldError]:
    errs = [] if source.get("secretName") else [field.required(f"{at}.secretName")]
    return errs + file_mode(source, "defaultMode", at) + _items(source, at)


def _config_map(source: Obj, at: str) -> list[FieldError]:
    errs = [] if source.get("name") else [field.required(f"{at}.name")]
    return errs + file_mode(source, "defaultMode", at) + _items(source, at)


def _items(source: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, item in enumerate(source.get("items") or []):
        errs += key_path(item if isinstance(item, dict) else {}, f"{at}.items[{i}]")
    return errs


def _claim(source: Obj, at: str) -> list[FieldError]:
    return [] if source.get("claimName") else [field.required(f"{at}.claimName")]


_CHECKS = {
    "secret": _secret,
    "configMap": _config_map,
    "downwardAPI": downward_api,
    "projected": projected,
    "hostPath": host_path,
    "persistentVolumeClaim": _claim,
}


def default_volumes(volumes: list[Obj]) -> None:
    """kube's SetDefaults for volumes: no source means an emptyDir; projections of
    files get mode 0644, their selectors and tokens theirs; an image its pull policy."""
    for volume in volumes:
        if not any(volume.get(key) is not None for key in SOURCES):
            volume["emptyDir"] = {}
        for key in ("secret", "configMap", "downwardAPI", "projected"):
            source = volume.get(key)
            if isinstance(source, dict):
                source.setdefault("defaultMode", 0o644)
        for item in (volume.get("downwardAPI") or {}).get("items") or []:
            default_selectors(item)
        default_projections((volume.get("projected") or {}).get("sources") or [])
        host = volume.get("hostPath")
        if isinstance(host, dict):
            host.setdefault("type", "")
        image_source = volume.get("image")
        if isinstance(image_source, dict) and not image_source.get("pullPolicy"):
            image_source["pullPolicy"] = pull_policy(image_source.get("reference") or "")
