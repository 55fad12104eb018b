"""What an admission plugin is given and how it refuses: kube's ``admission.Attributes``,
the plugin interfaces and ``admission.NewForbidden``.  Plugins depend on this module,
not on the chain that runs them (chain.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from platform_api import errors
from platform_api.authentication.user import UserInfo
from platform_api.scheme.types import ResourceType

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
    # Adds a Warning header to the response (kube's warning.AddWarning); none by default.
    warn: Callable[[str], None] = lambda text: None
    # Adds an annotation to the request's audit event (kube's AddAnnotation); none by default.
    annotate: Callable[[str, str], None] = lambda key, value: None
    # Registers what to take back should the request fail after admission; none by default.
    on_failure: Callable[[Callable[[], Awaitable[None]]], None] = lambda action: None
    # Registers what to do once the request has succeeded (its write stored); none by default.
    on_success: Callable[[Callable[[], Awaitable[None]]], None] = lambda action: None


class AdmissionPlugin(Protocol):
    """A built-in plugin: ``admit`` and/or ``validate`` (a plugin may lack either one).

    ``obj`` is the object being written (None for DELETE and CONNECT), ``old`` the
    stored one (None for CREATE).  A plugin refuses by raising a ``StatusError``.
    A plugin that acts on a few kinds only says which in ``resources``, (group, plural)
    pairs; the chain calls it for no others (kube's plugins check in ``Handles`` and at
    the top of ``Admit``: here most requests skip most plugins without a call).
    """

    name: str


class Mutating(AdmissionPlugin, Protocol):
    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> Awaitable[None] | None:
        """Change ``obj`` in place, or refuse."""
        ...


class Validating(AdmissionPlugin, Protocol):
    def validate(
        self, attrs: Attributes, obj: Obj | None, old: Obj | None
    ) -> Awaitable[None] | None:
        """Refuse, without changing anything but the plugin's own bookkeeping."""
        ...


def forbidden(attrs: Attributes, obj: Obj | None, why: str) -> errors.StatusError:
    """kube's ``admission.NewForbidden``: named by the request, else by the object."""
    meta = (obj or {}).get("metadata") or {}
    name = attrs.name or meta.get("name") or meta.get("generateName") or "Unknown"
    return errors.forbidden(attrs.resource.plural, attrs.resource.group, name, why)
