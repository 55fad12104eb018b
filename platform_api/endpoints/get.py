"""get: one object (or its Table, or its metadata), with the resourceVersion rules of a get."""

from __future__ import annotations

from platform_api import errors
from platform_api.endpoints.cachespans import get_fields
from platform_api.endpoints.list import parse_revision
from platform_api.endpoints.options import arg, refuse_export
from platform_api.endpoints.scope import Scope
from platform_api.storage import spans
from platform_api.storage.interface import Stored


async def handle(scope: Scope) -> bytes:
    out = scope.output(table=True, partial="object")
    refuse_export(scope.request)
    version = arg(scope.request, b"resourceVersion") or ""
    scope.event("About to Get from storage")
    with spans.opened("cacher.Get", get_fields(scope, version)):
        stored = await _read(scope, version)
    return await scope.respond_object(stored, 200, out)


async def _read(scope: Scope, version: str) -> Stored:
    """The object as of ``version``, with the span events of kube's cache: a get with no
    resourceVersion reads the newest state (from the database, where the cache cannot
    prove itself current); any other from the cache once it is at least that new."""
    if not version:
        spans.event("About to Get from underlying storage")
        return await scope.handlers.current(scope.store, scope.namespace, scope.name)
    spans.event("About to fetch object from cache")
    spans.event("watchCache locked acquired")
    if version != "0":  # not older than: only a future revision waits
        revision = storage_revision(version)
        await scope.handlers.wait_for_revision(revision, prefix=scope.store.prefix)
    spans.event("watchCache fresh enough")
    return await scope.store.read(scope.namespace, scope.name)


def storage_revision(version: str) -> int:
    """A get's or a watch's resourceVersion: kube hands it to storage unparsed, and the
    storage's own parse error is no Status, so a malformed one is a bare 500."""
    try:
        return parse_revision(version)
    except errors.StatusError as e:
        raise errors.unknown(e.message.removeprefix("invalid resource version: ")) from None
