"""The baseline level's checks (kube's pod-security-admission/policy), each revision
with the messages kube gives.  Annotation keys are the platform.io spellings."""

from __future__ import annotations

from typing import Any

from platform_api.admission.podsecurity.checks import (
    ALLOWED,
    Check,
    CheckFn,
    CheckResult,
    Obj,
    VersionedCheck,
    containers,
    containers_phrase,
    forbid,
    has,
    items,
    join_quote,
    name_of,
    pluralize,
    security_context,
    sub,
    unless_user_namespace,
)
from platform_api.validation.field import go_quote

BASELINE = "baseline"
APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.platform.io/"
SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.platform.io/pod"
SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.platform.io/"
_PROFILE_TYPES = ("RuntimeDefault", "Localhost")
DEFAULT_CAPABILITIES = frozenset(
    [
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    ]
)


def _annotations(meta: Obj) -> dict[str, Any]:
    return sub(meta, "annotations")


def _setters(pod_bad: bool, bad_containers: list[str]) -> list[str]:
    """``pod``, ``container "a"``, or both: who set a forbidden value."""
    return (["pod"] if pod_bad else []) + (
        [containers_phrase(bad_containers)] if bad_containers else []
    )


def bad_profile_type(owner: Obj, key: str) -> str | None:
    """The profile type ``owner`` (a pod spec or container) sets under its securityContext's
    ``key`` when that is neither RuntimeDefault nor Localhost; None otherwise."""
    profile = security_context(owner).get(key)
    if not isinstance(profile, dict) or profile.get("type") in _PROFILE_TYPES:
        return None
    return str(profile.get("type") or "")


def _bad_profiles(spec: Obj, key: str) -> tuple[list[str], set[str]]:
    """Who sets a forbidden profile type (``pod``, ``container "a"``) and which types."""
    pod_type = bad_profile_type(spec, key)
    values = set() if pod_type is None else {pod_type}
    bad: list[str] = []
    for c in containers(spec):
        value = bad_profile_type(c, key)
        if value is not None:
            bad.append(name_of(c))
            values.add(value)
    return _setters(pod_type is not None, bad), values


def app_armor(meta: Obj, spec: Obj) -> CheckResult:
    """AppArmor profiles: only RuntimeDefault or Localhost, in fields or annotations."""
    setters, bad_values = _bad_profiles(spec, "appArmorProfile")
    values = sorted(bad_values)
    annotations = sorted(
        f"{key}={go_quote(str(value))}"
        for key, value in _annotations(meta).items()
        if key.startswith(APPARMOR_ANNOTATION_PREFIX)
        and value
        and value != "runtime/default"
        and not str(value).startswith("localhost/")
    )
    if annotations:
        values += annotations
        setters.append(pluralize("annotation", "annotations", len(annotations)))
    if not setters:
        return ALLOWED
    return forbid(
        pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)),
        f"{' and '.join(setters)} must not set AppArmor profile type to {join_quote(values)}",
    )


def capabilities_baseline(meta: Obj, spec: Obj) -> CheckResult:
    bad: list[str] = []
    added: set[str] = set()
    for c in containers(spec):
        extra = [
            str(cap)
            for cap in items(sub(c, "securityContext", "capabilities"), "add")
            if cap not in DEFAULT_CAPABILITIES
        ]
        if extra:
            bad.append(name_of(c))
            added.update(extra)
    if not bad:
        return ALLOWED
    return forbid(
        "non-default capabilities",
        f"{containers_phrase(bad)} must not include {join_quote(sorted(added))} "
        "in securityContext.capabilities.add",
    )


