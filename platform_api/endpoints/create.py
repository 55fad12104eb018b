"""create: POST on a collection."""

from __future__ import annotations

from platform_api.endpoints.body import decode_write
from platform_api.endpoints.scope import Scope


async def handle(scope: Scope) -> bytes:
    opts, out, obj = decode_write(scope, "CreateOptions")
    scope.store.default(obj)
    name = obj["metadata"].get("name", "")
    await scope.handlers.admission.admit(scope, "CREATE", obj, name)
    admit = scope.validator("CREATE")
    stored = await scope.store.create(
        scope.namespace, obj, dry_run=opts.dry_run, admit=admit, track=scope.tracker()
    )
    return scope.respond_object(stored, 201, out)
