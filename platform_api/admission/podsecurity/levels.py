"""Pod Security levels and policy versions, and the namespace labels that choose them.

kube's ``pod-security-admission/api``: a namespace's labels name a level (privileged,
baseline, restricted) and a policy version (``latest`` or ``v1.X``) for each of the three
modes (enforce, audit, warn); labels left out fall back to the configured defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from platform_api.validation import field as fe

LABEL_PREFIX = "pod-security.platform.io/"
ENFORCE_LEVEL = LABEL_PREFIX + "enforce"
ENFORCE_VERSION = LABEL_PREFIX + "enforce-version"
AUDIT_LEVEL = LABEL_PREFIX + "audit"
AUDIT_VERSION = LABEL_PREFIX + "audit-version"
WARN_LEVEL = LABEL_PREFIX + "warn"
WARN_VERSION = LABEL_PREFIX + "warn-version"

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)
LEVEL_ERROR = f"must be one of {', '.join(LEVELS)}"
VERSION_ERROR = 'must be "latest" or "v1.x"'
_VERSION = re.compile(r"v1\.([0-9]|[1-9][0-9]*)")
_MAX_MINOR = 2**63 - 1  # Go's strconv.Atoi limit


@dataclass(frozen=True)
class Version:
    """``v1.<minor>``, or ``latest`` (newer than every numbered version)."""

    minor: int = 0
    latest: bool = False

    def __str__(self) -> str:
        return "latest" if self.latest else f"v1.{self.minor}"

    def older(self, other: Version) -> bool:
        if self.latest:
            return False
        return other.latest or self.minor < other.minor


LATEST = Version(latest=True)


@dataclass(frozen=True)
class LevelVersion:
    level: str
    version: Version

    def __str__(self) -> str:
        return f"{self.level}:{self.version}"

    def equivalent(self, other: LevelVersion) -> bool:
        """Both privileged (whatever the versions), or the same level and version."""
        return (self.level == PRIVILEGED and other.level == PRIVILEGED) or self == other


PRIVILEGED_LATEST = LevelVersion(PRIVILEGED, LATEST)


@dataclass(frozen=True)
class Policy:
    enforce: LevelVersion = PRIVILEGED_LATEST
    audit: LevelVersion = PRIVILEGED_LATEST
    warn: LevelVersion = PRIVILEGED_LATEST

    def fully_privileged(self) -> bool:
        return all(lv.level == PRIVILEGED for lv in (self.enforce, self.audit, self.warn))

    def equivalent(self, other: Policy) -> bool:
        return (
            self.enforce.equivalent(other.enforce)
            and self.audit.equivalent(other.audit)
            and self.warn.equivalent(other.warn)
        )


def parse_level(text: str) -> tuple[str, str]:
    """The level and "" or, for a bad value, restricted and the error."""
    if text in LEVELS:
        return text, ""
    return RESTRICTED, LEVEL_ERROR


def parse_version(text: str) -> tuple[Version, str]:
    """The version and "" or, for a bad value, latest and the error."""
    if text == "latest":
        return LATEST, ""
    match = _VERSION.fullmatch(text)
    if match is None or int(match.group(1)) > _MAX_MINOR:
        return LATEST, VERSION_ERROR
    return Version(int(match.group(1))), ""


def compare_levels(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is less strict than, as strict as or stricter than ``b``."""
    if a == b:
        return 0
    if a == PRIVILEGED:
        return -1
    if a == RESTRICTED:
        return 1
    if b == PRIVILEGED:
        return 1
    return -1 if b == RESTRICTED else 0


def _label_error(label: str, value: str, error: str) -> list[fe.FieldError]:
    return [fe.invalid(f"metadata.labels[{label}]", value, error)] if error else []


def policy_to_evaluate(
    labels: dict[str, str] | None, defaults: Policy
) -> tuple[Policy, list[fe.FieldError]]:
    """The namespace's policy from its labels over ``defaults``, and the labels' errors.

    A policy always comes back: a bad enforce level means restricted, bad audit and warn
    levels mean privileged (failing open), a bad version latest.  Without its own warn
    label, warn follows an explicit enforce level that is stricter.
    """
    if not labels:
        return defaults, []
    errs: list[fe.FieldError] = []
    enforce, audit, warn = defaults.enforce, defaults.audit, defaults.warn
    enforce_level_set = False
    if ENFORCE_LEVEL in labels:
        level, error = parse_level(labels[ENFORCE_LEVEL])
        enforce, enforce_level_set = LevelVersion(level, enforce.version), not error
        errs += _label_error(ENFORCE_LEVEL, labels[ENFORCE_LEVEL], error)
    if ENFORCE_VERSION in labels:
        version, error = parse_version(labels[ENFORCE_VERSION])
        enforce = LevelVersion(enforce.level, version)
        errs += _label_error(ENFORCE_VERSION, labels[ENFORCE_VERSION], error)
    if AUDIT_LEVEL in labels:
        level, error = parse_level(labels[AUDIT_LEVEL])
        audit = LevelVersion(PRIVILEGED if error else level, audit.version)
        errs += _label_error(AUDIT_LEVEL, labels[AUDIT_LEVEL], error)
    if AUDIT_VERSION in labels:
        version, error = parse_version(labels[AUDIT_VERSION])
        audit = LevelVersion(audit.level, version)
        errs += _label_error(AUDIT_VERSION, labels[AUDIT_VERSION], error)
    if WARN_LEVEL in labels:
        level, error = parse_level(labels[WARN_LEVEL])
        warn = LevelVersion(PRIVILEGED if error else level, warn.version)
        errs += _label_error(WARN_LEVEL, labels[WARN_LEVEL], error)
    if WARN_VERSION in labels:
        version, error = parse_version(labels[WARN_VERSION])
        warn = LevelVersion(warn.level, version)
        errs += _label_error(WARN_VERSION, labels[WARN_VERSION], error)
    if (
        WARN_LEVEL not in labels
        and enforce_level_set
        and compare_levels(enforce.level, warn.level) > 0
    ):
        version = warn.version if WARN_VERSION in labels else enforce.version
        warn = LevelVersion(enforce.level, version)
    return Policy(enforce, audit, warn), errs
