"""The other versions of a kind, as its field manager compares ownership in them
(``fieldmanager/versions.py``), built from the server's stores and scheme.

A built-in kind converts as its stores do (into the storage version, out into the
other), and a version the group does not have, or another group (even events.k8s.io's
view of core Events), is ``MISSING``, as kube's field manager finds it unconvertible.
A custom resource converts as the CRD's None strategy does, by its ``apiVersion``
alone, and is then read as the other version's schema declares it, served or not (its
definition built from the stored CRD), so a field that version does not declare fails
the conversion, as in kube; a version the CRD lacks, another group or an apiVersion kube
cannot parse fails it too.  A CRD converted by a webhook converts by calling it, as
kube's field manager does on each such write: the store awaits each call its ownership
step asks for and runs the step again (``versions.settled``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from platform_api import errors
from platform_api.apiextensions.crd import kind_node
from platform_api.errors import StatusError
from platform_api.fieldmanager.manager import FieldManager
from platform_api.fieldmanager.typed import Typed
from platform_api.fieldmanager.versions import (
    MISSING,
    Versions,
    VersionView,
    View,
    awaited,
    read_as,
)
from platform_api.registry.store import Store
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.schemas import Node
from platform_api.scheme.types import ResourceType
from platform_api.storage.view import AsyncStorageView, StorageView

Obj = dict[str, Any]
APIEXTENSIONS = "apiextensions.platform.io"
Trackers = Callable[[ResourceType], FieldManager]
# A CRD's conversion of an object into an apiVersion by a call out (its webhook).
CallOut = Callable[[Obj, str], Awaitable[Obj]]
Change = Callable[[Obj, str], Obj]


def versions_for(
    scheme: Scheme,
    stores: Mapping[tuple[str, str, str], Store],
    trackers: Trackers,
    rt: ResourceType,
    converters: Mapping[tuple[str, str], CallOut] | None = None,
) -> Versions | None:
    """How ``rt``'s field manager sees its other versions; None to compare all in one.
    ``converters``: the CRDs' conversions by call out, by (group, plural)."""
    own = stores.get((rt.group, rt.version, rt.plural))
    if own is None:
        return None
    if rt.custom:
        crds = stores.get((APIEXTENSIONS, "v1", "customresourcedefinitions"))
        unserved = _UnservedVersions(crds, scheme, rt)
        if not isinstance(own.storage, AsyncStorageView):
            return _custom(scheme, trackers, rt, unserved, _by_api_version)
        if converters is None:
            return None
        return _custom(scheme, trackers, rt, unserved, _by_webhook(converters, rt))
    return _builtin(stores, trackers, rt, own)


def _by_api_version(obj: Obj, api_version: str) -> Obj:
    """The None strategy: only the apiVersion changes."""
    return {**obj, "apiVersion": api_version}


def _by_webhook(converters: Mapping[tuple[str, str], CallOut], rt: ResourceType) -> Change:
    """The Webhook strategy: the conversion the write's settled step awaited, by the
    CRD's converter of the moment (the installer replaces it as the CRD changes)."""

    async def call(obj: Obj, api_version: str) -> Obj:
        call_out = converters.get((rt.group, rt.plural))
        if call_out is None:  # the CRD went away meanwhile
            raise errors.not_found(rt.plural, rt.group, "")
        return await call_out(obj, api_version)

    def change(obj: Obj, api_version: str) -> Obj:
        return awaited(api_version, obj, lambda: call(obj, api_version))

    return change


def _unparsed(api_version: str) -> str | None:
    """kube's ParseGroupVersion refusal of a string with more than one slash."""
    if api_version.count("/") > 1:
        return f"unexpected GroupVersion string: {api_version}"
    return None


def _same(obj: Obj) -> Obj:
    return obj


def _builtin(
    stores: Mapping[tuple[str, str, str], Store], trackers: Trackers, rt: ResourceType, own: Store
) -> Versions:
    def into(obj: Obj) -> Obj:
        """The object in the storage version, from the version it names."""
        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        source = stores.get((group, version, rt.plural)) if group == rt.group else None
        storage = (source or own).storage
        return storage.stored_form(obj) if isinstance(storage, StorageView) else obj

    def view(api_version: str) -> View:
        refusal = _unparsed(api_version)
        if refusal is not None:
            return _refusing(trackers(rt), refusal)
        group, _, version = api_version.rpartition("/")
        target = stores.get((group, version, rt.plural)) if group == rt.group else None
        if target is None:
            return MISSING
        out = target.storage.served_form if isinstance(target.storage, StorageView) else _same
        fields = trackers(target.resource)
        return VersionView(fields.typed, fields.node, lambda obj: out(into(obj)))

    return view


def _custom(
    scheme: Scheme,
    trackers: Trackers,
    rt: ResourceType,
    unserved: _UnservedVersions,
    change: Change,
) -> Versions:
    def view(api_version: str) -> View:
        group, _, version = api_version.rpartition("/")
        refusal = _unparsed(api_version)
        found: tuple[Typed, Node] | None = None
        if refusal is None and group == rt.group:
            target = scheme.lookup(group, version, rt.plural)
            if target is None:
                found = unserved.typed(version)
            else:
                fields = trackers(target)
                found = (fields.typed, fields.node)
        if found is None:
            why = refusal or f"request to convert CR to an invalid group/version: {api_version}"
            return _refusing(trackers(rt), why)
        typed, node = found

        def convert(obj: Obj) -> Obj:
            return read_as(typed, node, change(obj, api_version))

        return VersionView(typed, node, convert)

    return view


class _UnservedVersions:
    """The schemas of the CRD's versions it does not serve, read from its stored object:
    each with a Typed of its own, kept while the CRD is unchanged (a Typed caches shapes
    by the identity of schema nodes, which must live as long as it does)."""

    def __init__(self, crds: Store | None, scheme: Scheme, rt: ResourceType) -> None:
        self.crds, self.scheme, self.name = crds, scheme, f"{rt.plural}.{rt.group}"
        self._built: dict[str, tuple[str, Typed, Node]] = {}

    def typed(self, version: str) -> tuple[Typed, Node] | None:
        if self.crds is None:
            return None
        try:
            crd = self.crds.get("", self.name).object
        except StatusError:
            return None
        revision = str((crd.get("metadata") or {}).get("resourceVersion", ""))
        built = self._built.get(version)
        if built is None or built[0] != revision:
            node = kind_node(crd, version)
            if node is None:
                return None
            built = self._built[version] = (revision, Typed(self.scheme.schemas, True), node)
        return built[1], built[2]


def _refusing(own: FieldManager, why: str) -> VersionView:
    """A version nothing converts into: its conversion fails with kube's words."""

    def refuse(obj: Obj) -> Obj:
        raise ValueError(why)

    return VersionView(own.typed, own.node, refuse)
