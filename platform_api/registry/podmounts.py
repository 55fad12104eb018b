"""A container's volume mounts and block devices, as kube's ValidateVolumeMounts and
ValidateVolumeDevices check them: each names a volume of the pod, once, at a path of its
own; a device only a claim's (or an ephemeral claim's); no name or path as both a mount
and a device; propagation and recursive read-only as the container allows.

Several of kube's paths here name the list rather than the item (``volumeMounts.subPath``):
kept as kube writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from platform_api.registry.pvsources import descending_path, no_backsteps
from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
PROPAGATIONS = ["Bidirectional", "HostToContainer", "None"]
RECURSIVE_READ_ONLY = ["Disabled", "Enabled", "IfPossible"]


def validate_mounts(container: Obj, at: str, volumes: Mapping[str, Obj]) -> list[FieldError]:
    mounts = [m for m in container.get("volumeMounts") or [] if isinstance(m, dict)]
    devices = [d for d in container.get("volumeDevices") or [] if isinstance(d, dict)]
    device_paths = {d.get("name", ""): d.get("devicePath", "") for d in devices}
    mount_paths = {m.get("name", ""): m.get("mountPath", "") for m in mounts}
    errs: list[FieldError] = []
    taken: set[str] = set()
    for i, mount in enumerate(mounts):
        where = f"{at}.volumeMounts[{i}]"
        path = mount.get("mountPath", "")
        errs += _mount_target(mount, where, volumes)
        if path in taken:
            errs.append(field.invalid(f"{where}.mountPath", path, "must be unique"))
        taken.add(path)
        errs += _mount_rest(mount, where, f"{at}.volumeMounts", device_paths, container)
    return errs + _devices(devices, f"{at}.volumeDevices", volumes, mount_paths)


def _mount_target(mount: Obj, where: str, volumes: Mapping[str, Obj]) -> list[FieldError]:
    name, path = mount.get("name", ""), mount.get("mountPath", "")
    errs = [] if name else [field.required(f"{where}.name")]
    if name not in volumes:
        errs.append(field.not_found(f"{where}.name", name))
    return errs + ([] if path else [field.required(f"{where}.mountPath")])


def _mount_rest(
    mount: Obj, where: str, at: str, devices: dict[str, str], container: Obj
) -> list[FieldError]:
    """What follows the path's uniqueness: overlaps with devices, sub-paths (kube names
    those and the modes under the list, ``at``), propagation, recursive read-only."""
    name, path = mount.get("name", ""), mount.get("mountPath", "")
    errs: list[FieldError] = []
    if name in devices:
        errs.append(field.invalid(f"{where}.name", name, "must not already exist in volumeDevices"))
    if path in devices.values():
        why = "must not already exist as a path in volumeDevices"
        errs.append(field.invalid(f"{where}.mountPath", path, why))
    sub, expr = mount.get("subPath", ""), mount.get("subPathExpr", "")
    errs += descending_path(sub, f"{at}.subPath") if sub else []
    if expr:
        if sub:
            why = "subPathExpr and subPath are mutually exclusive"
            errs.append(field.invalid(f"{where}.subPathExpr", expr, why))
        errs += descending_path(expr, f"{at}.subPathExpr")
    return errs + _propagation(mount, container, at) + _recursive_read_only(mount, at)


def _propagation(mount: Obj, container: Obj, at: str) -> list[FieldError]:
    mode = mount.get("mountPropagation")
    if mode is None:
        return []
    errs: list[FieldError] = []
    if mode not in PROPAGATIONS:
        errs.append(field.not_supported(f"{at}.mountPropagation", mode, PROPAGATIONS))
    privileged = (container.get("securityContext") or {}).get("privileged") is True
    if mode == "Bidirectional" and not privileged:
        why = "Bidirectional mount propagation is available only to privileged containers"
        errs.append(field.forbidden(f"{at}.mountPropagation", why))
    return errs


def _recursive_read_only(mount: Obj, at: str) -> list[FieldError]:
    mode, where = mount.get("recursiveReadOnly"), f"{at}.recursiveReadOnly"
    if mode is None or mode == "Disabled":
        return []
    if mode not in RECURSIVE_READ_ONLY:
        return [field.not_supported(where, mode, RECURSIVE_READ_ONLY)]
    errs = (
        []
        if mount.get("readOnly")
        else [field.forbidden(where, "may only be specified when readOnly is true")]
    )
    if mount.get("mountPropagation") not in (None, "None"):
        why = "may only be specified when mountPropagation is None or not specified"
        errs.append(field.forbidden(where, why))
    return errs


def _devices(
    devices: list[Obj], at: str, volumes: Mapping[str, Obj], mounts: dict[str, str]
) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    paths: set[str] = set()
    for i, device in enumerate(devices):
        where = f"{at}[{i}]"
        name, path = device.get("name", ""), device.get("devicePath", "")
        volume = volumes.get(name)
        if not name:
            errs.append(field.required(f"{where}.name"))
        if name in names:
            errs.append(field.invalid(f"{where}.name", name, "must be unique"))
        if volume is not None and not _claimed(volume):
            why = "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"
            errs.append(field.invalid(f"{where}.name", name, why))
        if volume is None:
            errs.append(field.not_found(f"{where}.name", name))
        if not path:
            errs.append(field.required(f"{where}.devicePath"))
        if path in paths:
            errs.append(field.invalid(f"{where}.devicePath", path, "must be unique"))
        if path and no_backsteps(path, f"{at}.devicePath"):
            why = "can not contain backsteps ('..')"
            errs.append(field.invalid(f"{where}.devicePath", path, why))
        else:
            paths.add(path)
        if name in mounts:
            errs.append(
                field.invalid(f"{where}.name", name, "must not already exist in volumeMounts")
            )
        if path in mounts.values():
            why = "must not already exist as a path in volumeMounts"
            errs.append(field.invalid(f"{where}.devicePath", path, why))
        if name:
            names.add(name)
    return errs


def _claimed(volume: Obj) -> bool:
    return volume.get("persistentVolumeClaim") is not None or volume.get("ephemeral") is not None
