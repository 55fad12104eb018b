"""NamespaceLifecycle: no content in missing or terminating namespaces; some never die."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.chain import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.storage.interface import Storage, StorageError

IMMORTAL_NAMESPACES = ("default", "platform-system", "platform-public")
TERMINATING_CAUSE = "NamespaceTerminating"


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, storage: Storage, namespace_key: bytes) -> None:
        self._storage = storage
        self._prefix = namespace_key  # key prefix of the namespaces store

    def admit(
        self, attrs: Attributes, obj: dict[str, Any] | None, old: dict[str, Any] | None
    ) -> None:
        self._check(attrs, obj)

    def _check(self, attrs: Attributes, obj: dict[str, Any] | None) -> None:
        rt = attrs.resource
        if attrs.operation == "DELETE" and rt.group == "" and rt.plural == "namespaces":
            if attrs.name in IMMORTAL_NAMESPACES:
                raise errors.forbidden(
                    "namespaces", "", attrs.name, "this namespace may not be deleted"
                )
            return
        if attrs.operation != "CREATE" or not rt.namespaced or not attrs.namespace:
            return
        try:
            namespace = self._storage.get(self._prefix + attrs.namespace.encode()).object
        except StorageError:
            raise errors.not_found("namespaces", "", attrs.namespace) from None
        if namespace.get("metadata", {}).get("deletionTimestamp") or (
            namespace.get("status", {}).get("phase") == "Terminating"
        ):
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


def build(ctx: PluginContext) -> NamespaceLifecycle:
    return NamespaceLifecycle(ctx.storage, ctx.stores[("", "v1", "namespaces")].prefix)
