"""Admission: mutating plugins run before the registry, validating ones inside its retry loop.

A plugin implements ``admit`` (may change the object; runs once, before the store) and/or
``validate`` (must not change it; runs on every compare-and-swap attempt, against the
object that is about to be written).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from platform_api.authentication.user import UserInfo
from platform_api.scheme.types import ResourceType

if TYPE_CHECKING:
    from platform_api.endpoints.scope import Scope
    from platform_api.registry.store import Admit

Obj = dict[str, Any]


@dataclass(frozen=True)
class Attributes:
    """kube's ``admission.Attributes``: what is being done to what, by whom."""

    operation: str  # CREATE, UPDATE, DELETE, CONNECT
    resource: ResourceType
    subresource: str
    namespace: str
    name: str
    user: UserInfo
    dry_run: bool


class AdmissionPlugin(Protocol):
    name: str

    def admit(self, attrs: Attributes, obj: Obj | None) -> None: ...

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None: ...


class AdmissionChain:
    def __init__(self, plugins: list[AdmissionPlugin]) -> None:
        self.plugins = plugins

    @staticmethod
    def attributes(scope: Scope, operation: str, name: str = "") -> Attributes:
        return Attributes(
            operation,
            scope.resource,
            scope.info.subresource,
            scope.namespace,
            name or scope.name,
            scope.ctx.user,
            scope.ctx.dry_run,
        )

    def admit(self, scope: Scope, operation: str, obj: Obj | None, name: str = "") -> None:
        """The mutating phase: once, before the registry sees the request."""
        attrs = self.attributes(scope, operation, name)
        for plugin in self.plugins:
            plugin.admit(attrs, obj)

    def validator(self, scope: Scope, operation: str) -> Admit:
        """The validating phase, for the store to run against each object it would write."""

        def validate(obj: Obj, old: Obj | None) -> None:
            name = obj.get("metadata", {}).get("name", "") if obj else ""
            # A PUT that finds nothing creates: admission sees a CREATE.
            op = "CREATE" if operation == "UPDATE" and old is None else operation
            attrs = self.attributes(scope, op, name)
            for plugin in self.plugins:
                plugin.validate(attrs, obj, old)

        return validate
