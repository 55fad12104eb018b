"""Which group versions belong to aggregated API servers: every worker's own index of
the APIServices that name a Service, fed from the watch hub.

kube's aggregator answers a request to such a group version by proxying it to the
server behind the Service (proxy.py) once the APIService is Available, and with a
plain-text 503 "service unavailable" before.  A group version this server serves itself
stays local whatever an APIService says.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from twisted.web.server import Request

from platform_api.registry.store import Store
from platform_api.scheme.catalog import version_priority
from platform_api.storage.interface import DELETED, Event, ListOptions

Obj = dict[str, Any]


@dataclass(frozen=True)
class Backend:
    """What an APIService says about reaching its server."""

    name: str
    namespace: str
    service: str
    port: int
    ca_pem: bytes | None
    insecure: bool
    available: bool


class RemoteAPIServices:
    """(group, version) -> APIService name, for APIServices with ``spec.service``."""

    def __init__(self, apiservices: Store) -> None:
        self.prefix = apiservices.prefix
        self._store = apiservices
        # name -> (group, version, groupPriorityMinimum, versionPriority)
        self._by_name: dict[str, tuple[str, str, int, int]] = {}
        self._backends: dict[tuple[str, str], Backend] = {}  # (group, version) ->
        self.on_change: Callable[[], None] | None = None  # remotediscovery.py's
        self.generation = 0  # bumped by every change: discovery rebuilds its documents
        for stored in apiservices.list("", ListOptions()).items:
            self._note(stored.object["metadata"]["name"], stored.object)

    def deliver(self, events: list[Event]) -> None:
        before = dict(self._backends)
        self._deliver(events)
        if self.on_change is not None and self._backends != before:
            self.on_change()

    def _deliver(self, events: list[Event]) -> None:
        for event in events:
            if not event.key.startswith(self.prefix):
                continue
            name = self._store.name_of_key(event.key)
            if event.type == DELETED or event.stored is None:
                gone = self._by_name.pop(name, None)
                if gone is not None:
                    self._backends.pop(gone[:2], None)
                    self.generation += 1
            else:
                self._note(name, event.stored.object)

    def _note(self, name: str, obj: Obj) -> None:
        spec = obj.get("spec") or {}
        before = self._by_name.get(name)
        if before is not None:
            self._backends.pop(before[:2], None)
        service = spec.get("service")
        if isinstance(service, dict):
            priorities = (spec.get("groupPriorityMinimum", 0), spec.get("versionPriority", 0))
            group, version = spec.get("group", ""), spec.get("version", "")
            self._by_name[name] = (group, version, *priorities)
            self._backends[group, version] = backend_of(obj)
        else:
            self._by_name.pop(name, None)
        if self._by_name.get(name) != before:
            self.generation += 1

    def backends(self) -> dict[tuple[str, str], Backend]:
        return dict(self._backends)

    def backend(self, group: str, version: str) -> Backend | None:
        """The aggregated server of a group version, if an APIService names one."""
        return self._backends.get((group, version))

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


def backend_of(obj: Obj) -> Backend:
    """An APIService naming a Service, as the proxy reaches it."""
    spec = obj.get("spec") or {}
    service = spec.get("service") or {}
    conditions = (obj.get("status") or {}).get("conditions") or []
    available = any(c.get("type") == "Available" and c.get("status") == "True" for c in conditions)
    ca = spec.get("caBundle")
    return Backend(
        name=obj["metadata"]["name"],
        namespace=str(service.get("namespace") or ""),
        service=str(service.get("name") or ""),
        port=int(service.get("port") or 443),
        ca_pem=base64.b64decode(ca) if ca else None,
        insecure=bool(spec.get("insecureSkipTLSVerify")),
        available=available,
    )


def plain_error(request: Request, code: int, text: str) -> None:
    """Go's ``http.Error``: the text and a newline, as text/plain."""
    request.setResponseCode(code)
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    request.setHeader(b"x-content-type-options", b"nosniff")
    request.write(text.encode() + b"\n")
    request.finish()


def unavailable(request: Request) -> None:
    """kube's answer while an aggregated server is not available."""
    plain_error(request, 503, "service unavailable")
