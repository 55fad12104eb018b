"""Security contexts of pods and containers (kube's validatePodSpecSecurityContext and
ValidateSecurityContext): user and group IDs, sysctls, seccomp and AppArmor profiles,
Windows options, in kube's order and words."""

from __future__ import annotations

import re
from typing import Any

import orjson

from platform_api.registry import capabilities
from platform_api.registry.gointernal import go_text
from platform_api.registry.pvsources import descending_path
from platform_api.validation import field, podoptions
from platform_api.validation.field import FieldError, GoText, in_range
from platform_api.validation.names import is_dns1123_subdomain

Obj = dict[str, Any]
ID_RANGE = (0, 2147483647)
PROFILE_TYPES = ["Localhost", "RuntimeDefault", "Unconfined"]
PROC_MOUNTS = ["Default", "Unmasked"]
FS_GROUP_POLICIES = ["Always", "OnRootMismatch"]
SUPPLEMENTAL_GROUPS_POLICIES = ["Merge", "Strict"]
SELINUX_CHANGE_POLICIES = ["Recursive"]
SYSCTL_MAX = 253
_SYSCTL_PATTERN = r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
_SYSCTL = re.compile(_SYSCTL_PATTERN)
# Sysctls a pod's own network or IPC namespace holds (kube's NamespacedBy).
_IPC_PREFIXES = ("kernel.shm", "kernel.msg", "fs.mqueue.")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_USER_CHARS = re.compile(r'["/\\:;|=,+*?<>@\[\]]')
_DOTS_SPACES = re.compile(r"^[\. ]+\Z")
_NETBIOS = re.compile(r'^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}\Z')
_DNS_LABEL = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_DNS_DOMAIN = re.compile(f"^{_DNS_LABEL}(?:\\.{_DNS_LABEL})*\\Z")
GMSA_SPEC_MAX = 64 * 1024


