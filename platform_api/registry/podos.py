"""What a pod's operating system rules out (kube's validateLinux and validateWindows):
Windows options in a Linux pod; the Linux-only security settings of the pod and of
each container (init, regular, ephemeral, in that order) in a Windows pod."""

from __future__ import annotations

from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
NOT_WINDOWS = "cannot be set for a windows pod"
NOT_LINUX = "windows options cannot be set for a linux pod"
# The pod's Linux-only settings in kube's order: (where v1 keeps it, whether any
# value counts as set, not only a true one).  kube's internal PodSecurityContext holds
# the host namespace fields; v1 keeps them on the spec, where kube names them.
_POD_SETTINGS: tuple[tuple[str, bool], ...] = (
    ("securityContext.appArmorProfile", True),
    ("securityContext.seLinuxOptions", True),
    ("hostUsers", True),
    ("hostPID", False),
    ("hostIPC", False),
    ("securityContext.seccompProfile", True),
    ("securityContext.fsGroup", True),
    ("securityContext.fsGroupChangePolicy", True),
    ("securityContext.sysctls", False),
    ("shareProcessNamespace", True),
    ("securityContext.runAsUser", True),
    ("securityContext.runAsGroup", True),
    ("securityContext.supplementalGroups", True),
    ("securityContext.supplementalGroupsPolicy", True),
    ("securityContext.seLinuxChangePolicy", True),
)
_CONTAINER_SETTINGS = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
)


def validate_os_rules(spec: Obj, path: str) -> list[FieldError]:
    """The rules of the pod's declared OS (a valid ``os.name``; none without one)."""
    name = (spec.get("os") or {}).get("name")
    if name == "linux":
        return _linux(spec, path)
    if name == "windows":
        return _windows(spec, path)
    return []


def _containers(spec: Obj, path: str) -> list[tuple[Obj, str]]:
    """Every container with its path, as kube's VisitContainersWithPath orders them."""
    out = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, container in enumerate(spec.get(key) or []):
            if isinstance(container, dict):
                out.append((container, f"{path}.{key}[{i}]"))
    return out


def _linux(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if (spec.get("securityContext") or {}).get("windowsOptions") is not None:
        errs.append(field.forbidden(f"{path}.securityContext.windowsOptions", NOT_LINUX))
    for container, at in _containers(spec, path):
        if (container.get("securityContext") or {}).get("windowsOptions") is not None:
            errs.append(field.forbidden(f"{at}.securityContext.windowsOptions", NOT_LINUX))
    return errs


def _windows(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, any_value in _POD_SETTINGS:
        value = _at(spec, key)
        if (value is not None) if any_value else bool(value):
            errs.append(field.forbidden(f"{path}.{key}", NOT_WINDOWS))
    for container, at in _containers(spec, path):
        context = container.get("securityContext") or {}
        for key in _CONTAINER_SETTINGS:
            if context.get(key) is not None:
                errs.append(field.forbidden(f"{at}.securityContext.{key}", NOT_WINDOWS))
    return errs


def _at(spec: Obj, dotted: str) -> Any:
    value: Any = spec
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value
