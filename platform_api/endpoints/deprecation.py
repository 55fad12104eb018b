"""Requests to a deprecated API version: kube's warning, gauge and audit annotations.

One mechanism for both kinds of deprecated version: a built-in kind kube v1.36 marks
deprecated (its Go type's ``APILifecycleDeprecated``, table in deprecation_data.py) and a
custom resource version its CRD marks ``deprecated``.  Every such request gets the
``299`` warning, sets ``apiserver_requested_deprecated_apis`` to 1 and annotates the
audit event, as kube's installer and ``MonitorRequest`` do.
"""

from __future__ import annotations

from platform_api.apiserver.deprecationmetrics import REQUESTED_DEPRECATED_APIS
from platform_api.context import Context
from platform_api.endpoints.deprecation_data import DEPRECATED
from platform_api.scheme.types import ResourceType, group_version

DEPRECATED_ANNOTATION = "platform.io/deprecated"
REMOVED_RELEASE_ANNOTATION = "platform.io/removed-release"


def builtin_warning(group: str, version: str, kind: str) -> tuple[str, str] | None:
    """kube's ``deprecation.WarningMessage`` and ``RemovedRelease`` for a built-in kind."""
    entry = DEPRECATED.get((group, version, kind))
    if entry is None:
        return None
    (major, minor), removed, replacement = entry
    text = f"{group_version(group, version)} {kind} is deprecated in v{major}.{minor}+"
    removed_release = ""
    if removed is not None:
        removed_release = f"{removed[0]}.{removed[1]}"
        text += f", unavailable in v{removed_release}+"
    if replacement is not None:
        text += f"; use {group_version(replacement[0], replacement[1])} {replacement[2]}"
    return text, removed_release


def warn_custom(ctx: Context, rt: ResourceType) -> None:
    """kube's CRD handler warns on every request to a deprecated version of the right
    scope, even one it then answers 404 or 405 (``observe`` counts only routed ones)."""
    if rt.deprecation_warning:
        ctx.warn(rt.deprecation_warning)


def _lookup(rt: ResourceType, subresource: str) -> tuple[str, str] | None:
    if rt.custom:
        return (rt.deprecation_warning, "") if rt.deprecation_warning else None
    # kube checks the object the route serves: a status shares its parent's kind, a
    # scale or an eviction does not.
    group, version, kind = rt.gvk(subresource)
    return builtin_warning(group, version, kind)


def observe(ctx: Context, rt: ResourceType, subresource: str) -> None:
    """Warn, count and annotate a request routed to ``rt`` when its version is deprecated."""
    found = _lookup(rt, subresource)
    if found is None:
        return
    warning, removed_release = found
    if not rt.custom:  # warned already: warn_custom
        ctx.warn(warning)
    REQUESTED_DEPRECATED_APIS.labels(
        group=rt.group,
        removed_release=removed_release,
        resource=rt.plural,
        subresource=subresource,
        version=rt.version,
    ).set(1)
    ctx.annotate(DEPRECATED_ANNOTATION, "true")
    if removed_release:
        ctx.annotate(REMOVED_RELEASE_ANNOTATION, removed_release)
