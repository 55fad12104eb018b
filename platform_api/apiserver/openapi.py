"""/openapi/v2 and /openapi/v3, generated from the served types' schemas.

kubectl reads v3: ``explain`` renders the kind's schema, ``apply`` takes patch
strategies from it, and ``create``/``apply`` check that PATCH accepts
``fieldValidation`` so they can leave validation to the server.  Documents are built
on first request and kept; v3 URLs carry a hash so clients may cache them forever.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

import orjson
from twisted.internet.defer import Deferred, ensureDeferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import deferLater
from twisted.web.server import Request

from platform_api import heavy
from platform_api.apiserver import (
    openapiconnect,
    openapidefs,
    openapipaths,
    openapiproto,
    openapiroots,
    openapiswagger,
)
from platform_api.apiserver.discovery import KUBE_MAJOR, KUBE_MINOR, SERVER_VERSION
from platform_api.endpoints.negotiation import JSON, parse_accept
from platform_api.endpoints.responses import bare, finish
from platform_api.endpoints.servecontent import serve_content
from platform_api.gotext import go_escaped
from platform_api.scheme.aliases import Aliases
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import ResourceType, Subresource, group_version

INFO = {"title": "Kubernetes", "version": f"{KUBE_MAJOR}.{KUBE_MINOR}"}
CRD_INFO = {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}  # kube's CRD builder's
_ALWAYS = (
    "io.platform.apimachinery.pkg.apis.meta.v1.Status",
    "io.platform.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.platform.apimachinery.pkg.apis.meta.v1.Patch",
    "io.platform.apimachinery.pkg.apis.meta.v1.WatchEvent",
)


def _a_year_after(now: float) -> str:
    """kube-openapi's Expires of a hashed document: a year on (Go's AddDate, which makes
    29 February the next 1 March), in Go's RFC 1123 form."""
    moment = datetime.fromtimestamp(now, UTC)
    try:
        later = moment.replace(year=moment.year + 1)
    except ValueError:
        later = moment.replace(year=moment.year + 1, month=3, day=1)
    return later.strftime("%a, %d %b %Y %H:%M:%S UTC")


_Kept = tuple[list[ResourceType], Any, Any]
_K = TypeVar("_K", bound=_Kept)


def _built_from(cached: _K | None, resources: list[ResourceType]) -> _K | None:
    """A cache entry made from these very resource types, else None (a CRD's install
    makes new ones)."""
    if cached is None or len(cached[0]) != len(resources):
        return None
    return cached if all(x is y for x, y in zip(cached[0], resources, strict=True)) else None


