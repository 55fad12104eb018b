"""The one resource registry: every served type, found by resource or by kind."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from platform_api.scheme.builtin import BUILTIN_TYPES, GROUP_ORDER
from platform_api.scheme.schemas import Schemas, load_schemas
from platform_api.scheme.types import ResourceType, upstream_group


class Scheme:
    """Served resource types, keyed by (group, version, plural) and by kind."""

    def __init__(self, types: Iterable[ResourceType], schemas: Schemas) -> None:
        self.schemas = schemas
        self._by_resource: dict[tuple[str, str, str], ResourceType] = {}
        self._by_kind: dict[tuple[str, str, str], ResourceType] = {}
        self._versions: dict[str, list[str]] = {}
        for rt in types:
            self.add(rt)

    def add(self, rt: ResourceType) -> ResourceType:
        if not rt.definition:
            try:
                definition = self.schemas.for_kind(rt.group, rt.version, rt.kind)
            except KeyError:
                definition = self.schemas.for_kind(upstream_group(rt.group), rt.version, rt.kind)
            rt = dataclasses.replace(rt, definition=definition)
        self._by_resource[(rt.group, rt.version, rt.plural)] = rt
        self._by_kind.setdefault((rt.group, rt.version, rt.kind), rt)
        versions = self._versions.setdefault(rt.group, [])
        if rt.version not in versions:
            versions.append(rt.version)
        return rt

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_resource.get((group, version, plural))

    def by_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        return self._by_kind.get((group, version, kind))

    def versions(self, group: str) -> list[str]:
        """Served versions of a group, preferred first; empty if the group is unknown."""
        return list(self._versions.get(group, ()))

    def groups(self) -> list[str]:
        """Named groups in kube's discovery order (the core group is not one)."""
        named = [g for g in self._versions if g]
        order = {g: i for i, g in enumerate(GROUP_ORDER)}
        return sorted(named, key=lambda g: (order.get(g, len(order)), g))

    def resources(self, group: str, version: str) -> list[ResourceType]:
        found = [rt for (g, v, _), rt in self._by_resource.items() if g == group and v == version]
        return sorted(found, key=lambda rt: rt.plural)

    def all(self) -> list[ResourceType]:
        return list(self._by_resource.values())


def builtin_scheme() -> Scheme:
    return Scheme(BUILTIN_TYPES, load_schemas())
