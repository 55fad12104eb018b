"""The restricted level's checks (kube's pod-security-admission/policy), on top of the
baseline ones they do not override, each revision with kube's messages."""

from __future__ import annotations

from platform_api.admission.podsecurity.checks import (
    ALLOWED,
    Check,
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
    unless_windows,
)
from platform_api.admission.podsecurity.checks_baseline import bad_profile_type, proc_mount

RESTRICTED = "restricted"
# Inline volume sources the restricted level allows; any other is named in the message.
_ALLOWED_VOLUMES = (
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
)
_RESTRICTED_VOLUMES = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
)


def allow_privilege_escalation(meta: Obj, spec: Obj) -> CheckResult:
    bad = [
        name_of(c)
        for c in containers(spec)
        if security_context(c).get("allowPrivilegeEscalation") is not False
    ]
    if not bad:
        return ALLOWED
    return forbid(
        "allowPrivilegeEscalation != false",
        f"{containers_phrase(bad)} must set securityContext.allowPrivilegeEscalation=false",
    )


def capabilities_restricted(meta: Obj, spec: Obj) -> CheckResult:
    """Every container drops ALL and adds back at most NET_BIND_SERVICE."""
    missing_drop: list[str] = []
    adding: list[str] = []
    added: set[str] = set()
    for c in containers(spec):
        if not has(security_context(c), "capabilities"):
            missing_drop.append(name_of(c))
            continue
        caps = sub(c, "securityContext", "capabilities")
        if "ALL" not in items(caps, "drop"):
            missing_drop.append(name_of(c))
        extra = [str(cap) for cap in items(caps, "add") if cap != "NET_BIND_SERVICE"]
        if extra:
            adding.append(name_of(c))
            added.update(extra)
    details = []
    if missing_drop:
        details.append(
            f'{containers_phrase(missing_drop)} must set securityContext.capabilities.drop=["ALL"]'
        )
    if adding:
        details.append(
            f"{containers_phrase(adding)} must not include {join_quote(sorted(added))} "
            "in securityContext.capabilities.add"
        )
    return forbid("unrestricted capabilities", "; ".join(details)) if details else ALLOWED


def restricted_volumes(meta: Obj, spec: Obj) -> CheckResult:
    bad: list[str] = []
    kinds: set[str] = set()
    for volume in items(spec, "volumes"):
        if any(has(volume, key) for key in _ALLOWED_VOLUMES):
            continue
        bad.append(str(volume.get("name") or ""))
        kinds.add(next((k for k in _RESTRICTED_VOLUMES if has(volume, k)), "unknown"))
    if not bad:
        return ALLOWED
    return forbid(
        "restricted volume types",
        f"{pluralize('volume', 'volumes', len(bad))} {join_quote(bad)} "
        f"{pluralize('uses', 'use', len(bad))} "
        f"{pluralize('restricted volume type', 'restricted volume types', len(kinds))} "
        f"{join_quote(sorted(kinds))}",
    )


def run_as_non_root(meta: Obj, spec: Obj) -> CheckResult:
    """Pod or every container sets runAsNonRoot=true; none sets it false."""
    pod_value = security_context(spec).get("runAsNonRoot")
    setters = ["pod"] if pod_value is False else []
    explicit: list[str] = []
    implicit: list[str] = []
    for c in containers(spec):
        value = security_context(c).get("runAsNonRoot")
        if value is False:
            explicit.append(name_of(c))
        elif value is None and pod_value is not True:
            implicit.append(name_of(c))
    if explicit:
        setters.append(containers_phrase(explicit))
    if setters:
        return forbid(
            "runAsNonRoot != true",
            f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false",
        )
    if implicit:
        return forbid(
            "runAsNonRoot != true",
            f"pod or {containers_phrase(implicit)} must set securityContext.runAsNonRoot=true",
        )
    return ALLOWED


def _is_root(owner: Obj) -> bool:
    value = security_context(owner).get("runAsUser")
    return isinstance(value, int) and not isinstance(value, bool) and value == 0


def run_as_user(meta: Obj, spec: Obj) -> CheckResult:
    setters = ["pod"] if _is_root(spec) else []
    bad = [name_of(c) for c in containers(spec) if _is_root(c)]
    if bad:
        setters.append(containers_phrase(bad))
    if not setters:
        return ALLOWED
    return forbid("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0")


def seccomp_restricted(meta: Obj, spec: Obj) -> CheckResult:
    """A RuntimeDefault or Localhost profile on the pod or on every container."""
    pod_bad = bad_profile_type(spec, "seccompProfile")
    pod_set = pod_bad is None and has(security_context(spec), "seccompProfile")
    values = set() if pod_bad is None else {pod_bad}
    explicit: list[str] = []
    implicit: list[str] = []
    for c in containers(spec):
        value = bad_profile_type(c, "seccompProfile")
        if value is not None:
            explicit.append(name_of(c))
            values.add(value)
        elif not has(security_context(c), "seccompProfile") and not pod_set:
            implicit.append(name_of(c))
    setters = ["pod"] if pod_bad is not None else []
    if explicit:
        setters.append(containers_phrase(explicit))
    if setters:
        return forbid(
            "seccompProfile",
            f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
            f"{join_quote(sorted(values))}",
        )
    if implicit:
        return forbid(
            "seccompProfile",
            f"pod or {containers_phrase(implicit)} must set securityContext.seccompProfile.type "
            'to "RuntimeDefault" or "Localhost"',
        )
    return ALLOWED


def _check(check_id: str, *versions: VersionedCheck) -> Check:
    return Check(check_id, RESTRICTED, versions)


RESTRICTED_CHECKS: tuple[Check, ...] = (
    _check(
        "allowPrivilegeEscalation",
        VersionedCheck(8, allow_privilege_escalation),
        VersionedCheck(25, unless_windows(allow_privilege_escalation)),
    ),
    _check(
        "capabilities_restricted",
        VersionedCheck(22, capabilities_restricted, ("capabilities_baseline",)),
        VersionedCheck(25, unless_windows(capabilities_restricted), ("capabilities_baseline",)),
    ),
    _check("procMount_restricted", VersionedCheck(35, proc_mount, ("procMount",))),
    _check("restrictedVolumes", VersionedCheck(0, restricted_volumes, ("hostPathVolumes",))),
    _check(
        "runAsNonRoot",
        VersionedCheck(0, run_as_non_root),
        VersionedCheck(35, unless_user_namespace(run_as_non_root)),
    ),
    _check(
        "runAsUser",
        VersionedCheck(23, run_as_user),
        VersionedCheck(35, unless_user_namespace(run_as_user)),
    ),
    _check(
        "seccompProfile_restricted",
        VersionedCheck(19, seccomp_restricted, ("seccompProfile_baseline",)),
        VersionedCheck(25, unless_windows(seccomp_restricted), ("seccompProfile_baseline",)),
    ),
)
