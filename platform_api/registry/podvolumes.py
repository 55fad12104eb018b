"""A pod's volumes, as kube's ValidateVolumes checks them: names, one source each, and
the fields the common sources cannot do without (projections' keys, paths and modes).

Sources this server has no special rule for are accepted as the schema decoded them.
"""

from __future__ import annotations

from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1123_label

Obj = dict[str, Any]
# Every VolumeSource member, in kube's order: the second one present is refused.
SOURCES = (
    "hostPath",
    "emptyDir",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)
MODE_RANGE = "must be a number between 0 and 0777 (octal), both inclusive"


def validate_volumes(volumes: list[Obj], path: str) -> tuple[set[str], list[FieldError]]:
    """The names of the pod's valid volumes (a mount of any other is not found) and the
    volumes' errors: each one's source first, then its name, as kube orders them."""
    names: set[str] = set()
    errs: list[FieldError] = []
    for i, volume in enumerate(volumes):
        at = f"{path}[{i}]"
        name = volume.get("name", "")
        found = _source(volume, at) + field.checked(f"{at}.name", name, is_dns1123_label)
        if name in names:
            found.append(field.duplicate(f"{at}.name", name))
        if found:
            errs += found
        else:
            names.add(name)
    return names, errs


def _source(volume: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    present = [key for key in SOURCES if volume.get(key) is not None]
    for extra in present[1:]:
        errs.append(field.forbidden(f"{at}.{extra}", "may not specify more than 1 volume type"))
    if not present:
        return [field.required(at, "must specify a volume type")]
    key = present[0]
    check = _CHECKS.get(key)
    return (check(volume[key], f"{at}.{key}") if check else []) + errs


def _secret(source: Obj, at: str) -> list[FieldError]:
    errs = [] if source.get("secretName") else [field.required(f"{at}.secretName")]
    return errs + _mode(source, "defaultMode", at) + _items(source, at)


def _config_map(source: Obj, at: str) -> list[FieldError]:
    errs = [] if source.get("name") else [field.required(f"{at}.name")]
    return errs + _mode(source, "defaultMode", at) + _items(source, at)


def _items(source: Obj, at: str) -> list[FieldError]:
    """``validateKeyToPath`` for each projected key."""
    errs: list[FieldError] = []
    for i, item in enumerate(source.get("items") or []):
        where = f"{at}.items[{i}]"
        if not item.get("key"):
            errs.append(field.required(f"{where}.key"))
        target = item.get("path", "")
        if not target:
            errs.append(field.required(f"{where}.path"))
        errs += non_reserved_path(target, f"{where}.path")
        errs += _mode(item, "mode", where)
    return errs


def _mode(source: Obj, key: str, at: str) -> list[FieldError]:
    mode = source.get(key)
    if isinstance(mode, int) and not 0 <= mode <= 0o777:
        return [field.invalid(f"{at}.{key}", mode, MODE_RANGE)]
    return []


def descending_path(path: str, at: str) -> list[FieldError]:
    """``validateLocalDescendingPath``: relative, without a ``..`` element."""
    errs = []
    if path.startswith("/"):
        errs.append(field.invalid(at, path, "must be a relative path"))
    if ".." in path.split("/"):
        errs.append(field.invalid(at, path, "must not contain '..'"))
    return errs


def non_reserved_path(path: str, at: str) -> list[FieldError]:
    """``ValidateLocalNonReservedPath``: a descending path not starting with ``..``
    (the kubelet's own ``..data`` links)."""
    errs = descending_path(path, at)
    if not errs and path.startswith(".."):
        errs.append(field.invalid(at, path, "must not start with '..'"))
    return errs


def _host_path(source: Obj, at: str) -> list[FieldError]:
    return [] if source.get("path") else [field.required(f"{at}.path")]


def _claim(source: Obj, at: str) -> list[FieldError]:
    return [] if source.get("claimName") else [field.required(f"{at}.claimName")]


_CHECKS = {
    "secret": _secret,
    "configMap": _config_map,
    "hostPath": _host_path,
    "persistentVolumeClaim": _claim,
}


def default_volumes(volumes: list[Obj]) -> None:
    """kube's SetDefaults for volumes: no source means an emptyDir; projections of
    files get mode 0644."""
    for volume in volumes:
        if not any(volume.get(key) is not None for key in SOURCES):
            volume["emptyDir"] = {}
        for key in ("secret", "configMap", "downwardAPI", "projected"):
            source = volume.get(key)
            if isinstance(source, dict):
                source.setdefault("defaultMode", 0o644)
        for item in (volume.get("downwardAPI") or {}).get("items") or []:
            if isinstance(item.get("fieldRef"), dict):
                item["fieldRef"].setdefault("apiVersion", "v1")
        host = volume.get("hostPath")
        if isinstance(host, dict):
            host.setdefault("type", "")
