"""Discovery documents, built once from the scheme: /api, /apis, their groups and versions.

Clients asking for aggregated discovery (``apidiscovery.platform.io/v2``) get one
document per prefix; stock kubectl asks for the ``apidiscovery.k8s.io`` name, which
is not offered, so it falls back to the plain documents listed after it in Accept.
"""

from __future__ import annotations

import hashlib
import platform
import sys
from collections.abc import Callable
from typing import Any

import orjson
from twisted.web.server import Request

from platform_api import errors
from platform_api.aggregator.registration import CUSTOM_PRIORITY, PRIORITIES
from platform_api.aggregator.remote import RemoteAPIServices
from platform_api.aggregator.remotediscovery import RemoteDiscovery
from platform_api.apiserver import discoveryentries as entries_of
from platform_api.endpoints import serializespan
from platform_api.endpoints.negotiation import (
    DISCOVERY_GROUPS,
    OBJECT_PRODUCES,
    check_produces,
    negotiate_output,
)
from platform_api.endpoints.responses import finish, is_pretty
from platform_api.endpoints.serializespan import Serialized
from platform_api.registry.apiregistration import GROUP as APIREGISTRATION
from platform_api.scheme.aliases import Aliases
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import (
    api_path,
    group_version,
)

KUBE_MAJOR, KUBE_MINOR = "1", "36"
UPSTREAM_DISCOVERY = "apidiscovery.k8s.io"
SERVER_VERSION = "0.1.0"


def version_info() -> dict[str, str]:
    """Every field of kube's VersionInfo (the Python client rejects a missing one)."""
    machine = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return {
        "major": KUBE_MAJOR,
        "minor": KUBE_MINOR,
        "emulationMajor": KUBE_MAJOR,
        "emulationMinor": KUBE_MINOR,
        "minCompatibilityMajor": KUBE_MAJOR,
        "minCompatibilityMinor": str(int(KUBE_MINOR) - 1),
        "gitVersion": f"v{KUBE_MAJOR}.{KUBE_MINOR}.0+platform.{SERVER_VERSION}",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-22T00:00:00Z",
        "goVersion": f"python{sys.version.split()[0]}",
        "compiler": platform.python_implementation().lower(),
        "platform": f"{sys.platform}/{machine}",
    }


