"""The one resource registry: every served type, found by resource or by kind.

Built-in types are added at start.  Custom types come and go with their
CustomResourceDefinitions (``install``/``uninstall``, keyed by the CRD's name); every
change bumps ``generation`` and tells the listeners, so discovery, OpenAPI and the
routes follow without a restart.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable

from platform_api.scheme.builtin import BUILTIN_TYPES, GROUP_ORDER
from platform_api.scheme.schemas import Node, Schemas, load_schemas
from platform_api.scheme.types import ResourceType, upstream_group

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?\Z")
_STAGE_RANK = {None: 0, "beta": 1, "alpha": 2}
Key = tuple[str, str, str]


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key of kube's ``CompareKubeAwareVersionStrings``: GA, then beta, then alpha,
    newer first; versions not of that form last, alphabetically."""
    m = _KUBE_VERSION.match(version)
    if m is None:
        return (3, 0, 0, version)
    return (_STAGE_RANK[m.group(2)], -int(m.group(1)), -int(m.group(3) or 0), "")


class Scheme:
    """Served resource types, keyed by (group, version, plural) and by kind."""

    def __init__(self, types: Iterable[ResourceType], schemas: Schemas) -> None:
        self.schemas = schemas
        self.generation = 0  # bumped by every install/uninstall
        self._by_resource: dict[Key, ResourceType] = {}
        # (group, version) -> its resources by plural: discovery and the OpenAPI index ask
        # per group version, and a scan of every resource each made them quadratic.
        self._by_group_version: dict[tuple[str, str], dict[str, ResourceType]] = {}
        self._by_kind: dict[Key, ResourceType] = {}
        # (group, plural) -> its served versions, in the order they were added.
        self._by_group_resource: dict[tuple[str, str], list[ResourceType]] = {}
        self._versions: dict[str, list[str]] = {}
        self._builtin: set[Key] = set()
        self._owned: dict[str, list[ResourceType]] = {}  # CRD name -> its served types
        self._owned_definitions: dict[str, list[str]] = {}
        self._listeners: list[Callable[[], None]] = []
        for given in types:
            rt = self.add(given)
            self._builtin.add((rt.group, rt.version, rt.plural))

    def add(self, rt: ResourceType) -> ResourceType:
        if not rt.definition:
            try:
                definition = self.schemas.for_kind(rt.group, rt.version, rt.kind)
            except KeyError:
                definition = self.schemas.for_kind(upstream_group(rt.group), rt.version, rt.kind)
            rt = dataclasses.replace(rt, definition=definition)
        self._by_resource[(rt.group, rt.version, rt.plural)] = rt
        self._by_group_version.setdefault((rt.group, rt.version), {})[rt.plural] = rt
        same = self._by_group_resource.setdefault((rt.group, rt.plural), [])
        same[:] = [*(t for t in same if t.version != rt.version), rt]
        self._by_kind.setdefault((rt.group, rt.version, rt.kind), rt)
        versions = self._versions.setdefault(rt.group, [])
        if rt.version not in versions:
            versions.append(rt.version)
        return rt

    # -- custom types -----------------------------------------------------------------

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def install(
        self,
        owner: str,
        types: list[ResourceType],
        definitions: dict[str, Node],
        published: dict[str, tuple[Node, Node]] | None = None,
    ) -> list[ResourceType]:
        """Serve ``types`` (with their schema ``definitions``, and how the OpenAPI
        documents show them where that differs) for the CRD ``owner``, replacing what it
        served before.  Built-in resources always win a name clash."""
        self._drop(owner)
        self._owned_definitions[owner] = list(definitions)
        for name, node in definitions.items():
            self.schemas.add(name, node, (published or {}).get(name))
        added = [
            self.add(rt) for rt in types if (rt.group, rt.version, rt.plural) not in self._builtin
        ]
        self._owned[owner] = added
        for group in {rt.group for rt in added}:
            self._versions[group].sort(key=version_priority)
        self._changed()
        return added

    def uninstall(self, owner: str) -> None:
        if owner in self._owned:
            self._drop(owner)
            self._changed()

    def installed(self, owner: str) -> list[ResourceType]:
        return list(self._owned.get(owner, ()))

    def _drop(self, owner: str) -> None:
        for name in self._owned_definitions.pop(owner, ()):
            self.schemas.remove(name)
        for rt in self._owned.pop(owner, ()):
            self._by_resource.pop((rt.group, rt.version, rt.plural), None)
            served = self._by_group_version.get((rt.group, rt.version), {})
            served.pop(rt.plural, None)
            if not served:
                self._by_group_version.pop((rt.group, rt.version), None)
            same = self._by_group_resource.get((rt.group, rt.plural), [])
            same[:] = [t for t in same if t is not rt]
            if not same:
                self._by_group_resource.pop((rt.group, rt.plural), None)
            if self._by_kind.get((rt.group, rt.version, rt.kind)) is rt:
                del self._by_kind[(rt.group, rt.version, rt.kind)]
            left = {v for (g, v) in self._by_group_version if g == rt.group}
            versions = [v for v in self._versions.get(rt.group, []) if v in left]
            if versions:
                self._versions[rt.group] = versions
            else:
                self._versions.pop(rt.group, None)

    def _changed(self) -> None:
        self.generation += 1
        for listener in list(self._listeners):
            listener()

    # -- lookups ------------------------------------------------------------------------

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_resource.get((group, version, plural))

    def equivalents(self, group: str, version: str, plural: str) -> list[ResourceType]:
        """Every served version of the resource, this one too: kube's
        EquivalentResourceMapper (they share one storage: a request to one is a request
        to all).  A custom resource is never equivalent to a built-in one."""
        same = self._by_group_resource.get((group, plural), ())
        asked = self._by_resource.get((group, version, plural))
        if asked is None:
            return []
        return [rt for rt in same if rt.custom == asked.custom]

    def by_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        return self._by_kind.get((group, version, kind))

    def versions(self, group: str) -> list[str]:
        """Served versions of a group, preferred first; empty if the group is unknown."""
        return list(self._versions.get(group, ()))

    def custom_group(self, group: str) -> bool:
        """Whether ``group`` is served by custom resource definitions alone: kube's
        apiextensions handler passes what it does not serve of such a group to the
        plain-text 404 of the server's last handler, not to a Status."""
        served = [rt for v in self.versions(group) for rt in self.resources(group, v)]
        return bool(served) and all(rt.custom for rt in served)

    def groups(self) -> list[str]:
        """Named groups in kube's discovery order (the core group is not one)."""
        named = [g for g in self._versions if g]
        order = {g: i for i, g in enumerate(GROUP_ORDER)}
        return sorted(named, key=lambda g: (order.get(g, len(order)), g))

    def resources(self, group: str, version: str) -> list[ResourceType]:
        found = self._by_group_version.get((group, version), {})
        return [found[plural] for plural in sorted(found)]

    def all(self) -> list[ResourceType]:
        return list(self._by_resource.values())


def builtin_scheme() -> Scheme:
    return Scheme(BUILTIN_TYPES, load_schemas().copy())
