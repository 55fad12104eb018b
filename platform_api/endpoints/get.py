"""get: one object (or its Table, or its metadata), with the resourceVersion rules of a get."""

from __future__ import annotations

from platform_api import errors
from platform_api.endpoints.list import parse_revision
from platform_api.endpoints.options import arg
from platform_api.endpoints.responses import encode, finish
from platform_api.endpoints.scope import Scope


async def handle(scope: Scope) -> bytes:
    out = scope.output(table=True, partial="object")
    version = arg(scope.request, b"resourceVersion") or ""
    if version and version != "0":
        # Not older than: any state at least this new; only a future revision waits.
        await scope.handlers.wait_for_revision(storage_revision(version))
    elif not version:
        await scope.handlers.consistent_read()
    scope.event("About to Get from storage")
    stored = await scope.store.read(scope.namespace, scope.name, consistent=not version)
    if out.view != "table":
        return await scope.respond_object(stored, 200, out)
    include = arg(scope.request, b"includeObject") or "Metadata"
    meta = {"resourceVersion": stored.object["metadata"].get("resourceVersion", "")}
    table = scope.handlers.tables.table(
        scope.resource, [scope.outgoing(stored.object)], out.group, out.version, include, meta
    )
    body = encode(table, out.encoding, out.pretty)
    return finish(scope.request, 200, body, out.content_type, ctx=scope.ctx, compressible=True)


def storage_revision(version: str) -> int:
    """A get's or a watch's resourceVersion: kube hands it to storage unparsed, and the
    storage's own parse error is no Status, so a malformed one is a bare 500."""
    try:
        return parse_revision(version)
    except errors.StatusError as e:
        raise errors.unknown(e.message.removeprefix("invalid resource version: ")) from None
