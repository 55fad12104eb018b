"""update: PUT on an object or its status (create-on-update where the kind allows it)."""

from __future__ import annotations

from typing import Any

import orjson

from platform_api import errors
from platform_api.endpoints.body import decode_write
from platform_api.endpoints.scope import Scope
from platform_api.registry.prepare import check_put_target
from platform_api.storage.etcd.layout import kube_key
from platform_api.storage.interface import Preconditions


async def handle(scope: Scope) -> bytes:
    _opts, out, obj = await decode_write(scope, "UpdateOptions")
    check_put_target(scope.resource, obj, scope.namespace, scope.name)
    encoded = orjson.dumps(obj)

    uid = (obj.get("metadata") or {}).get("uid")

    def updated(existing: dict[str, Any] | None) -> dict[str, Any]:
        if uid and existing is not None:
            check_uid(scope, uid, existing)
        # A fresh copy per attempt: the store's retry loop may call this again.
        fresh: dict[str, Any] = orjson.loads(encoded)
        return fresh

    stored, created = await scope.written(scope.update(updated))
    return await scope.respond_object(stored, 201 if created else 200, out)


def check_uid(scope: Scope, uid: str, existing: dict[str, Any]) -> None:
    """A PUT body's uid is kube's precondition on the stored object: its storage refuses
    another object's with a Conflict that quotes its StorageError."""
    why = Preconditions(uid=uid).failure(existing)
    if why is None:
        return
    rt = scope.resource
    registry_key = scope.store.key(scope.namespace, scope.name)
    key = kube_key(registry_key, not rt.custom, scope.handlers.storage_prefix)
    detail = (
        f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, "
        f"AdditionalErrorMsg: {why}"
    )
    raise errors.conflict(rt.plural, rt.group, scope.name, detail)