def pod_security_context(context: Obj, spec: Obj, at: str) -> list[FieldError]:
    """``validatePodSpecSecurityContext``."""
    errs = _ids(context, at, ("fsGroup", "runAsUser", "runAsGroup"))
    for i, group in enumerate(context.get("supplementalGroups") or []):
        errs += in_range(f"{at}.supplementalGroups[{i}]", group, *ID_RANGE)
    if spec.get("hostPID") and spec.get("shareProcessNamespace"):
        why = "ShareProcessNamespace and HostPID cannot both be enabled"
        errs.append(field.invalid(f"{at}.shareProcessNamespace", True, why))
    errs += _sysctls(context.get("sysctls") or [], spec, f"{at}.sysctls")
    policy = context.get("fsGroupChangePolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(field.not_supported(f"{at}.fsGroupChangePolicy", policy, FS_GROUP_POLICIES))
    errs += _profiles(context, at)
    # kube v1.36 takes only Recursive while its SELinuxMount gate is off (the default).
    for key, supported in (
        ("supplementalGroupsPolicy", SUPPLEMENTAL_GROUPS_POLICIES),
        ("seLinuxChangePolicy", SELINUX_CHANGE_POLICIES),
    ):
        value = context.get(key)
        if value is not None and value not in supported:
            errs.append(field.not_supported(f"{at}.{key}", value, supported))
    return errs


def _windows_host_process(context: Any) -> bool | None:
    options = context.get("windowsOptions") if isinstance(context, dict) else None
    value = options.get("hostProcess") if isinstance(options, dict) else None
    return value if isinstance(value, bool) else None


def windows_host_process_rules(spec: Obj, path: str) -> list[FieldError]:
    """kube's validateWindowsHostProcessPod: a pod's containers are all host processes
    or none, agree with the pod's setting, share the host's network, and need
    ``--allow-privileged``."""
    errs: list[FieldError] = []
    pod_value = _windows_host_process(spec.get("securityContext"))
    count = host_processes = 0
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, container in enumerate(spec.get(key) or []):
            count += 1
            mine = _windows_host_process((container or {}).get("securityContext"))
            if pod_value is not None and mine is not None and mine != pod_value:
                at = f"{path}.{key}[{i}].securityContext.windowsOptions.hostProcess"
                why = f"pod hostProcess value must be identical if both are specified, was {str(pod_value).lower()}"
                errs.append(field.invalid(at, mine, why))
            host_processes += bool(mine) if mine is not None else bool(pod_value)
    if host_processes:
        if host_processes != count:
            why = "If pod contains any hostProcess containers then all containers must be HostProcess containers"
            errs.append(field.invalid(path, "", why))
        if spec.get("hostNetwork") is not True:
            why = "hostNetwork must be true if pod contains any hostProcess containers"
            errs.append(field.invalid(f"{path}.hostNetwork", False, why))
        if not capabilities.get().allow_privileged:
            why = "hostProcess containers are disallowed by cluster policy"
            errs.append(field.forbidden(path, why))
    return errs


def host_users_rules(spec: Obj, path: str) -> list[FieldError]:
    """kube's validateHostUsers: a pod in its own user namespace shares none of the
    host's (its network, with UserNamespacesHostNetworkSupport), and mounts no block
    devices, which cannot be id-mapped.  kube writes ``HostPID`` and ``HostIPC`` so."""
    if spec.get("hostUsers") is not False:
        return []
    forbidden = "when `hostUsers` is false"
    shared = [("hostPID", "HostPID"), ("hostIPC", "HostIPC")]
    if not podoptions.current().userns_host_network:
        shared.insert(0, ("hostNetwork", "hostNetwork"))
    errs = [
        field.forbidden(f"{path}.{name}", forbidden)
        for key, name in shared
        if spec.get(key) is True
    ]
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, container in enumerate(spec.get(key) or []):
            if isinstance(container, dict) and container.get("volumeDevices"):
                errs.append(field.forbidden(f"{path}.{key}[{i}].volumeDevices", forbidden))
    return errs


def container_security_context(context: Obj, at: str, host_users: bool) -> list[FieldError]:
    """``ValidateSecurityContext``.  ``host_users``: the pod shares the host's user
    namespace."""
    errs: list[FieldError] = []
    if context.get("privileged") is True and not capabilities.get().allow_privileged:
        errs.append(field.forbidden(f"{at}.privileged", "disallowed by cluster policy"))
    errs += _ids(context, at, ("runAsUser", "runAsGroup"))
    mount = context.get("procMount")
    if mount is not None and mount not in PROC_MOUNTS:
        errs.append(field.not_supported(f"{at}.procMount", mount, PROC_MOUNTS))
    if host_users and mount == "Unmasked":
        why = "`hostUsers` must be false to use `Unmasked`"
        errs.append(field.invalid(f"{at}.procMount", mount, why))
    if isinstance(context.get("seccompProfile"), dict):
        errs += _seccomp(context["seccompProfile"], f"{at}.seccompProfile")
    return errs + _escalation(context, at) + _platform_profiles(context, at)


def _escalation(context: Obj, at: str) -> list[FieldError]:
    """No escalation refused while privileges or CAP_SYS_ADMIN are granted; kube's
    message shows the whole context as its internal Go type."""
    if context.get("allowPrivilegeEscalation") is not False:
        return []
    reasons = []
    if context.get("privileged") is True:
        reasons.append("cannot set `allowPrivilegeEscalation` to false and `privileged` to true")
    added = (context.get("capabilities") or {}).get("add") or []
    why = "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"
    reasons += [why for capability in added if capability == "CAP_SYS_ADMIN"]
    if not reasons:
        return []
    shown = go_text("core.SecurityContext", context)
    return [field.invalid(at, shown, reason) for reason in reasons]


def _ids(context: Obj, at: str, keys: tuple[str, ...]) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in keys:
        errs += in_range(f"{at}.{key}", context.get(key), *ID_RANGE)
    return errs


def _profiles(context: Obj, at: str) -> list[FieldError]:
    """Seccomp, Windows options and AppArmor, in that order for pods and containers."""
    errs: list[FieldError] = []
    if isinstance(context.get("seccompProfile"), dict):
        errs += _seccomp(context["seccompProfile"], f"{at}.seccompProfile")
    return errs + _platform_profiles(context, at)


def _platform_profiles(context: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if isinstance(context.get("windowsOptions"), dict):
        errs += _windows(context["windowsOptions"], f"{at}.windowsOptions")
    if isinstance(context.get("appArmorProfile"), dict):
        errs += _apparmor(context["appArmorProfile"], f"{at}.appArmorProfile")
    return errs


def _sysctls(sysctls: list[Obj], spec: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, sysctl in enumerate(sysctls):
        name, path = sysctl.get("name", ""), f"{at}[{i}].name"
        if not name:
            errs.append(field.required(path))
        elif len(name) > SYSCTL_MAX or not _SYSCTL.fullmatch(name):
            why = f"must have at most {SYSCTL_MAX} characters and match regex {_SYSCTL_PATTERN}"
            errs.append(field.invalid(path, name, why))
        elif name in names:
            errs.append(field.duplicate(path, name))
        host = _host_namespace(name, spec)
        if host:
            errs.append(field.invalid(path, name, f"may not be specified when '{host}' is true"))
        names.add(name)
    return errs


def _host_namespace(name: str, spec: Obj) -> str:
    """The host namespace flag that forbids ``name`` ("" when none does)."""
    dot, slash = name.find("."), name.find("/")
    if slash != -1 and (dot == -1 or slash < dot):  # kube's NormalizeName: / separates
        name = name.replace(".", "\0").replace("/", ".").replace("\0", "/")
    if spec.get("hostNetwork") and name.startswith("net."):
        return "hostNetwork"
    if spec.get("hostIPC") and (name == "kernel.sem" or name.startswith(_IPC_PREFIXES)):
        return "hostIPC"
    return ""


def _seccomp(profile: Obj, at: str) -> list[FieldError]:
    kind = profile.get("type", "")
    errs: list[FieldError] = []
    if not kind:
        errs.append(field.required(f"{at}.type", "type is required when seccompProfile is set"))
    elif kind not in PROFILE_TYPES:
        errs.append(field.not_supported(f"{at}.type", kind, PROFILE_TYPES))
    local = profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None:
            why = "must be set when seccomp type is Localhost"
            errs.append(field.required(f"{at}.localhostProfile", why))
        else:
            errs += descending_path(local, f"{at}.localhostProfile")
    elif local is not None:
        struct = GoText(orjson.dumps({"Type": kind, "LocalhostProfile": local}).decode())
        why = "can only be set when seccomp type is Localhost"
        errs.append(field.invalid(f"{at}.localhostProfile", struct, why))
    return errs


def _apparmor(profile: Obj, at: str) -> list[FieldError]:
    kind, local = profile.get("type", ""), profile.get("localhostProfile")
    needed = "must be set when AppArmor type is Localhost"
    if kind == "Localhost":
        if local is None or local == "":
            return [field.required(f"{at}.localhostProfile", needed)]
        errs = []
        if local.strip() != local:
            errs.append(
                field.invalid(f"{at}.localhostProfile", local, "must not be padded with whitespace")
            )
        if len(local) > 4095:
            errs.append(field.too_long(f"{at}.localhostProfile", 4095))
        return errs
    if kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            why = "can only be set when AppArmor type is Localhost"
            return [field.invalid(f"{at}.localhostProfile", local, why)]
        return []
    if not kind:
        return [field.required(f"{at}.type", "type is required when appArmorProfile is set")]
    return [field.not_supported(f"{at}.type", kind, PROFILE_TYPES)]


def _windows(options: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = options.get("gmsaCredentialSpecName")
    if name is not None:
        errs += [
            field.invalid(f"{at}.gmsaCredentialSpecName", name, m)
            for m in is_dns1123_subdomain(name)
        ]
    spec = options.get("gmsaCredentialSpec")
    if spec is not None:
        if not spec:
            why = "gmsaCredentialSpec cannot be an empty string"
            errs.append(field.invalid(f"{at}.gmsaCredentialSpec", spec, why))
        elif len(spec.encode()) > GMSA_SPEC_MAX:
            why = "gmsaCredentialSpec size must be under 64 KiB"
            errs.append(field.invalid(f"{at}.gmsaCredentialSpec", spec, why))
    user = options.get("runAsUserName")
    if user is not None:
        path = f"{at}.runAsUserName"
        errs += [field.invalid(path, user, why) for why in _run_as_user_name(user)]
    return errs


def _run_as_user_name(value: str) -> list[str]:
    """Why a Windows ``DOMAIN\\user`` name is refused, each reason kube gives."""
    if not value:
        return ["runAsUserName cannot be an empty string"]
    if _CONTROL.search(value):
        return ["runAsUserName cannot contain control characters"]
    parts = value.split("\\")
    if len(parts) > 2:
        return ["runAsUserName cannot contain more than one backslash"]
    domain, user = (parts[0], parts[1]) if len(parts) == 2 else ("", parts[0])
    whys = []
    if len(domain) >= 256:
        whys.append("runAsUserName's Domain length must be under 256 characters")
    if len(parts) == 2 and not (_NETBIOS.match(domain) or _DNS_DOMAIN.match(domain)):
        whys.append("runAsUserName's Domain doesn't match the NetBios nor the DNS format")
    if not user:
        whys.append("runAsUserName's User cannot be empty")
    elif len(user) > 104:
        whys.append("runAsUserName's User length must not be longer than 104 characters")
    if _DOTS_SPACES.match(user):
        whys.append("runAsUserName's User cannot contain only periods or spaces")
    if _USER_CHARS.search(user):
        whys.append(
            "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]"
        )
    return whys
