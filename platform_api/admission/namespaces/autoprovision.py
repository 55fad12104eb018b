"""NamespaceAutoProvision: creating content in a namespace that does not exist creates the
namespace first (kube's ``autoprovision`` plugin; off by default).

Dry runs create nothing.  A namespace created meanwhile by someone else is fine; any
other failure refuses the request with kube's Forbidden wrapping the failure.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.namespaces import in_namespace
from platform_api.admission.plugins import PluginContext
from platform_api.registry.store import Store


class NamespaceAutoProvision:
    name = "NamespaceAutoProvision"

    def __init__(self, namespaces: Store) -> None:
        self._namespaces = namespaces

    async def admit(self, attrs: Attributes, obj: dict[str, Any] | None, old: Any) -> None:
        if attrs.operation != "CREATE" or attrs.dry_run or not in_namespace(attrs):
            return
        try:
            self._namespaces.get("", attrs.namespace)
            return
        except errors.StatusError as e:
            if e.code != 404:
                raise forbidden(attrs, obj, e.message) from None
        namespace: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace"}
        namespace["metadata"] = {"name": attrs.namespace}
        try:
            await self._namespaces.create("", namespace)
        except errors.StatusError as e:
            if e.code != 409 or e.reason != errors.ALREADY_EXISTS:
                raise forbidden(attrs, obj, e.message) from None


def build(ctx: PluginContext) -> NamespaceAutoProvision:
    return NamespaceAutoProvision(ctx.stores[("", "v1", "namespaces")])
