"""Assembling the admission policy plugins from the server's scheme and stores."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission import matching
from platform_api.admission.equivalence import Equivalence
from platform_api.admission.policy.dispatch import (
    FindParams,
    NamespaceObject,
    ParamScope,
    PolicyAdmission,
)
from platform_api.admission.policy.mutate import MutatingPolicyAdmission
from platform_api.admission.policy.mutating import compile_mutating_policy
from platform_api.admission.policy.source import PolicySource
from platform_api.registry.store import Store
from platform_api.scheme.catalog import Scheme
from platform_api.selectors import SelectorError, label_selector_from
from platform_api.storage.interface import ListOptions, Storage
from platform_api.storage.watch import WatchHub

GROUP = "admissionregistration.platform.io"
PLUGIN = "ValidatingAdmissionPolicy"
MUTATING_PLUGIN = "MutatingAdmissionPolicy"
Obj = dict[str, Any]


def build_policies(
    plugins: tuple[str, ...],
    storage: Storage,
    hub: WatchHub,
    scheme: Scheme,
    stores: dict[tuple[str, str, str], Store],
    authorize: matching.Authorize | None,
    equivalence: Equivalence | None = None,
) -> PolicyAdmission | None:
    """The ValidatingAdmissionPolicy plugin, when on and the policy kinds are served."""
    policies = stores.get((GROUP, "v1", "validatingadmissionpolicies"))
    bindings = stores.get((GROUP, "v1", "validatingadmissionpolicybindings"))
    if PLUGIN not in plugins or policies is None or bindings is None:
        return None
    source = PolicySource(storage, hub, policies.list_prefix(""), bindings.list_prefix(""))
    return PolicyAdmission(source, *_lookups(scheme, stores), authorize, equivalence)


def build_mutating_policies(
    plugins: tuple[str, ...],
    storage: Storage,
    hub: WatchHub,
    scheme: Scheme,
    stores: dict[tuple[str, str, str], Store],
    authorize: matching.Authorize | None,
    equivalence: Equivalence | None = None,
) -> MutatingPolicyAdmission | None:
    """The MutatingAdmissionPolicy plugin, when on and the policy kinds are served."""
    policies = stores.get((GROUP, "v1", "mutatingadmissionpolicies"))
    bindings = stores.get((GROUP, "v1", "mutatingadmissionpolicybindings"))
    if MUTATING_PLUGIN not in plugins or policies is None or bindings is None:
        return None
    source = PolicySource(
        storage,
        hub,
        policies.list_prefix(""),
        bindings.list_prefix(""),
        compile_mutating_policy,
    )
    return MutatingPolicyAdmission(source, *_lookups(scheme, stores), authorize, equivalence)


def _lookups(
    scheme: Scheme, stores: dict[tuple[str, str, str], Store]
) -> tuple[FindParams, ParamScope, NamespaceObject]:
    """How policies find their parameter objects and namespaces."""

    def store_of(api_version: str, kind: str) -> Store | None:
        group, _, version = api_version.rpartition("/")
        rt = scheme.by_kind(group, version, kind)
        return stores.get((rt.group, rt.version, rt.plural)) if rt is not None else None

    def param_scope(api_version: str, kind: str) -> bool | None:
        store = store_of(api_version, kind)
        return None if store is None else store.resource.namespaced

    def find_params(
        api_version: str, kind: str, namespace: str, name: str, selector: Obj | None
    ) -> list[Obj] | None:
        store = store_of(api_version, kind)
        if store is None:
            return None
        if name:
            try:
                return [store.get(namespace, name).object]
            except errors.StatusError as e:
                if e.code == 404:
                    return []
                raise
        try:
            wanted = label_selector_from(selector or {})
        except SelectorError as e:
            raise ValueError(str(e)) from None
        listed = store.list(namespace, ListOptions())
        return [
            s.object
            for s in listed.items
            if wanted.matches(s.object.get("metadata", {}).get("labels") or {})
        ]

    namespaces = stores[("", "v1", "namespaces")]

    def namespace_object(name: str) -> Obj | None:
        try:
            return namespaces.get("", name).object
        except errors.StatusError:
            return None

    return find_params, param_scope, namespace_object