def host_namespaces(meta: Obj, spec: Obj) -> CheckResult:
    shared = [f"{key}=true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    return forbid("host namespaces", ", ".join(shared)) if shared else ALLOWED


def host_path_volumes(meta: Obj, spec: Obj) -> CheckResult:
    names = [str(v.get("name") or "") for v in items(spec, "volumes") if has(v, "hostPath")]
    if not names:
        return ALLOWED
    return forbid(
        "hostPath volumes", f"{pluralize('volume', 'volumes', len(names))} {join_quote(names)}"
    )


def host_ports(meta: Obj, spec: Obj) -> CheckResult:
    bad: list[str] = []
    ports: set[str] = set()
    for c in containers(spec):
        used = [str(p["hostPort"]) for p in items(c, "ports") if p.get("hostPort")]
        if used:
            bad.append(name_of(c))
            ports.update(used)
    if not bad:
        return ALLOWED
    return forbid(
        "hostPort",
        f"{containers_phrase(bad)} {pluralize('uses', 'use', len(bad))} "
        f"{pluralize('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}",
    )


def _handler_hosts(handler: Obj) -> list[str]:
    hosts = (sub(handler, "httpGet").get("host"), sub(handler, "tcpSocket").get("host"))
    return [str(h) for h in hosts if h]


def host_probes_and_lifecycle(meta: Obj, spec: Obj) -> CheckResult:
    """Probes and lifecycle hooks must not name a host (they would reach it from the node)."""
    bad: set[str] = set()
    hosts: set[str] = set()
    for c in containers(spec):
        handlers = [sub(c, probe) for probe in ("livenessProbe", "readinessProbe", "startupProbe")]
        handlers += [sub(c, "lifecycle", hook) for hook in ("postStart", "preStop")]
        found = [host for handler in handlers for host in _handler_hosts(handler)]
        if found:
            bad.add(name_of(c))
            hosts.update(found)
    if not bad:
        return ALLOWED
    return forbid(
        "probe or lifecycle host",
        f"{containers_phrase(sorted(bad))} {pluralize('uses', 'use', len(bad))} "
        f"{pluralize('probe or lifecycle host', 'probe or lifecycle hosts', len(hosts))} "
        f"{join_quote(sorted(hosts))}",
    )


def privileged(meta: Obj, spec: Obj) -> CheckResult:
    bad = [name_of(c) for c in containers(spec) if security_context(c).get("privileged") is True]
    if not bad:
        return ALLOWED
    return forbid(
        "privileged", f"{containers_phrase(bad)} must not set securityContext.privileged=true"
    )


def proc_mount(meta: Obj, spec: Obj) -> CheckResult:
    bad: list[str] = []
    kinds: set[str] = set()
    for c in containers(spec):
        mount = security_context(c).get("procMount")
        if mount is not None and mount != "Default":
            bad.append(name_of(c))
            kinds.add(str(mount))
    if not bad:
        return ALLOWED
    return forbid(
        "procMount",
        f"{containers_phrase(bad)} must not set securityContext.procMount to "
        f"{join_quote(sorted(kinds))}",
    )


def _se_linux(allowed_types: frozenset[str]) -> CheckFn:
    def check(meta: Obj, spec: Obj) -> CheckResult:
        bad_types: set[str] = set()
        flags = {"user": False, "role": False}

        def valid(options: Any) -> bool:
            if not isinstance(options, dict):
                return True  # not set
            ok = True
            if str(options.get("type") or "") not in allowed_types:
                ok = False
                bad_types.add(str(options.get("type") or ""))
            for key in ("user", "role"):
                if options.get(key):
                    ok, flags[key] = False, True
            return ok

        pod_bad = not valid(security_context(spec).get("seLinuxOptions"))
        bad = [
            name_of(c)
            for c in containers(spec)
            if not valid(security_context(c).get("seLinuxOptions"))
        ]
        setters = _setters(pod_bad, bad)
        if not setters:
            return ALLOWED
        data = [f"{pluralize('type', 'types', len(bad_types))} {join_quote(sorted(bad_types))}"]
        data = data if bad_types else []
        data += [f"{key} may not be set" for key in ("user", "role") if flags[key]]
        return forbid(
            "seLinuxOptions",
            f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: "
            f"{'; '.join(data)}",
        )

    return check


_SELINUX_TYPES = frozenset(("", "container_t", "container_init_t", "container_kvm_t"))


def _valid_seccomp_annotation(value: str) -> bool:
    return value in ("runtime/default", "docker/default") or value.startswith("localhost/")


def seccomp_annotations(meta: Obj, spec: Obj) -> CheckResult:
    """Before v1.19, seccomp profiles were annotations."""
    annotations = _annotations(meta)
    keys = [SECCOMP_POD_ANNOTATION] + [
        SECCOMP_CONTAINER_ANNOTATION_PREFIX + name_of(c) for c in containers(spec)
    ]
    forbidden = {
        f"{key}={go_quote(str(annotations[key]))}"
        for key in keys
        if key in annotations and not _valid_seccomp_annotation(str(annotations[key]))
    }
    if not forbidden:
        return ALLOWED
    return forbid(
        "seccompProfile",
        f"forbidden {pluralize('annotation', 'annotations', len(forbidden))} "
        f"{', '.join(sorted(forbidden))}",
    )


def seccomp_fields(meta: Obj, spec: Obj) -> CheckResult:
    """From v1.19: only RuntimeDefault or Localhost, where a profile is set."""
    setters, values = _bad_profiles(spec, "seccompProfile")
    if not setters:
        return ALLOWED
    return forbid(
        "seccompProfile",
        f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
        f"{join_quote(sorted(values))}",
    )


_SAFE_SYSCTLS_1_0 = frozenset(
    (
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
    )
)
_SAFE_SYSCTLS_1_27 = _SAFE_SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
_SAFE_SYSCTLS_1_29 = _SAFE_SYSCTLS_1_27 | {
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
_SAFE_SYSCTLS_1_32 = _SAFE_SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}


def _sysctls(safe: frozenset[str]) -> CheckFn:
    def check(meta: Obj, spec: Obj) -> CheckResult:
        names = [str(s.get("name") or "") for s in items(security_context(spec), "sysctls")]
        bad = [name for name in names if name not in safe]
        return forbid("forbidden sysctls", ", ".join(bad)) if bad else ALLOWED

    return check


def windows_host_process(meta: Obj, spec: Obj) -> CheckResult:
    def host_process(obj: Obj) -> bool:
        return sub(obj, "securityContext", "windowsOptions").get("hostProcess") is True

    setters = _setters(
        host_process(spec), [name_of(c) for c in containers(spec) if host_process(c)]
    )
    if not setters:
        return ALLOWED
    return forbid(
        "hostProcess",
        f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true",
    )


def _check(check_id: str, *versions: VersionedCheck) -> Check:
    return Check(check_id, BASELINE, versions)


BASELINE_CHECKS: tuple[Check, ...] = (
    _check("appArmorProfile", VersionedCheck(0, app_armor)),
    _check("capabilities_baseline", VersionedCheck(0, capabilities_baseline)),
    _check("hostNamespaces", VersionedCheck(0, host_namespaces)),
    _check("hostPathVolumes", VersionedCheck(0, host_path_volumes)),
    _check("hostPorts", VersionedCheck(0, host_ports)),
    _check("hostProbesAndHostLifecycle", VersionedCheck(34, host_probes_and_lifecycle)),
    _check("privileged", VersionedCheck(0, privileged)),
    _check(
        "procMount",
        VersionedCheck(0, proc_mount),
        VersionedCheck(35, unless_user_namespace(proc_mount)),
    ),
    _check(
        "seLinuxOptions",
        VersionedCheck(0, _se_linux(_SELINUX_TYPES)),
        VersionedCheck(31, _se_linux(_SELINUX_TYPES | {"container_engine_t"})),
    ),
    _check(
        "seccompProfile_baseline",
        VersionedCheck(0, seccomp_annotations),
        VersionedCheck(19, seccomp_fields),
    ),
    _check(
        "sysctls",
        VersionedCheck(0, _sysctls(_SAFE_SYSCTLS_1_0)),
        VersionedCheck(27, _sysctls(_SAFE_SYSCTLS_1_27)),
        VersionedCheck(29, _sysctls(_SAFE_SYSCTLS_1_29)),
        VersionedCheck(32, _sysctls(_SAFE_SYSCTLS_1_32)),
    ),
    _check("windowsHostProcess", VersionedCheck(0, windows_host_process)),
)
