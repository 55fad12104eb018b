"""NamespaceExists: writes of namespaced content in a namespace that does not exist are
refused with the namespace's NotFound (kube's ``exists`` plugin; off by default)."""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes
from platform_api.admission.namespaces import in_namespace
from platform_api.admission.plugins import PluginContext
from platform_api.registry.store import Store


class NamespaceExists:
    name = "NamespaceExists"

    def __init__(self, namespaces: Store) -> None:
        self._namespaces = namespaces

    def validate(self, attrs: Attributes, obj: Any, old: Any) -> None:
        if attrs.operation not in ("CREATE", "UPDATE", "DELETE") or not in_namespace(attrs):
            return
        self._namespaces.get("", attrs.namespace)  # NotFound: namespaces "x" not found


def build(ctx: PluginContext) -> NamespaceExists:
    return NamespaceExists(ctx.stores[("", "v1", "namespaces")])
