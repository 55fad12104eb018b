"""The plugin's configuration: kube's ``PodSecurityConfiguration``
(``pod-security.admission.config.platform.io/v1``) from the AdmissionConfiguration.

Defaults give the policy of namespaces without labels (privileged:latest for every mode
when unset); exemptions name users, namespaces and runtime classes the plugin leaves
alone.  Without a configuration, nothing is exempt, as in kube.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from platform_api.admission.podsecurity.levels import (
    LATEST,
    PRIVILEGED,
    LevelVersion,
    Policy,
    parse_level,
    parse_version,
)
from platform_api.validation import field as fe
from platform_api.validation.names import is_dns1123_label, is_dns1123_subdomain

GROUP = "pod-security.admission.config.platform.io"
API_VERSIONS = tuple(f"{GROUP}/{v}" for v in ("v1", "v1beta1", "v1alpha1"))
KIND = "PodSecurityConfiguration"


@dataclass(frozen=True)
class Configuration:
    defaults: Policy = field(default_factory=Policy)
    usernames: frozenset[str] = frozenset()
    namespaces: frozenset[str] = frozenset()
    runtime_classes: frozenset[str] = frozenset()


def _mode(defaults: dict[str, Any], mode: str, errs: list[fe.FieldError]) -> LevelVersion:
    """One mode's level and version, defaulted as kube's v1 defaults and validated."""
    level_text = str(defaults.get(mode) or PRIVILEGED)
    version_text = str(defaults.get(f"{mode}-version") or str(LATEST))
    level, level_error = parse_level(level_text)
    if level_error:
        errs.append(fe.invalid(f"defaults.{mode}", level_text, level_error))
    version, version_error = parse_version(version_text)
    if version_error:
        errs.append(fe.invalid(f"defaults.{mode}-version", version_text, version_error))
    return LevelVersion(level, version)


def _names(values: list[Any], path: str, check: Any, errs: list[fe.FieldError]) -> frozenset[str]:
    """Exemption names: each valid (``check`` lists what is wrong) and given once."""
    seen: set[str] = set()
    for i, value in enumerate(values):
        text = str(value)
        problems = check(text)
        if problems:
            errs.append(fe.invalid(f"{path}[{i}]", text, ", ".join(problems)))
        elif text in seen:
            errs.append(fe.duplicate(f"{path}[{i}]", text))
        else:
            seen.add(text)
    return frozenset(seen)


def _username(value: str) -> list[str]:
    return [] if value else ["username must not be empty"]


def load(settings: dict[str, Any] | None) -> Configuration:
    """The configuration the AdmissionConfiguration gives (or kube's default); a
    ValueError with kube's text for anything invalid."""
    if not settings:
        return Configuration()
    if settings.get("kind") != KIND or settings.get("apiVersion") not in API_VERSIONS:
        raise ValueError(
            f"PodSecurity configuration error: expected a {KIND} of {' or '.join(API_VERSIONS)}"
        )
    defaults = settings.get("defaults") or {}
    exemptions = settings.get("exemptions") or {}
    errs: list[fe.FieldError] = []
    # kube validates in the order enforce, warn, audit.
    enforce = _mode(defaults, "enforce", errs)
    warn = _mode(defaults, "warn", errs)
    audit = _mode(defaults, "audit", errs)
    config = Configuration(
        Policy(enforce, audit, warn),
        namespaces=_names(
            exemptions.get("namespaces") or [], "exemptions.namespaces", is_dns1123_label, errs
        ),
        runtime_classes=_names(
            exemptions.get("runtimeClasses") or [],
            "exemptions.runtimeClasses",
            is_dns1123_subdomain,
            errs,
        ),
        usernames=_names(
            exemptions.get("usernames") or [], "exemptions.usernames", _username, errs
        ),
    )
    if errs:
        raise ValueError(f"PodSecurity invalid: {fe.aggregate(errs)}")
    return config