class Discovery:
    """The documents, rebuilt on the first request after the scheme changed."""

    def __init__(
        self,
        scheme: Scheme,
        server_address: str | Callable[[], str],
        aliases: Aliases | None = None,
        remote: RemoteAPIServices | None = None,
        remote_discovery: RemoteDiscovery | None = None,
    ) -> None:
        self._scheme = scheme
        self._remote = remote  # aggregated servers' groups, listed in the legacy documents
        self._remote_discovery = remote_discovery  # and their resources, in the aggregated
        # A callable when the port is known only once listening (port 0): read at the first
        # request, not at build.
        self._address = server_address
        self._aliases = aliases
        self._generation: tuple[int, int, int] = (-1, -1, -1)
        self._docs: dict[str, bytes] = {}
        self._aggregated: dict[str, tuple[bytes, str]] = {}
        self._paths: list[str] = []  # what ``/`` lists of discovery, built with the documents

    def _ensure(self) -> None:
        generation = (
            self._scheme.generation,
            self._remote.generation if self._remote else 0,
            self._remote_discovery.generation if self._remote_discovery else 0,
        )
        if self._generation != generation:
            self._generation = generation
            self._docs, self._aggregated = {}, {}
            address = self._address() if callable(self._address) else self._address
            self._build(self._scheme, address)

    def _listed(self) -> list[tuple[str, str]]:
        """(name clients see, group serving it): each group, after its upstream name.

        A client resolving a bare resource name (``kubectl get roles``, ``describe
        ingress``) takes the first group listing it, and a short name from the one entry
        listing it: kube's name, as on kube, so stock kubectl picks its typed describers
        and prints ``role.rbac.authorization.k8s.io/r``."""
        out = []
        for group in self._scheme.groups():
            alias = self._aliases.upstream(group) if self._aliases is not None else ""
            if alias:
                out.append((alias, group))
            out.append((group, group))
        return out

    def _shortcuts(self, name: str, source: str) -> bool:
        """Whether ``name``'s resources list short names and categories: under the first
        of a group's two names only."""
        return name != source or self._aliases is None or not self._aliases.upstream(source)

    def _group_doc(self, name: str, source: str) -> dict[str, Any]:
        versions = [
            {"groupVersion": group_version(name, v), "version": v}
            for v in self._scheme.versions(source)
        ]
        return {"name": name, "versions": versions, "preferredVersion": versions[0]}

    def _build(self, scheme: Scheme, address: str) -> None:
        cidrs = [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]
        self._docs["/api"] = _json(
            {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": cidrs}
        )
        listed = self._listed()
        groups = self._with_remote([self._group_doc(name, source) for name, source in listed])
        self._docs["/apis"] = _json({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        self._paths = ["/api", "/api/v1", "/apis", "/apis/"]
        for group in groups:
            self._paths.append(f"/apis/{group['name']}")
            self._paths += [f"/apis/{v['groupVersion']}" for v in group["versions"]]
        for group_doc in groups:
            self._docs[f"/apis/{group_doc['name']}"] = _json(
                {"kind": "APIGroup", "apiVersion": "v1", **group_doc}
            )
        for name, source in [("", ""), *listed]:
            for version in scheme.versions(source):
                # Built-in routes sort by path; a custom resource's entries stay
                # together in kube's order (the resource, its status, its scale).
                keyed: list[tuple[tuple[str, int], dict[str, Any]]] = []
                for rt in scheme.resources(source, version):
                    stored_as = entries_of.stored_as(scheme, rt)
                    entries = entries_of.resource_entries(
                        rt, self._shortcuts(name, source), stored_as
                    )
                    keyed += [
                        ((rt.plural, i) if rt.custom else (entry["name"], 0), entry)
                        for i, entry in enumerate(entries)
                    ]
                resources = [entry for _, entry in sorted(keyed, key=lambda pair: pair[0])]
                doc: dict[str, Any] = {"kind": "APIResourceList"}
                if name:
                    doc["apiVersion"] = "v1"
                doc["groupVersion"] = group_version(name, version)
                doc["resources"] = resources
                self._docs[api_path(name, version)] = _json(doc)
        self._aggregated["/api"] = self._aggregate([("", "")])
        self._aggregated["/apis"] = self._aggregate(listed, [g["name"] for g in groups])

    def _with_remote(self, groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Aggregated servers' groups placed among ours by group priority, as kube's
        aggregator lists them (its aggregated document lists only what it could fetch
        from them: nothing here, where they are not proxied)."""
        if self._remote is None:
            return groups
        ranked = [(self._priority(g["name"]), g["name"], g) for g in groups]
        for name, priority, versions in self._remote.groups():
            if self._scheme.versions(name):
                continue  # served here: ours
            listed = [{"groupVersion": group_version(name, v), "version": v} for v in versions]
            doc = {"name": name, "versions": listed, "preferredVersion": listed[0]}
            at = next((i for i, r in enumerate(ranked) if (r[0], name) < (priority, r[1])), None)
            ranked.insert(len(ranked) if at is None else at, (priority, name, doc))
        return [doc for _, _, doc in ranked]

    def _priority(self, name: str) -> int:
        """A served group's place: the aggregator's own first, then kube's priorities."""
        group = (self._aliases.branded(name) if self._aliases is not None else "") or name
        if group == APIREGISTRATION:
            return 1 << 31
        versions = self._scheme.versions(group)
        found = [PRIORITIES[(group, v)][0] for v in versions if (group, v) in PRIORITIES]
        return max(found, default=CUSTOM_PRIORITY[0])

    def _aggregate(
        self, listed: list[tuple[str, str]], order: list[str] | None = None
    ) -> tuple[bytes, str]:
        """The aggregated document: ``listed`` groups, and aggregated servers' groups
        where ``order`` (the legacy list's, by priority) places them."""
        scheme = self._scheme
        sources = dict(listed)
        items = []
        for name in order if order is not None else list(sources):
            if name in sources:
                versions = [
                    {
                        "version": version,
                        "resources": [
                            entries_of.aggregated_resource(
                                rt, name, self._shortcuts(name, sources[name])
                            )
                            for rt in scheme.resources(sources[name], version)
                        ],
                        "freshness": "Current",
                    }
                    for version in scheme.versions(sources[name])
                ]
            else:
                versions = self._remote_versions(name)
            if versions:
                # the core group's name is "": omitted, as Go writes an empty ObjectMeta
                items.append({"metadata": {"name": name} if name else {}, "versions": versions})
        body = _json(
            {
                "kind": "APIGroupDiscoveryList",
                "apiVersion": "apidiscovery.platform.io/v2",
                "metadata": {},
                "items": items,
            }
        )
        return body, '"' + hashlib.sha256(body).hexdigest()[:32].upper() + '"'

    def _remote_versions(self, group: str) -> list[dict[str, Any]]:
        """An aggregated server's versions of ``group`` that discovery has synced."""
        if self._remote is None or self._remote_discovery is None:
            return []
        for name, _, versions in self._remote.groups():
            if name == group:
                found = [self._remote_discovery.version(group, v) for v in versions]
                return [v for v in found if v is not None]
        return []

    def _aggregated_as(self, path: str, group: str) -> tuple[bytes, str]:
        """The aggregated document, its apiVersion in the discovery group asked for."""
        body, etag = self._aggregated[path]
        if group == UPSTREAM_DISCOVERY:
            body = body.replace(
                b'"apiVersion":"apidiscovery.platform.io/v2"',
                f'"apiVersion":"{UPSTREAM_DISCOVERY}/v2"'.encode(),
                1,
            )
            etag = '"' + hashlib.sha256(body).hexdigest()[:32].upper() + '"'
        return body, etag

    def listed_paths(self) -> list[str]:
        """The discovery paths kube's ``/`` lists: ``/api`` and its version, ``/apis``
        with and without its slash, each group and each version it serves (custom and
        aggregated groups too)."""
        self._ensure()
        return list(self._paths)

    def serves(self, path: str) -> bool:
        """Whether ``path`` is a discovery document (not a 404)."""
        self._ensure()
        return (path.rstrip("/") or path) in self._docs

    def render(self, request: Request, path: str) -> bytes:
        self._ensure()
        path = path.rstrip("/") or path
        accept = (request.getHeader(b"accept") or b"").decode("latin-1")
        groups: tuple[str, ...] = DISCOVERY_GROUPS
        if self._aliases is not None and self._aliases.enabled:
            groups = (*groups, UPSTREAM_DISCOVERY)  # stock clients' name for it
        if _restful(path) and (path in self._docs or path in self._aggregated):
            check_produces(accept, OBJECT_PRODUCES)
        out = negotiate_output(accept, discovery=path in self._aggregated, discovery_groups=groups)
        if out.view == "discovery":
            body, etag = self._aggregated_as(path, out.group)
            request.setHeader(b"etag", etag.encode())
            request.setHeader(b"vary", b"Accept")
            if request.getHeader(b"if-none-match") == etag.encode():
                return finish(request, 304, b"", out.content_type)
            serialized = _serialized(request, path, f"{out.group}/v2")
            body = _pretty_if_asked(request, body)
            return finish(request, 200, body, out.content_type, serialized=serialized)
        doc = self._docs.get(path)
        if doc is None:
            parts = path.split("/")  # "", "apis", group, ...
            group = parts[2] if len(parts) > 2 and parts[1] == "apis" else ""
            if group and ("/apis/" + group not in self._docs or self._scheme.custom_group(group)):
                raise errors.page_not_found()  # a group nobody serves, or a CRD group
            raise errors.path_not_found()
        # (no Vary here: kube's unaggregated documents have none, its aggregated ones do)
        body, serialized = _pretty_if_asked(request, doc), _serialized(request, path, "")
        return finish(request, 200, body, b"application/json", serialized=serialized)


def _restful(path: str) -> bool:
    """Whether kube serves ``path`` through a go-restful route (/api, /api/v1, a group's
    version), whose 406 is go-restful's; /apis and /apis/<group> are plain handlers that
    refuse through content negotiation instead."""
    parts = path.split("/")  # "", "apis", group, version
    return not (parts[1:2] == ["apis"] and len(parts) <= 3)


def _serialized(request: Request, path: str, group_version: str) -> Serialized | None:
    if not serializespan.traced(request):
        return None
    return serializespan.for_discovery(path, is_pretty(request), group_version)


def _pretty_if_asked(request: Request, body: bytes) -> bytes:
    """A prepared JSON document indented for clients kube indents for (curl, ?pretty)."""
    if body[:1] != b"{" or not is_pretty(request):
        return body
    return orjson.dumps(orjson.loads(body), option=orjson.OPT_INDENT_2)


def _json(doc: dict[str, Any]) -> bytes:
    """A discovery document as kube's serializer writes it: JSON and a newline."""
    return orjson.dumps(doc, option=orjson.OPT_APPEND_NEWLINE)
