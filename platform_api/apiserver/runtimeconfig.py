"""``--runtime-config``: which API group versions and resources the server serves.

kube-apiserver's grammar and semantics, in the order it applies them:
``cliflag.ConfigurationMap`` splits ``key[=value]`` pairs (a bare key has the value
""); the options' Complete step files ``v1``, ``api/v1`` (and ``v1/...``,
``api/v1/...``) under the core group's key ``/v1`` and drops ``api/legacy``;
``APIEnablementOptions.Validate`` refuses malformed keys and unknown groups; then
``resourceconfig.MergeAPIResourceConfigs`` applies ``api/all``, ``api/ga``,
``api/beta``, ``api/alpha`` (values exactly ``true``/``false``) to the default
versions, then each ``group/version`` and last each ``group/version/resource``
(values per ``strconv.ParseBool``, "" meaning true).  Upstream group names
(``*.k8s.io``) stand for the branded groups.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from platform_api.apiserver.flagvalues import ConfigError, go_bool
from platform_api.scheme.optional import DEFAULT_VERSIONS, REGISTERED
from platform_api.scheme.types import rebrand_group

GroupVersion = tuple[str, str]
GroupVersionResource = tuple[str, str, str]

_MATCHERS: dict[str, Callable[[str], bool]] = {
    "api/all": lambda version: True,
    "api/ga": lambda version: re.fullmatch(r"v\d+", version) is not None,
    "api/beta": lambda version: re.fullmatch(r"v\d+beta\d+", version) is not None,
    "api/alpha": lambda version: re.fullmatch(r"v\d+alpha\d+", version) is not None,
}


@dataclass(frozen=True)
class ResourceConfig:
    """kube's ``serverstorage.ResourceConfig``: versions on or off, and resources set
    one by one (which win over their version)."""

    versions: Mapping[GroupVersion, bool] = field(default_factory=lambda: DEFAULT_VERSIONS)
    resources: Mapping[GroupVersionResource, bool] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def version_enabled(self, group: str, version: str) -> bool:
        return self.versions.get((group, version), False)

    def resource_enabled(self, group: str, version: str, resource: str) -> bool:
        explicit = self.resources.get((group, version, resource))
        if explicit is not None:
            return explicit
        return self.version_enabled(group, version)


DEFAULT = ResourceConfig()


def configuration_map(text: str) -> dict[str, str]:
    """``cliflag.ConfigurationMap.Set``: comma-separated ``key=value``; a key without
    ``=`` maps to ""; a later key replaces an earlier one."""
    out: dict[str, str] = {}
    for item in text.split(","):
        if not item:
            continue
        key, sep, value = item.partition("=")
        out[key.strip()] = value.strip() if sep else ""
    return out


def _complete(overrides: dict[str, str]) -> dict[str, str]:
    """The options' Complete step: the core group's spellings become ``/v1``."""
    out: dict[str, str] = {}
    for key, value in overrides.items():
        if key in ("v1", "api/v1") or key.startswith(("v1/", "api/v1/")):
            out["/v1"] = value
        elif key != "api/legacy":
            out[key] = value
    return out


def _branded(group: str) -> str:
    """An upstream group name read as the branded group it stands for."""
    branded = rebrand_group(group)
    return branded if branded in REGISTERED else group


# validateAPIPriorityAndFairness's keys, in precedence order (APF is always on here).
_APF_KEYS = (
    ("flowcontrol.apiserver.k8s.io/v1", "flowcontrol.apiserver.platform.io/v1"),
    ("api/ga",),
    ("api/all",),
)


def _priority_and_fairness(overrides: dict[str, str]) -> list[str]:
    """kube refuses to turn off the version its priority-and-fairness filter reads; it
    searches the flag's sorted ``key=value`` text, so a later ``=true`` key ends it."""
    text = ",".join(sorted(f"{k}={v}" for k, v in overrides.items()))
    for spellings in _APF_KEYS:
        for key in spellings:
            if f"{key}=false" in text:
                return [
                    f"--runtime-config={key}=false conflicts with "
                    "--enable-priority-and-fairness=true"
                ]
        if any(f"{key}=true" in text for key in spellings):
            return []
    return []


def _validate(overrides: dict[str, str]) -> None:
    """``validateAPIPriorityAndFairness`` then ``APIEnablementOptions.Validate``; kube
    aggregates their errors (one alone, several in brackets)."""
    problems = _priority_and_fairness(overrides)
    try:
        _validate_enablement(overrides)
    except ConfigError as e:
        problems.append(str(e))
    if problems:
        raise ConfigError(problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")


def _validate_enablement(overrides: dict[str, str]) -> None:
    """``APIEnablementOptions.Validate``."""
    if overrides.get("api/all") == "false" and len(overrides) == 1:
        raise ConfigError("invalid runtime-config with only api/all=false")
    unknown: set[str] = set()
    for key in overrides:
        if key in _MATCHERS:
            continue
        tokens = key.split("/")
        if len(tokens) not in (2, 3):
            raise ConfigError(f"runtime-config invalid key {key}")
        if _branded(tokens[0]) not in REGISTERED:
            unknown.add(f"{tokens[0]}/{tokens[1]}" if tokens[0] else tokens[1])
    if unknown:
        raise ConfigError(f"unknown api groups {','.join(sorted(unknown))}")


def _bool_value(key: str, value: str) -> bool:
    if value == "":
        return True
    parsed = go_bool(value)
    if parsed is None:
        raise ConfigError(
            f"invalid value of {key}: {value}, err: strconv.ParseBool: "
            f'parsing "{value}": invalid syntax'
        )
    return parsed


def _merge(overrides: dict[str, str]) -> ResourceConfig:
    """``MergeAPIResourceConfigs`` over the default configuration."""
    versions = dict(DEFAULT_VERSIONS)
    for flag, matches in _MATCHERS.items():
        if flag not in overrides:
            continue
        value = overrides[flag]
        if value not in ("true", "false"):
            raise ConfigError(f"invalid value {flag}={value}")
        for gv in versions:
            if matches(gv[1]):
                versions[gv] = value == "true"
    by_version: dict[GroupVersion, bool] = {}
    resources: dict[GroupVersionResource, bool] = {}
    for key, value in overrides.items():
        if key in _MATCHERS:
            continue
        tokens = key.split("/")
        group, version = _branded(tokens[0]), tokens[1]
        if version not in REGISTERED[group]:
            spelled = f"{tokens[0]}/{version}" if tokens[0] else version
            raise ConfigError(f"group version {spelled} that has not been registered")
        enabled = _bool_value(key, value)
        if len(tokens) == 2:
            by_version[(group, version)] = enabled
            continue
        if tokens[2].lower() != tokens[2]:
            raise ConfigError(
                f"invalid key {key}: group/version/resource and resource is always "
                f'lowercase plural, not "{tokens[2]}"'
            )
        resources[(group, version, tokens[2])] = enabled
    versions.update(by_version)
    return ResourceConfig(MappingProxyType(versions), MappingProxyType(resources))


def parse(text: str) -> ResourceConfig:
    """The flag's value as kube-apiserver reads it; a ConfigError worded as kube's."""
    overrides = _complete(configuration_map(text))
    _validate(overrides)
    return _merge(overrides)
