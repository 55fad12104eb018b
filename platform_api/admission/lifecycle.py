"""NamespaceLifecycle: no content in missing or terminating namespaces; some never die."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.chain import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.scheme.namespaces import immortal
from platform_api.storage.interface import Storage, StorageError

TERMINATING_CAUSE = "NamespaceTerminating"


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, storage: Storage, namespace_key: bytes, upstream: bool = False) -> None:
        self._storage = storage
        self._immortal = immortal(upstream)
        self._prefix = namespace_key  # key prefix of the namespaces store
        # namespace key -> (revision, terminating): each version is decoded once
        self._terminating: dict[bytes, tuple[int, bool]] = {}

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
        try:
            stored = self._storage.get(key)
        except StorageError:
            raise errors.not_found("namespaces", "", name) from None
        known = self._terminating.get(key)
        if known is not None and known[0] == stored.revision:
            return known[1]
        namespace = stored.object
        terminating = bool(namespace.get("metadata", {}).get("deletionTimestamp")) or (
            namespace.get("status", {}).get("phase") == "Terminating"
        )
        if len(self._terminating) >= 4096:
            self._terminating.clear()
        self._terminating[key] = (stored.revision, terminating)
        return terminating


def build(ctx: PluginContext) -> NamespaceLifecycle:
    prefix = ctx.stores[("", "v1", "namespaces")].prefix
    return NamespaceLifecycle(ctx.storage, prefix, ctx.config.serve_upstream_groups)
