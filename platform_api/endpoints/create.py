"""create: POST on a collection."""

from __future__ import annotations

from platform_api.endpoints.body import decode_write
from platform_api.endpoints.ownerrefs import BEFORE, dedup_owner_references
from platform_api.endpoints.scope import Scope


async def handle(scope: Scope) -> bytes:
    opts, out, obj = await decode_write(scope, "CreateOptions", transforms=True)
    dedup_owner_references(obj, scope.ctx.warn, BEFORE)
    stored = await scope.written(
        scope.store.create(
            scope.namespace,
            obj,
            dry_run=opts.dry_run,
            admit=scope.validator("CREATE"),
            track=scope.tracker(),
            mutate=scope.mutator(),
        )
    )
    return await scope.respond_object(stored, 201, out)
