"""update: PUT on an object or its status (create-on-update where the kind allows it)."""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.endpoints.body import decode_write
from platform_api.endpoints.scope import Scope
from platform_api.registry.prepare import check_put_target


async def handle(scope: Scope) -> bytes:
    _opts, out, obj = decode_write(scope, "UpdateOptions")
    check_put_target(scope.resource, obj, scope.namespace, scope.name)
    encoded = orjson.dumps(obj)

    def updated(_existing: dict[str, Any] | None) -> dict[str, Any]:
        # A fresh copy per attempt: the store's retry loop may call this again.
        fresh: dict[str, Any] = orjson.loads(encoded)
        return fresh

    stored, created = await scope.update(updated)
    return scope.respond_object(stored, 201 if created else 200, out)
