"""The plugin's configuration: ``ResourceQuotaConfiguration`` (``limitedResources``).

A limited resource may only be consumed when some quota covers it: its usage names that
contain a ``matchContains`` string, and its objects in a ``matchScopes`` scope.
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.quota.check import LimitedResource
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.validation import field

# The config kinds kube registers: (apiVersion, kind).
KINDS = (
    ("apiserver.config.platform.io/v1", "ResourceQuotaConfiguration"),
    ("resourcequota.admission.platform.io/v1beta1", "Configuration"),
    ("resourcequota.admission.platform.io/v1alpha1", "Configuration"),
)
_PREFIX = 'couldn\'t init admission plugin "ResourceQuota": '


def load_configuration(settings: dict[str, Any] | None) -> list[LimitedResource]:
    """The limited resources; ConfigError with kube's texts when the settings are wrong."""
    if settings is None:
        return []
    version, kind = settings.get("apiVersion", ""), settings.get("kind", "")
    if (version, kind) not in KINDS:
        raise ConfigError(f'{_PREFIX}no kind "{kind}" is registered for version "{version}"')
    entries = settings.get("limitedResources") or []
    errs = [
        field.required(f"limitedResources[{i}].resource")
        for i, entry in enumerate(entries)
        if not (entry or {}).get("resource")
    ]
    if errs:
        raise ConfigError(_PREFIX + field.aggregate(errs))
    return [
        LimitedResource(
            group=str(entry.get("apiGroup") or ""),
            resource=str(entry["resource"]),
            match_contains=tuple(str(s) for s in entry.get("matchContains") or ()),
            match_scopes=tuple(entry.get("matchScopes") or ()),
        )
        for entry in entries
    ]
