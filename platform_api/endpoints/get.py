"""get: one object (or its Table, or its metadata), with the resourceVersion rules of a get."""

from __future__ import annotations

from platform_api.endpoints.list import parse_revision
from platform_api.endpoints.options import arg
from platform_api.endpoints.responses import encode, finish
from platform_api.endpoints.scope import Scope


async def handle(scope: Scope) -> bytes:
    out = scope.output(table=True, partial="object")
    version = arg(scope.request, b"resourceVersion") or ""
    if version and version != "0":
        # Not older than: any state at least this new; only a future revision waits.
        await scope.handlers.wait_for_revision(parse_revision(version))
    stored = await scope.store.read(scope.namespace, scope.name)
    if out.view != "table":
        return scope.respond_object(stored, 200, out)
    include = arg(scope.request, b"includeObject") or "Metadata"
    meta = {"resourceVersion": stored.object["metadata"].get("resourceVersion", "")}
    table = scope.handlers.tables.table(
        scope.resource, [scope.outgoing(stored.object)], out.group, out.version, include, meta
    )
    body = encode(table, out.encoding, out.pretty)
    return finish(scope.request, 200, body, out.content_type, ctx=scope.ctx, compressible=True)
