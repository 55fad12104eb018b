"""Which group versions belong to aggregated API servers: every worker's own index of
the APIServices that name a Service, fed from the watch hub.

kube's aggregator answers a request to such a group version by proxying it to the
server behind the Service, or with a plain-text 503 "service unavailable" while that
server is not available.  This server does not proxy, so its answer is always the 503
(``unavailable``), after authentication and authorization, as kube's.  A group version
this server serves itself stays local whatever an APIService says.
"""

from __future__ import annotations

from typing import Any

from twisted.web.server import Request

from platform_api.registry.store import Store
from platform_api.scheme.catalog import version_priority
from platform_api.storage.interface import DELETED, Event, ListOptions

Obj = dict[str, Any]


class RemoteAPIServices:
    """(group, version) -> APIService name, for APIServices with ``spec.service``."""

    def __init__(self, apiservices: Store) -> None:
        self.prefix = apiservices.prefix
        self._store = apiservices
        # name -> (group, version, groupPriorityMinimum, versionPriority)
        self._by_name: dict[str, tuple[str, str, int, int]] = {}
        self.generation = 0  # bumped by every change: discovery rebuilds its documents
        for stored in apiservices.list("", ListOptions()).items:
            self._note(stored.object["metadata"]["name"], stored.object)

    def deliver(self, events: list[Event]) -> None:
        for event in events:
            if not event.key.startswith(self.prefix):
                continue
            name = self._store.name_of_key(event.key)
            if event.type == DELETED or event.stored is None:
                if self._by_name.pop(name, None) is not None:
                    self.generation += 1
            else:
                self._note(name, event.stored.object)

    def _note(self, name: str, obj: Obj) -> None:
        spec = obj.get("spec") or {}
        before = self._by_name.get(name)
        if isinstance(spec.get("service"), dict):
            priorities = (spec.get("groupPriorityMinimum", 0), spec.get("versionPriority", 0))
            self._by_name[name] = (spec.get("group", ""), spec.get("version", ""), *priorities)
        else:
            self._by_name.pop(name, None)
        if self._by_name.get(name) != before:
            self.generation += 1

    def claims(self, group: str, version: str) -> bool:
        return any(g == group and v == version for g, v, _, _ in self._by_name.values())

    def groups(self) -> list[tuple[str, int, list[str]]]:
        """(group, priority, versions) of every aggregated group, as kube's aggregator
        sorts them: groups by their highest groupPriorityMinimum, versions by
        versionPriority, both highest first, then by kube's version order and name."""
        versions: dict[str, list[tuple[int, str]]] = {}
        priority: dict[str, int] = {}
        for group, version, group_rank, version_rank in self._by_name.values():
            versions.setdefault(group, []).append((version_rank, version))
            priority[group] = max(priority.get(group, 0), group_rank)
        out = []
        for group in sorted(versions, key=lambda g: (-priority[g], g)):
            ordered = sorted(versions[group], key=lambda p: (-p[0], version_priority(p[1])))
            out.append((group, priority[group], [v for _, v in ordered]))
        return out


def unavailable(request: Request) -> None:
    """kube's ``http.Error(w, "service unavailable", 503)``."""
    request.setResponseCode(503)
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    request.setHeader(b"x-content-type-options", b"nosniff")
    request.write(b"service unavailable\n")
    request.finish()
