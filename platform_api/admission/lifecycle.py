"""NamespaceLifecycle: no content in missing or terminating namespaces; some never die.

Namespaces are read from an informer, as kube's plugin reads its lister: a storage read
per create cost ~4% of its reactor time.  A namespace the informer has not seen is looked
up in storage (kube's live lookup, a consistent GET), so one created a moment ago through
another worker or replica is found, and a missing one is a 404 (one that cannot be read,
kube's InternalError).  On etcd that lookup waits for this replica's watch cache to reach
etcd's current revision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred, ensureDeferred

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.controllers.informer import Informer
from platform_api.registry.storeerrors import unnamed
from platform_api.scheme.namespaces import immortal
from platform_api.storage.interface import (
    KEY_NOT_FOUND,
    Storage,
    StorageError,
    Stored,
    consistent_get,
    reads_from_cache,
)
from platform_api.storage.watch import WatchHub
from platform_api.validation.field import go_quote
from platform_api.validation.names import is_path_segment_name

TERMINATING_CAUSE = "NamespaceTerminating"


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(
        self, storage: Storage, hub: WatchHub, namespace_key: bytes, upstream: bool = False
    ) -> None:
        self._storage = storage
        self._immortal = immortal(upstream)
        self._prefix = namespace_key  # key prefix of the namespaces store
        self._namespaces = Informer(storage, hub, (namespace_key,))

    def start(self) -> None:
        self._namespaces.start()

    def stop(self) -> None:
        self._namespaces.stop()

    def admit(
        self, attrs: Attributes, obj: dict[str, Any] | None, old: dict[str, Any] | None
    ) -> Deferred[None] | None:
        """None once decided; a Deferred when a namespace the informer has not seen must
        be looked up in a storage that reads from a cache (etcd's)."""
        rt = attrs.resource
        if attrs.operation == "DELETE" and rt.group == "" and rt.plural == "namespaces":
            if attrs.name in self._immortal:
                raise errors.forbidden(
                    "namespaces", "", attrs.name, "this namespace may not be deleted"
                )
            return None
        if attrs.operation != "CREATE" or not rt.namespaced or not attrs.namespace:
            return None
        if problems := is_path_segment_name(attrs.namespace):  # client-go's GET refuses it
            why = f"invalid resource name {go_quote(attrs.namespace)}: [{' '.join(problems)}]"
            raise errors.internal_error(why)
        key = self._prefix + attrs.namespace.encode()
        namespace = self._namespaces.objects.get(key)
        if namespace is None and reads_from_cache(self._storage):
            return ensureDeferred(self._looked_up(attrs, obj, key))
        if namespace is None:
            namespace = self._read(attrs.namespace, lambda: self._storage.get(key))
        self._check(attrs, obj, namespace)
        return None

    async def _looked_up(self, attrs: Attributes, obj: dict[str, Any] | None, key: bytes) -> None:
        try:
            stored = await consistent_get(self._storage, key)
        except StorageError as e:
            raise _lookup_failed(e, attrs.namespace) from None
        self._check(attrs, obj, self._read(attrs.namespace, lambda: stored))

    @staticmethod
    def _read(name: str, get: Callable[[], Stored]) -> dict[str, Any]:
        try:
            return get().glance()
        except StorageError as e:
            raise _lookup_failed(e, name) from None

    def _check(
        self, attrs: Attributes, obj: dict[str, Any] | None, namespace: dict[str, Any]
    ) -> None:
        rt = attrs.resource
        if _terminating(namespace):
            name = attrs.name or (obj or {}).get("metadata", {}).get("name", "")
            error = errors.forbidden(
                rt.plural,
                rt.group,
                name,
                f"unable to create new content in namespace {attrs.namespace} because it is "
                "being terminated",
            )
            assert error.details is not None
            error.details["causes"] = [
                {
                    "reason": TERMINATING_CAUSE,
                    "message": f"namespace {attrs.namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise error


def _lookup_failed(e: StorageError, name: str) -> errors.StatusError:
    """kube's live lookup is a GET: NotFound as it is, any other answer (etcd unreachable,
    a value that does not decode or decrypt) the GET's error wrapped as an InternalError."""
    if e.code == KEY_NOT_FOUND:
        return errors.not_found("namespaces", "", name)
    return errors.internal_error(unnamed(e).message)


def _terminating(namespace: dict[str, Any]) -> bool:
    return bool(namespace.get("metadata", {}).get("deletionTimestamp")) or (
        namespace.get("status", {}).get("phase") == "Terminating"
    )


def build(ctx: PluginContext) -> NamespaceLifecycle:
    prefix = ctx.stores[("", "v1", "namespaces")].prefix
    return NamespaceLifecycle(ctx.storage, ctx.hub, prefix, ctx.config.serve_upstream_groups)
