"""Upstream group names (``--serve-upstream-groups``): ``*.k8s.io`` served by ``*.platform.io``.

Stock kubectl, client-go leader election and controller-runtime ask for kube's group
names.  With the flag, a request naming an upstream group (in its path or its body's
``apiVersion``) is served by the branded group: the same types, stores, strategies and
RBAC rules.  Only the names clients see change: objects go out with the group the
client asked for, and discovery and OpenAPI list both names.  Without the flag every
method here is the identity, so nothing changes.
"""

from __future__ import annotations

from typing import Any

from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import BRAND_SUFFIX, UPSTREAM_SUFFIX, upstream_group

Obj = dict[str, Any]


def _upstream_of(group: str) -> str:
    """The upstream name of a branded group (``platform.io`` itself is ``k8s.io``)."""
    if group == BRAND_SUFFIX[1:]:
        return UPSTREAM_SUFFIX[1:]
    return upstream_group(group)


class Aliases:
    def __init__(self, scheme: Scheme, enabled: bool) -> None:
        self.scheme = scheme
        self.enabled = enabled

    def branded(self, group: str) -> str:
        """The branded group an upstream name stands for, or "" when it is none."""
        if not self.enabled or not group.endswith(UPSTREAM_SUFFIX):
            return ""
        candidate = group[: -len(UPSTREAM_SUFFIX)] + BRAND_SUFFIX
        return candidate if self.scheme.versions(candidate) else ""

    def upstream(self, group: str) -> str:
        """The upstream name of a served branded group, or "" when it has none."""
        if not self.enabled or not group.endswith(BRAND_SUFFIX):
            return ""
        return _upstream_of(group)

    def pairs(self) -> list[tuple[str, str]]:
        """(branded, upstream) for every served branded group."""
        if not self.enabled:
            return []
        return [(g, _upstream_of(g)) for g in self.scheme.groups() if g.endswith(BRAND_SUFFIX)]

    def canonical_api_version(self, api_version: str) -> tuple[str, str]:
        """``(branded apiVersion, upstream group asked for or "")`` of a body's apiVersion."""
        group, _, version = api_version.rpartition("/")
        branded = self.branded(group)
        return (f"{branded}/{version}", group) if branded else (api_version, "")

    def canonical_managed_fields(self, obj: Obj) -> None:
        """A body's ``managedFields`` entries named with an upstream group (as this server
        wrote them out) named with the branded one again, in place: ownership is kept
        under one name."""
        entries = (obj.get("metadata") or {}).get("managedFields")
        if not self.enabled or not isinstance(entries, list):
            return
        for entry in entries:
            version = entry.get("apiVersion") if isinstance(entry, dict) else None
            if isinstance(version, str) and "/" in version:
                entry["apiVersion"] = self.canonical_api_version(version)[0]

    def canonical_groups(self, groups: list[str]) -> list[str]:
        """An RBAC rule's apiGroups with upstream names read as their branded groups."""
        if not self.enabled:
            return groups
        return [self.branded(g) or g for g in groups]

    def rename(self, obj: Obj, alias: str) -> Obj:
        """``obj`` (and a list's items) with the branded group of its apiVersion written as
        ``alias``; a new dict when anything changes, else ``obj`` itself."""
        if not alias:
            return obj
        out = _renamed(obj, alias)
        items = obj.get("items")
        if isinstance(items, list) and any(isinstance(i, dict) for i in items):
            group = _branded_group(obj, alias)  # of a list's items, which name none
            out = {
                **out,
                "items": [_renamed(i, alias, group) if isinstance(i, dict) else i for i in items],
            }
        return out


def _branded_group(obj: Obj, alias: str) -> str:
    """The branded group of ``obj``'s apiVersion when ``alias`` is its upstream name."""
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or "/" not in api_version:
        return ""
    group = api_version.rpartition("/")[0]
    return group if group.endswith(BRAND_SUFFIX) and _upstream_of(group) == alias else ""


def _renamed(obj: Obj, alias: str, group: str = "") -> Obj:
    """``obj`` in ``alias``: its apiVersion, and its managedFields entries of the same
    group; ``group`` names it for a list's items, which carry no apiVersion."""
    own = _branded_group(obj, alias)
    group = own or group
    meta = obj.get("metadata")
    entries = meta.get("managedFields") if isinstance(meta, dict) else None
    if not own and not (group and entries):
        return obj  # nothing of it names the group
    out = {**obj, "apiVersion": alias + obj["apiVersion"][len(group) :]} if own else dict(obj)
    if isinstance(meta, dict) and isinstance(entries, list):
        prefix = group + "/"
        out["metadata"] = {
            **meta,
            "managedFields": [
                {**e, "apiVersion": alias + "/" + e["apiVersion"][len(prefix) :]}
                if isinstance(e, dict) and str(e.get("apiVersion", "")).startswith(prefix)
                else e
                for e in entries
            ],
        }
    return out
