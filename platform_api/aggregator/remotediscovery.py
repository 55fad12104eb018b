"""Aggregated servers' resources in this server's aggregated discovery document:
kube-aggregator's discovery manager.

Every APIService naming a Service gets an entry for its group version, fetched through
the proxy's transport as ``system:kube-aggregator``: first the server's own aggregated
document (``GET /apis`` asking for ``APIGroupDiscoveryList`` v2 or v2beta1, under this
platform's discovery group or kube's; kept per Service with its ETag, so the group
versions one server serves share one fetch and a 304 keeps it), its entry for the
group version taken as the server wrote it; failing that, the legacy list
(``GET /apis/<group>/<version>``) converted as kube converts one.  Freshness is
``Current``, or ``Stale`` with no resources when the server is unavailable or its
answer unusable, as kube's.  Entries are fetched when an APIService changes and again
every minute, a failed one again after half a second, doubling up to a minute, as
kube's are; each worker keeps its own.
"""

from __future__ import annotations

from dataclasses import dataclass
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
FIRST_RETRY = 0.5  # a failed fetch is retried after this, doubling up to REFRESH (kube's)
DISCOVERER = UserInfo("system:kube-aggregator")
# kube asks for the aggregated document as a member of system:masters
DOCUMENT_READER = UserInfo("system:kube-aggregator", groups=("system:masters",))
# an aggregated server of this platform names its documents as this server does; one
# built on kube's libraries, as kube does
DOCUMENT_GROUPS = ("apidiscovery.platform.io", "apidiscovery.k8s.io")
ACCEPT_DOCUMENT = ",".join(
    f"application/json;g={group};v={version};as=APIGroupDiscoveryList"
    for group in DOCUMENT_GROUPS
    for version in ("v2", "v2beta1")
).encode()
ServiceKey = tuple[str, str, int]  # the Service an APIService names: namespace, name, port
EMPTY_KIND = {"group": "", "version": "", "kind": ""}


@dataclass
class Document:
    """An aggregated server's own discovery document: its ETag, and each group
    version's APIVersionDiscovery."""

    etag: str
    versions: dict[tuple[str, str], Obj]


class RemoteDiscovery:
    def __init__(self, remote: RemoteAPIServices, proxy: AggregatorProxy, reactor: Any) -> None:
        self.remote = remote
        self.proxy = proxy
        self.reactor = reactor
        self.generation = 0  # bumped by every change: discovery rebuilds its documents
        self._versions: dict[tuple[str, str], Obj] = {}  # APIVersionDiscovery entries
        self._seen: dict[tuple[str, str], Backend] = {}
        self._documents: dict[ServiceKey, Document] = {}
        self._retries: dict[tuple[str, str], Any] = {}  # key -> (delay, its DelayedCall)
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
            self._retry(key, None, failed=False)
            self.generation += 1
        for key, backend in current.items():
            if self._seen.get(key) != backend:
                self._seen[key] = backend
                self._start(key, backend)
        services = {(b.namespace, b.service, b.port) for b in current.values()}
        for service in [s for s in self._documents if s not in services]:
            del self._documents[service]

    def refresh(self) -> None:
        for key, backend in self.remote.backends().items():
            self._start(key, backend)

    def _start(self, key: tuple[str, str], backend: Backend) -> None:
        d = ensureDeferred(self.sync(key, backend))
        d.addErrback(lambda f: log.failure("syncing discovery of {key}", f, key=key))

    async def sync(self, key: tuple[str, str], backend: Backend) -> None:
        group, version = key
        try:
            entry = {**await self._fetch(group, version, backend), "freshness": "Current"}
        except Exception as e:
            log.info("discovery of {g}/{v} is stale: {why}", g=group, v=version, why=str(e))
            entry = {"version": version, "freshness": "Stale"}  # kube's: no resources
        if key not in self.remote.backends():
            return  # removed while asking
        self._retry(key, backend, entry["freshness"] == "Stale")
        if self._versions.get(key) != entry:
            self._versions[key] = entry
            self.generation += 1

    def _retry(self, key: tuple[str, str], backend: Backend | None, failed: bool) -> None:
        """After a failure, fetch again after a delay doubling from FIRST_RETRY up to
        REFRESH (kube's rate limiter); a success forgets it."""
        delay, call = self._retries.pop(key, (0.0, None))
        if call is not None and call.active():
            call.cancel()
        if failed:
            delay = min(REFRESH, delay * 2 if delay else FIRST_RETRY)
            call = self.reactor.callLater(delay, self._start, key, backend)
            self._retries[key] = (delay, call)

    async def _fetch(self, group: str, version: str, backend: Backend) -> Obj:
        """The group version's APIVersionDiscovery from its server: its own document's
        entry (none there: no resources), else its legacy list converted."""
        if not backend.available:
            raise RuntimeError(f"service {backend.namespace}/{backend.service} is unavailable")
        document = await self._document(backend)
        if document is None:
            return {"version": version, "resources": await self._legacy(group, version, backend)}
        return document.versions.get((group, version)) or {"version": version}

    def _request(
        self, backend: Backend, path: str, accept: bytes, who: UserInfo
    ) -> tuple[str, Headers, Any]:
        """The URL, headers and client of a GET of ``path`` from the server, as ``who``."""
        address = self.proxy.address(backend)
        headers = Headers({b"Accept": [accept]})
        self.proxy.auth_headers(headers, who)
        return address.url(path), headers, self.proxy.client(backend, address)

    async def _document(self, backend: Backend) -> Document | None:
        """The server's aggregated document (None: it answers none), kept per Service."""
        service = (backend.namespace, backend.service, backend.port)
        cached = self._documents.get(service)
        url, headers, client = self._request(backend, "/apis", ACCEPT_DOCUMENT, DOCUMENT_READER)
        if cached is not None and cached.etag:
            headers.setRawHeaders(b"If-None-Match", [cached.etag.encode()])
        reply = await client.get(url, headers=headers, timeout=TIMEOUT)
        body = await reply.content()
        if reply.code == 304 and cached is not None:
            return cached
        if reply.code == 503:
            raise RuntimeError(f"service {backend.namespace}/{backend.service} returned 503")
        media = (reply.headers.getRawHeaders(b"content-type") or [b""])[0].decode("latin-1")
        if reply.code != 200 or not is_group_discovery_list(media):
            return None
        versions = document_versions(orjson.loads(body))
        etag = (reply.headers.getRawHeaders(b"etag") or [b""])[0].decode("latin-1")
        self._documents[service] = document = Document(etag, versions)
        return document

    async def _legacy(self, group: str, version: str, backend: Backend) -> list[Obj]:
        path = f"/apis/{group}/{version}"
        url, headers, client = self._request(backend, path, b"application/json", DISCOVERER)
        reply = await client.get(url, headers=headers, timeout=TIMEOUT)
        body = await reply.content()
        if reply.code != 200:
            raise RuntimeError(f"failed to download legacy discovery for {url}: {reply.code}")
        return to_aggregated(orjson.loads(body).get("resources") or [])


