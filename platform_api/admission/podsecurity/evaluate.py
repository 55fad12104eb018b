"""Evaluating pods against a level and version, and kube's verdicts built from that.

The checks that apply to ``level:v1.X`` are, for each check, its newest revision from
v1.X or before; restricted adds the baseline checks no restricted revision overrides;
``latest`` (and any version past the newest revision) means the newest.  Checks run in
kube's order: baseline ids sorted, then restricted ids sorted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from platform_api.admission.podsecurity.checks import (
    Aggregate,
    Check,
    CheckFn,
    Obj,
    VersionedCheck,
    aggregate,
    sub,
)
from platform_api.admission.podsecurity.checks_baseline import BASELINE_CHECKS
from platform_api.admission.podsecurity.checks_restricted import RESTRICTED_CHECKS
from platform_api.admission.podsecurity.levels import (
    BASELINE,
    PRIVILEGED,
    LevelVersion,
    Policy,
)

CHECKS: tuple[Check, ...] = BASELINE_CHECKS + RESTRICTED_CHECKS
MAX_MINOR = max(c.versions[-1].minimum for c in CHECKS)
_ORDER = sorted(c.id for c in BASELINE_CHECKS) + sorted(c.id for c in RESTRICTED_CHECKS)
MAX_PODS_TO_CHECK = 3000
POD_CHECK_SECONDS = 1.0
# kube's audit annotation keys (prefixed with the label prefix where they are recorded).
ENFORCE_POLICY, AUDIT_VIOLATIONS, EXEMPT = "enforce-policy", "audit-violations", "exempt"


def _revision(check: Check, minor: int) -> VersionedCheck | None:
    found = None
    for revision in check.versions:
        if revision.minimum <= minor:
            found = revision
    return found


@cache
def checks_for(level: str, minor: int) -> tuple[CheckFn, ...]:
    """The check functions of ``level`` at policy version ``v1.<minor>``, in kube's order."""
    chosen: dict[str, VersionedCheck] = {}
    for check in CHECKS:
        revision = _revision(check, minor)
        if revision is not None and (check.level == BASELINE or level != BASELINE):
            chosen[check.id] = revision
    overridden = {o for r in chosen.values() for o in r.overrides}
    return tuple(chosen[i].check for i in _ORDER if i in chosen and i not in overridden)


def evaluate(lv: LevelVersion, meta: Obj, spec: Obj) -> Aggregate:
    if lv.level == PRIVILEGED:
        return Aggregate()
    version = lv.version
    minor = MAX_MINOR if version.latest or version.minor > MAX_MINOR else version.minor
    return aggregate([check(meta, spec) for check in checks_for(lv.level, minor)])


@dataclass
class Verdict:
    """kube's AdmissionResponse of the plugin: a denial, warnings, audit annotations."""

    denial: str = ""  # the Forbidden message's reason, when enforce refuses
    warnings: list[str] = field(default_factory=list)
    audit: dict[str, str] = field(default_factory=dict)


def exempt_runtime_class(spec: Obj, runtime_classes: frozenset[str]) -> bool:
    name = spec.get("runtimeClassName")
    return bool(name) and name in runtime_classes


def evaluate_pod(
    policy: Policy, policy_error: str, meta: Obj, spec: Obj, *, enforce: bool
) -> Verdict:
    """A pod (or pod template) under the namespace's policy; enforce only for pods."""
    verdict = Verdict()
    if policy_error:
        verdict.audit["error"] = f"Failed to parse policy: {policy_error}"
    cached: dict[LevelVersion, Aggregate] = {}

    def result(lv: LevelVersion) -> Aggregate:
        if lv not in cached:
            cached[lv] = evaluate(lv, meta, spec)
        return cached[lv]

    if enforce:
        verdict.audit[ENFORCE_POLICY] = str(policy.enforce)
        refused = result(policy.enforce)
        if not refused.allowed:
            verdict.denial = (
                f'violates PodSecurity "{policy.enforce}": {refused.forbidden_detail()}'
            )
    audited = result(policy.audit)
    if not audited.allowed:
        verdict.audit[AUDIT_VIOLATIONS] = (
            f'would violate PodSecurity "{policy.audit}": {audited.forbidden_detail()}'
        )
    if not verdict.denial:  # no warnings on a request already refused
        warned = result(policy.warn)
        if not warned.allowed:
            verdict.warnings.append(
                f'would violate PodSecurity "{policy.warn}": {warned.forbidden_detail()}'
            )
    return verdict


def _controller_uid(pod: Obj) -> str | None:
    for ref in sub(pod, "metadata").get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return str(ref.get("uid") or "")
    return None


def prioritize(pods: list[Obj], runtime_classes: frozenset[str]) -> list[Obj]:
    """Pods of exempt runtime classes dropped; one pod per controller first, its other
    pods after all those (so that a limited check sees the most kinds of pods)."""
    first: list[Obj] = []
    later: list[Obj] = []
    seen: set[str] = set()
    for pod in pods:
        if exempt_runtime_class(sub(pod, "spec"), runtime_classes):
            continue
        uid = _controller_uid(pod)
        if uid is not None and uid in seen:
            later.append(pod)
            continue
        if uid is not None:
            seen.add(uid)
        first.append(pod)
    return first + later


def _decorate(warning: str, first_name: str, count: int) -> str:
    if count == 1:
        return f"{first_name}: {warning}"
    others = "1 other pod" if count == 2 else f"{count - 1} other pods"
    return f"{first_name} (and {others}): {warning}"


def existing_pod_warnings(
    namespace: str,
    enforce: LevelVersion,
    pods: list[Obj],
    runtime_classes: frozenset[str],
    clock: Callable[[], float] = time.monotonic,
) -> list[str]:
    """What a stricter enforce level would say about the namespace's pods: one line per
    distinct violation, naming its lexically first pod and how many others share it."""
    deadline = clock() + POD_CHECK_SECONDS
    ordered = prioritize(pods, runtime_classes)
    total = len(ordered)
    ordered = ordered[:MAX_PODS_TO_CHECK]
    checked = len(ordered)
    counts: dict[str, tuple[str, int]] = {}
    for i, pod in enumerate(ordered):
        found = evaluate(enforce, sub(pod, "metadata"), sub(pod, "spec"))
        if not found.allowed:
            reason = found.forbidden_reason()
            name = str(sub(pod, "metadata").get("name") or "")
            first, count = counts.get(reason, (name, 0))
            counts[reason] = (min(first, name), count + 1)
        if clock() > deadline:
            checked = i + 1
            break
    warnings = []
    if checked < total:
        warnings.append(
            f"new PodSecurity enforce level only checked against the first {checked} of "
            f"{total} existing pods"
        )
    if counts:
        warnings.append(
            f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce '
            f'level "{enforce}"'
        )
    return warnings + sorted(_decorate(w, name, n) for w, (name, n) in counts.items())
