"""What discovery lists of one resource: its entry in a group version's APIResourceList
and in aggregated discovery, its short names and categories where they belong, and the
storageVersionHash of the form kube stores it in."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import BRAND_SUFFIX, ResourceType, Subresource


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """kube's ``StorageVersionHash``: an opaque token that changes with the storage version."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


# Resources kube stores as another group's kind: events.k8s.io Events are core v1 Events.
_SHARED_STORAGE = {(f"events{BRAND_SUFFIX}", "events"): ("", "v1", "Event")}


def _shortcuts(rt: ResourceType, shortcuts: bool) -> dict[str, Any]:
    """A resource's short names and categories, listed only with ``shortcuts`` (under one
    of a group's two names: kubectl would otherwise warn that every short name matches
    two resources, and list each object of a category twice)."""
    out: dict[str, Any] = {}
    if rt.short_names and shortcuts:
        out["shortNames"] = list(rt.short_names)
    if rt.categories and shortcuts:
        out["categories"] = list(rt.categories)
    return out


def resource_entries(
    rt: ResourceType, shortcuts: bool, stored: tuple[str, str, str]
) -> list[dict[str, Any]]:
    """A resource's entries in its group version's APIResourceList; ``stored``, the
    form kube stores it in (``stored_as``)."""
    main: dict[str, Any] = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": rt.listed_verbs(),
        **_shortcuts(rt, shortcuts),
    }
    if rt.stored:
        main["storageVersionHash"] = storage_version_hash(*stored)
    entries = [main]
    for sub in rt.subresources:
        entry: dict[str, Any] = {
            "name": f"{rt.plural}/{sub.name}",
            "singularName": "",
            "namespaced": rt.namespaced,
        }
        if sub.group or sub.version:
            entry["group"] = sub.group
            entry["version"] = sub.version
        entry["kind"] = sub.kind or rt.kind
        entry["verbs"] = list(sub.verbs)
        entries.append(entry)
    return entries


def aggregated_resource(rt: ResourceType, group: str, shortcuts: bool) -> dict[str, Any]:
    """One resource of aggregated discovery, in ``group`` (the name clients asked for)."""
    # kube's installer copies the APIResource's group and version, empty for a built-in
    # kind of the group's own; apiextensions names a custom resource's.
    kind_group, kind_version = (group, rt.version) if rt.custom else ("", "")
    out: dict[str, Any] = {
        "resource": rt.plural,
        "responseKind": {"group": kind_group, "version": kind_version, "kind": rt.kind},
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": rt.listed_verbs(),
        **_shortcuts(rt, shortcuts),
    }
    if rt.subresources:
        out["subresources"] = [_subresource(rt, sub, group) for sub in rt.subresources]
    return out


def _subresource(rt: ResourceType, sub: Subresource, group: str) -> dict[str, Any]:
    """kube leaves the group and version of a built-in subresource's kind empty when
    they are the resource's own; a custom resource's name them."""
    if sub.version:
        group_of, version = sub.group, sub.version
    elif rt.custom:
        group_of, version = group, rt.version
    else:
        group_of, version = "", ""
    return {
        "subresource": sub.name,
        "responseKind": {"group": group_of, "version": version, "kind": sub.kind or rt.kind},
        "verbs": list(sub.verbs),
    }


def stored_as(scheme: Scheme, rt: ResourceType) -> tuple[str, str, str]:
    """The group, version and kind kube's storage encodes a resource as, which its
    storageVersionHash names: a custom resource's storage version; a built-in's
    preferred version (autoscaling/v1 HorizontalPodAutoscalers are stored as v2, beta
    versions as the GA one), or the kind it shares storage with."""
    if rt.custom:
        return rt.group, rt.storage_version or rt.version, rt.kind
    shared = _SHARED_STORAGE.get((rt.group, rt.plural))
    if shared is not None:
        return shared
    for version in scheme.versions(rt.group):
        if any(r.plural == rt.plural for r in scheme.resources(rt.group, version)):
            return rt.group, version, rt.kind
    return rt.group, rt.version, rt.kind