def is_group_discovery_list(media: str) -> bool:
    """Whether a Content-Type is an aggregated discovery document (v2 or v2beta1, either
    group), its parameters in any order."""
    kind, _, rest = media.partition(";")
    if kind.strip().lower() != "application/json":
        return False
    params = dict(p.strip().partition("=")[::2] for p in rest.split(";") if "=" in p)
    return (
        params.get("g") in DOCUMENT_GROUPS
        and params.get("v") in ("v2", "v2beta1")
        and params.get("as") == "APIGroupDiscoveryList"
    )


def document_versions(document: Any) -> dict[tuple[str, str], Obj]:
    """(group, version) -> APIVersionDiscovery of an APIGroupDiscoveryList, a missing
    response kind made the empty one (kube does so for old clients' sake).  A document
    kube could not decode into its types raises ValueError."""
    if not isinstance(document, dict):
        raise ValueError("not an APIGroupDiscoveryList")
    out: dict[tuple[str, str], Obj] = {}
    for item in _objects(document.get("items"), "items"):
        name = _string(_object(item.get("metadata"), "metadata").get("name"), "name")
        for entry in _objects(item.get("versions"), "versions"):
            for resource in _objects(entry.get("resources"), "resources"):
                parts = [resource, *_objects(resource.get("subresources"), "subresources")]
                for part in parts:
                    if part.get("responseKind") is None:
                        part["responseKind"] = dict(EMPTY_KIND)
                    _object(part["responseKind"], "responseKind")
            out[(name, _string(entry.get("version"), "version"))] = entry
    return out


def _object(value: Any, what: str) -> Obj:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what}: an object expected")
    return value


def _objects(value: Any, what: str) -> list[Obj]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError(f"{what}: a list of objects expected")
    return value


def _string(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{what}: a string expected")
    return value


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
            parent = {"resource": parent_name, "responseKind": dict(EMPTY_KIND), "scope": _scope(r)}
            parent["verbs"] = None  # Go marshals the parent's nil verbs as null
            out.append(parent)
            parents[parent_name] = parent
        kind = _kind(r) if r.get("kind") else dict(EMPTY_KIND)
        parent.setdefault("subresources", []).append(
            {"subresource": sub, "responseKind": kind, "verbs": r.get("verbs") or []}
        )
    return out


def _kind(r: Obj) -> Obj:
    return {"group": r.get("group", ""), "version": r.get("version", ""), "kind": r.get("kind", "")}


def _scope(r: Obj) -> str:
    return "Namespaced" if r.get("namespaced") else "Cluster"