class OpenAPI:
    """The documents, built on first request and rebuilt after the scheme changes."""

    def __init__(
        self,
        scheme: Scheme,
        aliases: Aliases | None = None,
        reactor: IReactorTime | None = None,
        deletes_to_object: Callable[[ResourceType], bool] = lambda rt: False,
    ) -> None:
        self._scheme = scheme
        self._deletes_to_object = deletes_to_object
        self._aliases = aliases
        self._reactor = reactor
        self._generation = -1
        # document key -> (the resource types it was built from, it, its digest): kept
        # across scheme changes while its types are the same objects (a CRD's install
        # makes new ones), so one CRD does not make every other group's document again.
        self._v3: dict[str, tuple[list[ResourceType], bytes, str]] = {}
        # the same for a served group version's part of /openapi/v2: (its types, its
        # paths, the definitions they name)
        self._v2_parts: dict[str, tuple[list[ResourceType], dict[str, Any], list[str]]] = {}
        self._v2: bytes | None = None
        self._v2_protobuf: bytes | None = None
        # document key -> (group name clients see, group serving it, version)
        self._gvs: dict[str, tuple[str, str, str]] = {}
        # document key -> the paths of a document that is no group version's, and those
        # documents as made (openapiroots.py)
        self._roots: dict[str, dict[str, Any]] = {}
        self._root_documents: dict[str, bytes] = {}
        # path -> (the document last served there, its ETag, when it first had that one)
        self._served_versions: dict[str, tuple[bytes, str, float]] = {}
        self._ensure()

    def _ensure(self) -> None:
        if self._generation == self._scheme.generation:
            return
        scheme = self._scheme
        self._generation = scheme.generation
        self._v2, self._v2_protobuf = None, None
        listed = [("", "")]
        for group in scheme.groups():
            listed.append((group, group))
            alias = self._aliases.upstream(group) if self._aliases is not None else ""
            if alias:
                listed.append((alias, group))
        self._gvs = {
            ("api/" if not name else "apis/") + group_version(name, v): (name, source, v)
            for name, source in listed
            for v in scheme.versions(source)
        }
        for cache in (self._v3, self._v2_parts):
            for key in [key for key in cache if key not in self._gvs]:
                del cache[key]
        # kube describes no custom group's discovery (its handler is no go-restful route)
        built_in = [n for n, source in listed if n and not self._custom_only(source)]
        self._roots = openapiroots.root_documents(dict.fromkeys(built_in))
        self._root_documents = {}

    def _custom_only(self, group: str) -> bool:
        scheme = self._scheme
        return all(rt.custom for v in scheme.versions(group) for rt in scheme.resources(group, v))

    def _hash(self, key: str) -> str:
        """The document's version for ``?hash=``: fixed for built-in groups, the content's
        digest where custom types (which change at run time) are served."""
        if key in self._gvs:
            _, group, version = self._gvs[key]
            if any(rt.custom for rt in self._scheme.resources(group, version)):
                return self._v3_entry(key)[2]
        return hashlib.sha512(f"{SERVER_VERSION}/{key}".encode()).hexdigest()[:128].upper()

    def _upstream(self, group: str) -> str:
        return (self._aliases.upstream(group) if self._aliases else "") or group

    def _defined(self, definition: str) -> str | None:
        return definition if definition in self._scheme.schemas.definitions else None

    def _subresource_definition(self, rt: ResourceType, sub: Subresource) -> str | None:
        """The schema a subresource takes and gives (``rt`` under its served group)."""
        if sub.kind == rt.kind and not sub.version:
            return rt.definition
        try:
            return self._scheme.schemas.for_kind(*rt.gvk(sub.name))
        except KeyError:
            return None

    def v3_document(self, key: str) -> bytes:
        if key in self._roots:
            if key not in self._root_documents:
                paths = self._roots[key]
                self._root_documents[key] = self._v3_bytes(paths, openapidefs.named(paths))
            return self._root_documents[key]
        return self._v3_entry(key)[1]

    def _v3_bytes(
        self,
        paths: dict[str, Any],
        roots: list[str],
        names: tuple[str, str] | None = None,
        custom: bool = False,
    ) -> bytes:
        """A v3 document of ``paths``, with the definitions ``roots`` need; ``names``: the
        group name it shows for the served group (an upstream name's document);
        ``custom``: custom resources' alone, which kube's CRD builder describes (its own
        title, no security scheme)."""
        schemas = openapidefs.definitions(self._scheme, roots, False)
        if names is not None:
            schemas = {n: openapidefs.regroup(d, names[1], names[0]) for n, d in schemas.items()}
        components: dict[str, Any] = {"schemas": schemas} if schemas else {}  # none: no key
        if not custom:
            components["securitySchemes"] = openapiroots.BEARER
        info = CRD_INFO if custom else INFO
        doc = {"openapi": "3.0.0", "info": info, "paths": paths, "components": components}
        return go_escaped(orjson.dumps(doc))

    def _v3_entry(self, key: str) -> tuple[list[ResourceType], bytes, str]:
        name, group, version = self._gvs[key]
        resources = self._scheme.resources(group, version)
        cached = _built_from(self._v3.get(key), resources)
        if cached is not None:
            return cached
        paths, roots, _ = self._paths(key, resources)
        renamed = (name, group) if name != group else None
        custom = all(rt.custom for rt in resources)
        document = self._v3_bytes(paths, roots, renamed, custom)
        self._v3[key] = (resources, document, hashlib.sha512(document).hexdigest()[:128].upper())
        return self._v3[key]

    def _paths(
        self, key: str, built: list[ResourceType]
    ) -> tuple[dict[str, Any], list[str], set[str]]:
        """A group version's v3 paths (``built``: its resource types), the definitions
        they name, and which of the paths are custom resources'."""
        name, group, version = self._gvs[key]
        resources = built
        if name != group:  # an upstream group name: the same types, renamed
            resources = [dataclasses.replace(rt, group=name) for rt in built]
        paths: dict[str, Any] = {}
        roots: list[str] = []  # what the paths name: Status and the rest only if they do
        if not all(rt.custom for rt in built):  # kube lists no custom group version's own
            paths = openapiroots.resource_list_path(name, version)
            roots.append(openapipaths.RESOURCE_LIST)
        rename = self._upstream if name != group else None
        custom: set[str] = set()
        for rt, source in zip(resources, built, strict=True):
            rt_paths = openapipaths.paths(
                rt,
                self._defined(rt.definition + "List"),
                partial(self._subresource_definition, source),
                deletes_to_object=self._deletes_to_object(source),
                rename=rename,
            )
            rt_paths.update(openapiconnect.paths(rt))
            paths.update(rt_paths)
            roots += openapidefs.named(rt_paths)
            if rt.custom:
                custom.update(rt_paths)
        return paths, roots, custom

    async def _render_index(self, request: Request) -> bytes:
        await self.built()
        # kube's index handler reads no Accept and names no media type (Go sniffs one),
        # and sends no ETag.
        body = self.v3_index()
        _, modified = self._version("/openapi/v3", body)
        return serve_content(request, body, b"text/plain; charset=utf-8", modified, {})

    def _version(self, path: str, body: bytes, etag: str = "") -> tuple[str, float]:
        """The ETag of the document ``body`` served at ``path`` (``etag``, else its
        digest) and its Last-Modified: when ``path`` first served that version, and in a
        later second than the version before (a date has whole seconds: a client that
        read the last version in the second this one came would be told it is current)."""
        known = self._served_versions.get(path)
        if known is not None and known[0] is body:
            return known[1], known[2]
        etag = etag or hashlib.sha512(body).hexdigest().upper()
        if known is not None and known[1] == etag:
            modified = known[2]
        else:
            modified = self._reactor.seconds() if self._reactor is not None else time.time()
            if known is not None:
                modified = max(modified, float(int(known[2]) + 1))
        self._served_versions[path] = (body, etag, modified)
        return etag, modified

    async def built(self) -> None:
        """Build the custom groups' documents the index must hash, one per reactor turn:
        the first index with 300 CRDs is ~0.4 s of building, which held every other
        request.  (What changes meanwhile ``v3_index`` builds at once.)"""
        await self._in_turns(list(self._gvs), self._v3, self._v3_entry)

    async def _in_turns(
        self, keys: list[str], cache: dict[str, Any], build: Callable[[str], object]
    ) -> None:
        """``build`` what ``cache`` does not hold of the custom groups' ``keys``, one
        group version per reactor turn."""
        if self._reactor is None:
            return
        for key in keys:
            _, group, version = self._gvs[key]
            resources = self._scheme.resources(group, version)
            if not any(rt.custom for rt in resources) or _built_from(cache.get(key), resources):
                continue
            await deferLater(self._reactor, 0, lambda: None)
            self._ensure()
            if key in self._gvs:
                build(key)

    def v3_index(self) -> bytes:
        paths = {
            key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={self._hash(key)}"}
            for key in [*self._gvs, *self._roots]
        }
        return orjson.dumps({"paths": paths})

    def v2_document(self) -> bytes:
        """Every served group version's paths and the definitions they name, with
        discovery's, as kube's aggregated v2 document.  Groups are named as served: an
        upstream name (``--serve-upstream-groups``) would repeat every operation ID in
        one document, and the definitions name the served groups (v3 has a document for
        each name)."""
        if self._v2 is None:
            served = self._served()
            paths: dict[str, Any] = {}
            roots = [*_ALWAYS, *(rt.definition for rt in self._scheme.all())]
            groups = {f"apis/{self._gvs[key][0]}" for key in served}
            for key, root_paths in self._roots.items():
                if key in groups or not key.startswith("apis/"):  # no upstream group names
                    paths.update(openapiswagger.paths(root_paths, {}))
                    roots += openapidefs.named(root_paths)
            for key in served:
                _, part, named = self._v2_part(key)
                paths.update(part)
                roots += named
            paths, parameters = openapiswagger.share_parameters(paths)
            definitions = openapidefs.definitions(self._scheme, roots, True)
            doc = {
                "swagger": "2.0",
                "info": INFO,
                "paths": paths,
                "definitions": definitions,
                "parameters": parameters,
                "securityDefinitions": openapiswagger.SECURITY_DEFINITIONS,
                "security": openapiswagger.SECURITY,
            }
            self._v2 = orjson.dumps(doc)
        return self._v2

    def _served(self) -> list[str]:
        """The group versions under the names they are served by (no upstream names)."""
        return [key for key, (name, group, _) in self._gvs.items() if name == group]

    def _v2_part(self, key: str) -> tuple[list[ResourceType], dict[str, Any], list[str]]:
        _, group, version = self._gvs[key]
        resources = self._scheme.resources(group, version)
        part = _built_from(self._v2_parts.get(key), resources)
        if part is None:
            v3_paths, roots, custom = self._paths(key, resources)
            v2_paths = openapiswagger.paths(v3_paths, {}, custom)
            part = self._v2_parts[key] = (resources, v2_paths, roots)
        return part

    async def _v2_protobuf_made(self) -> bytes:
        """The Protobuf form, made on the large requests' thread (heavy.py): with 300
        CRDs it is ~0.25 s of writing, which held every other request."""
        document = self.v2_document()
        if self._v2_protobuf is not None or self._reactor is None:
            return self.v2_protobuf()
        heavy.mark(self._reactor, len(document))
        made = await heavy.run(openapiproto.document, orjson.loads(document))
        if self._v2 is document:  # the scheme did not change meanwhile
            self._v2_protobuf = made
        return made

    def v2_protobuf(self) -> bytes:
        if self._v2_protobuf is None:
            self._v2_protobuf = openapiproto.document(orjson.loads(self.v2_document()))
        return self._v2_protobuf

    async def _render_v2(self, request: Request, chosen: str) -> bytes:
        await self._in_turns(self._served(), self._v2_parts, self._v2_part)
        if chosen == "protobuf":
            body, media = await self._v2_protobuf_made(), openapiproto.MEDIA_TYPE
        else:
            body, media = self.v2_document(), JSON
        etag, modified = self._version(f"/openapi/v2 {chosen}", body)
        headers = {"etag": f'"{etag}"'}
        return serve_content(request, body, media.encode(), modified, headers, compressible=True)

    def render(self, request: Request, path: str) -> bytes | Deferred[bytes]:
        self._ensure()
        accepted = [
            m.type for m in parse_accept((request.getHeader(b"accept") or b"").decode("latin-1"))
        ]
        if path == "/openapi/v3":  # kube-openapi: ``/openapi/v3/`` is no document
            return ensureDeferred(self._render_index(request))
        key = path[len("/openapi/v3/") :]
        if path != "/openapi/v2" and key not in self._gvs and key not in self._roots:
            return bare(request, 404)  # before Accept is read, as kube-openapi does
        if path == "/openapi/v2":  # kube's v2 handler compresses; its v3 documents never
            request.responseHeaders.setRawHeaders(b"vary", [b"Accept-Encoding", b"Accept"])
        else:
            request.setHeader(b"vary", b"Accept")
        if path == "/openapi/v2":
            chosen = openapiproto.negotiate(accepted)
            if chosen is None:
                return bare(request, 406)
            return ensureDeferred(self._render_v2(request, chosen))
        if not any(t in (JSON, "*/*", "application/*") for t in accepted):
            return bare(request, 406)
        digest = self._hash(key)
        headers = {"etag": f'"{digest}"'}
        asked = request.args.get(b"hash", [b""])[0].decode("latin-1")
        if asked and asked != digest:  # kube-openapi sends the client to the current one
            headers["location"] = f"/openapi/v3/{key}?hash={digest}"
            return finish(request, 301, b"", JSON.encode(), headers=headers)
        if asked:  # the hash names this content: cacheable for a year, as kube's
            headers["cache-control"] = "public, immutable"
            now = self._reactor.seconds() if self._reactor is not None else time.time()
            headers["expires"] = _a_year_after(now)
        body = self.v3_document(key)
        _, modified = self._version(path, body, digest)
        return serve_content(request, body, JSON.encode(), modified, headers)
