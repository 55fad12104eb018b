"""The other versions of a kind, as its field manager compares ownership in them
(``fieldmanager/versions.py``), built from the server's stores and scheme.

A built-in kind converts as its stores do (into the storage version, out into the
other), and a version the group does not have, or another group (even events.k8s.io's
view of core Events), is ``MISSING``, as kube's field manager finds it unconvertible.
A custom resource converts as the CRD's None strategy does, by its ``apiVersion``
alone, and is then read as the other version's schema declares it, so a field only the
request's version declares fails the conversion, as in kube.  Left to the request's
version: a CRD version that is not served (its schema is not at hand) and CRDs
converted by a webhook (kube calls the webhook for every such write).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from platform_api.fieldmanager.manager import FieldManager
from platform_api.fieldmanager.versions import MISSING, Versions, VersionView, View, read_as
from platform_api.registry.store import Store
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import ResourceType
from platform_api.storage.view import AsyncStorageView, StorageView

Obj = dict[str, Any]
Trackers = Callable[[ResourceType], FieldManager]


def versions_for(
    scheme: Scheme,
    stores: Mapping[tuple[str, str, str], Store],
    trackers: Trackers,
    rt: ResourceType,
) -> Versions | None:
    """How ``rt``'s field manager sees its other versions; None to compare all in one."""
    own = stores.get((rt.group, rt.version, rt.plural))
    if own is None or isinstance(own.storage, AsyncStorageView):
        return None
    if rt.custom:
        return _custom(scheme, trackers, rt)
    return _builtin(stores, trackers, rt, own)


def _same(obj: Obj) -> Obj:
    return obj


def _builtin(
    stores: Mapping[tuple[str, str, str], Store], trackers: Trackers, rt: ResourceType, own: Store
) -> Versions:
    into = own.storage.stored_form if isinstance(own.storage, StorageView) else _same

    def view(api_version: str) -> View:
        group, _, version = api_version.rpartition("/")
        target = stores.get((group, version, rt.plural)) if group == rt.group else None
        if target is None:
            return MISSING
        out = target.storage.served_form if isinstance(target.storage, StorageView) else _same
        fields = trackers(target.resource)
        return VersionView(fields.typed, fields.node, lambda obj: out(into(obj)))

    return view


def _custom(scheme: Scheme, trackers: Trackers, rt: ResourceType) -> Versions:
    def view(api_version: str) -> View:
        group, _, version = api_version.rpartition("/")
        if group != rt.group:
            own = trackers(rt)
            return VersionView(own.typed, own.node, _invalid(api_version))
        target = scheme.lookup(group, version, rt.plural)
        if target is None:
            return None
        fields = trackers(target)

        def convert(obj: Obj) -> Obj:
            return read_as(fields.typed, fields.node, {**obj, "apiVersion": api_version})

        return VersionView(fields.typed, fields.node, convert)

    return view


def _invalid(api_version: str) -> Callable[[Obj], Obj]:
    def refuse(obj: Obj) -> Obj:
        raise ValueError(f"request to convert CR to an invalid group/version: {api_version}")

    return refuse
