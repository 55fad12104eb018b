"""update: PUT on an object or its status (create-on-update where the kind allows it)."""

from __future__ import annotations

from typing import Any

import orjson

from platform_api import errors
from platform_api.endpoints.body import decode_write
from platform_api.endpoints.ownerrefs import BEFORE, dedup_owner_references
from platform_api.endpoints.scope import Scope
from platform_api.registry.prepare import check_put_target
from platform_api.registry.store import Store
from platform_api.storage.etcd.layout import kube_key
from platform_api.storage.interface import Preconditions


async def handle(scope: Scope) -> bytes:
    _opts, out, obj = await decode_write(scope, "UpdateOptions", transforms=True)
    check_put_target(scope.resource, obj, scope.namespace, scope.name)
    dedup_owner_references(obj, scope.ctx.warn, BEFORE)
    encoded = orjson.dumps(obj)

    uid = (obj.get("metadata") or {}).get("uid")

    def updated(existing: dict[str, Any] | None) -> dict[str, Any]:
        if uid:  # of an object a create-on-update would make too: it has no uid yet
            check_update_preconditions(scope, Preconditions(uid=uid), existing or {})
        # A fresh copy per attempt: the store's retry loop may call this again.
        fresh: dict[str, Any] = orjson.loads(encoded)
        return fresh

    stored, created = await scope.written(scope.update(updated))
    return await scope.respond_object(stored, 201 if created else 200, out)


def check_update_preconditions(
    scope: Scope,
    pre: Preconditions,
    existing: dict[str, Any],
    store: Store | None = None,
    name: str = "",
) -> None:
    """Preconditions a write's body carries (a PUT's uid, a Binding's uid and
    resourceVersion) against the stored object: kube's storage refuses a mismatch with
    a Conflict that quotes its StorageError.  ``store``/``name`` default to the
    request's (a Binding names a pod)."""
    why = pre.failure(existing)
    if why is None:
        return
    rt = scope.resource if store is None else store.resource
    store = store or scope.store
    name = name or scope.name
    # kube names a custom resource's key here without its storage prefix, and any key of
    # a dry run (its dry-run storage checks before the etcd layer adds the prefix)
    prefix = "" if rt.custom or scope.ctx.dry_run else scope.handlers.storage_prefix
    key = kube_key(store.key(scope.namespace, name), not rt.custom, prefix)
    detail = (
        f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, "
        f"AdditionalErrorMsg: {why}"
    )
    raise errors.conflict(rt.plural, rt.group, name, detail)
