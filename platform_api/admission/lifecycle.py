"""NamespaceLifecycle: no content in missing or terminating namespaces; some never die.

Namespaces are read from an informer, as kube's plugin reads its lister: a storage read
per create cost ~4% of its reactor time.  A namespace the informer has not seen is looked
up in storage (kube's live lookup), so one created a moment ago through another worker
is found, and a missing one is a 404.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.controllers.informer import Informer
from platform_api.scheme.namespaces import immortal
from platform_api.storage.interface import Storage, StorageError
from platform_api.storage.watch import WatchHub

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
    ) -> None:
        self._check(attrs, obj)

    def _check(self, attrs: Attributes, obj: dict[str, Any] | None) -> None:
        rt = attrs.resource
        if attrs.operation == "DELETE" and rt.group == "" and rt.plural == "namespaces":
            if attrs.name in self._immortal:
                raise errors.forbidden(
                    "namespaces", "", attrs.name, "this namespace may not be deleted"
                )
            return
        if attrs.operation != "CREATE" or not rt.namespaced or not attrs.namespace:
            return
        if self._is_terminating(attrs.namespace):
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

    def _is_terminating(self, name: str) -> bool:
        key = self._prefix + name.encode()
        namespace = self._namespaces.objects.get(key)
        if namespace is None:
            try:
                namespace = self._storage.get(key).object
            except StorageError:
                raise errors.not_found("namespaces", "", name) from None
        return bool(namespace.get("metadata", {}).get("deletionTimestamp")) or (
            namespace.get("status", {}).get("phase") == "Terminating"
        )


def build(ctx: PluginContext) -> NamespaceLifecycle:
    prefix = ctx.stores[("", "v1", "namespaces")].prefix
    return NamespaceLifecycle(ctx.storage, ctx.hub, prefix, ctx.config.serve_upstream_groups)
