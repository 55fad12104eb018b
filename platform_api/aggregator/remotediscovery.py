"""Aggregated servers' resources in this server's aggregated discovery document:
kube-aggregator's discovery manager.

Every APIService naming a Service gets an entry for its group version: its server's
resources (``GET /apis/<group>/<version>`` through the proxy's transport, as
``system:kube-aggregator``, converted as kube converts a legacy list) with freshness
``Current``, or ``Stale`` (the last resources known, none at first) while the server is
unavailable or its answer unusable.  Entries are fetched when an APIService changes and
again every minute, as kube's are; each worker keeps its own.  (kube first asks the
server for its own aggregated document and falls back to the legacy list; asking for
the list alone gives the same resources, without their response kinds' group and
version.)
"""

from __future__ import annotations

from typing import Any

import orjson
from twisted.internet.defer import ensureDeferred
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.web.http_headers import Headers

from platform_api.aggregator.proxy import AggregatorProxy
from platform_api.aggregator.remote import Backend, RemoteAPIServices
from platform_api.authentication.user import UserInfo

log = Logger()
Obj = dict[str, Any]
REFRESH = 60.0  # kube's discoveryRefreshInterval
TIMEOUT = 5.0
DISCOVERER = UserInfo("system:kube-aggregator")


class RemoteDiscovery:
    def __init__(self, remote: RemoteAPIServices, proxy: AggregatorProxy, reactor: Any) -> None:
        self.remote = remote
        self.proxy = proxy
        self.reactor = reactor
        self.generation = 0  # bumped by every change: discovery rebuilds its documents
        self._versions: dict[tuple[str, str], Obj] = {}  # APIVersionDiscovery entries
        self._seen: dict[tuple[str, str], Backend] = {}
        remote.on_change = self.changed
        self.loop = LoopingCall(self.refresh)
        self.loop.clock = reactor

    def version(self, group: str, version: str) -> Obj | None:
        """The APIVersionDiscovery of an aggregated group version, once synced."""
        return self._versions.get((group, version))

    def changed(self) -> None:
        """Sync group versions that are new, gone, or whose APIService changed."""
        current = self.remote.backends()
        for key in [k for k in self._versions if k not in current]:
            del self._versions[key]
            self._seen.pop(key, None)
            self.generation += 1
        for key, backend in current.items():
            if self._seen.get(key) != backend:
                self._seen[key] = backend
                self._start(key, backend)

    def refresh(self) -> None:
        for key, backend in self.remote.backends().items():
            self._start(key, backend)

    def _start(self, key: tuple[str, str], backend: Backend) -> None:
        d = ensureDeferred(self.sync(key, backend))
        d.addErrback(lambda f: log.failure("syncing discovery of {key}", f, key=key))

    async def sync(self, key: tuple[str, str], backend: Backend) -> None:
        group, version = key
        try:
            resources = await self._fetch(group, version, backend)
            entry = {"version": version, "resources": resources, "freshness": "Current"}
        except Exception as e:
            log.info("discovery of {g}/{v} is stale: {why}", g=group, v=version, why=str(e))
            before = self._versions.get(key) or {"version": version, "resources": []}
            entry = {**before, "freshness": "Stale"}
        if key not in self.remote.backends():
            return  # removed while asking
        if self._versions.get(key) != entry:
            self._versions[key] = entry
            self.generation += 1

    async def _fetch(self, group: str, version: str, backend: Backend) -> list[Obj]:
        if not backend.available:
            raise RuntimeError(f"service {backend.namespace}/{backend.service} is unavailable")
        address = self.proxy.address(backend)
        url = address.url(f"/apis/{group}/{version}")
        headers = Headers({b"Accept": [b"application/json"]})
        self.proxy.auth_headers(headers, DISCOVERER)
        client = self.proxy.client(backend, address)
        reply = await client.get(url, headers=headers, timeout=TIMEOUT)
        body = await reply.content()
        if reply.code != 200:
            raise RuntimeError(f"failed to download legacy discovery for {url}: {reply.code}")
        return to_aggregated(orjson.loads(body).get("resources") or [])


def to_aggregated(resources: list[Obj]) -> list[Obj]:
    """kube's ConvertGroupVersionIntoToDiscovery: an APIResourceList's resources as
    APIResourceDiscovery entries, subresources under their resource."""
    out: list[Obj] = []
    parents: dict[str, Obj] = {}
    for r in resources:
        if "/" in r.get("name", ""):
            continue
        entry: Obj = {"resource": r["name"], "responseKind": _kind(r), "scope": _scope(r)}
        if r.get("singularName"):
            entry["singularResource"] = r["singularName"]
        entry["verbs"] = r.get("verbs") or []
        for source, target in (("shortNames", "shortNames"), ("categories", "categories")):
            if r.get(source):
                entry[target] = r[source]
        out.append(entry)
        parents[r["name"]] = entry
    for r in resources:
        parent_name, _, sub = r.get("name", "").partition("/")
        if not sub:
            continue
        parent = parents.get(parent_name)
        if parent is None:
            empty = {"group": "", "version": "", "kind": ""}
            parent = {"resource": parent_name, "responseKind": empty, "scope": _scope(r)}
            parent["verbs"] = None  # Go marshals the parent's nil verbs as null
            out.append(parent)
            parents[parent_name] = parent
        kind = _kind(r) if r.get("kind") else {"group": "", "version": "", "kind": ""}
        parent.setdefault("subresources", []).append(
            {"subresource": sub, "responseKind": kind, "verbs": r.get("verbs") or []}
        )
    return out


def _kind(r: Obj) -> Obj:
    return {"group": r.get("group", ""), "version": r.get("version", ""), "kind": r.get("kind", "")}


def _scope(r: Obj) -> str:
    return "Namespaced" if r.get("namespaced") else "Cluster"
