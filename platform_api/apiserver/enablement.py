"""The served scheme and the stores, per the ``--runtime-config`` resource configuration.

A disabled version is left out of the scheme, so routes, discovery and OpenAPI never
see it (its paths answer 404); its objects stay in storage and show again when the
version is re-enabled.  The built-in GA types keep their stores even when disabled:
controllers, admission and bootstrap read them directly.

The versions of one resource (MutatingAdmissionPolicy v1, v1beta1, v1alpha1) share
one key prefix and one storage version, the most preferred version kube has for it;
the others read and write through a ``StorageView`` that rewrites ``apiVersion`` (the
schemas of these versions differ in names only), so an object written in one version
is read in any other.
"""

from __future__ import annotations

from collections.abc import Callable

from platform_api.apiserver.features import FeatureGates
from platform_api.apiserver.runtimeconfig import ResourceConfig
from platform_api.registry import eventconversion, hpaconversion
from platform_api.registry.gateddrops import GateCheck
from platform_api.registry.store import Store
from platform_api.scheme.builtin import BUILTIN_TYPES
from platform_api.scheme.catalog import Scheme, version_priority
from platform_api.scheme.optional import GATES, OPTIONAL_TYPES
from platform_api.scheme.schemas import load_schemas
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import Storage
from platform_api.storage.view import Obj, StorageView


def gate_check(gates: FeatureGates) -> GateCheck:
    """``gates.enabled`` where the server knows the gate, else kube's default for the
    gates these APIs need (all off in v1.36)."""

    def enabled(name: str) -> bool:
        try:
            return gates.enabled(name)
        except KeyError:
            return False

    return enabled


def all_types() -> list[ResourceType]:
    """Every type the server can serve: built-in first, the others preferred first."""
    optional = sorted(OPTIONAL_TYPES, key=lambda rt: version_priority(rt.version))
    return [*BUILTIN_TYPES, *optional]


def keyed_resources() -> dict[tuple[str, str], tuple[str, str]]:
    """(group, plural) of every resource with keys of its own, the storage layouts'
    list (events.platform.io Events are stored as core Events), each with the
    (apiVersion, kind) of its objects at its first version: what a stored value that
    names no type is read as."""
    kinds: dict[tuple[str, str], tuple[str, str]] = {}
    for rt in all_types():
        if rt.group != EVENTS_GROUP:
            kinds.setdefault((rt.group, rt.plural), (rt.api_version, rt.kind))
    return kinds


def _served(rt: ResourceType, config: ResourceConfig, gate_on: GateCheck) -> bool:
    if not config.resource_enabled(rt.group, rt.version, rt.plural):
        return False
    gate = GATES.get((rt.group, rt.plural))
    return gate is None or gate_on(gate)


def build(
    config: ResourceConfig, gate_on: GateCheck, storage: Storage
) -> tuple[Scheme, dict[tuple[str, str, str], Store]]:
    """The scheme of the enabled types, and the stores (of those and of every built-in
    type) keyed by (group, version, plural)."""
    schemas = load_schemas().copy()
    known = Scheme(all_types(), schemas)  # fills each type's OpenAPI definition
    types = known.all()
    scheme = Scheme([rt for rt in types if _served(rt, config, gate_on)], schemas)
    builtin = {(rt.group, rt.version, rt.plural) for rt in BUILTIN_TYPES}
    stores: dict[tuple[str, str, str], Store] = {}
    for rt in types:
        key = (rt.group, rt.version, rt.plural)
        if key not in builtin and scheme.lookup(*key) is None:
            continue
        if rt.group == EVENTS_GROUP:  # kube keeps both Event APIs in one place
            view = StorageView(
                storage, eventconversion.from_core(rt.api_version), eventconversion.to_core
            )
            stores[key] = Store(rt, view, prefix=CORE_EVENTS_PREFIX, gates=gate_on)
        else:
            stores[key] = Store(rt, _storage_for(rt, known, storage), gates=gate_on)
    return scheme, stores


EVENTS_GROUP = "events.platform.io"
CORE_EVENTS_PREFIX = b"/core/events/"  # registry.store.resource_prefix of core Events


# (group, plural, served version) -> (out of storage, into storage, into storage without
# the defaults of reading it back)
_Out = Callable[[Obj], Obj | None]
_Into = Callable[[Obj], Obj]
CONVERTERS: dict[tuple[str, str, str], tuple[_Out, _Into, _Into]] = {
    ("autoscaling", "horizontalpodautoscalers", "v1"): (
        hpaconversion.to_v1,
        hpaconversion.to_v2,
        hpaconversion.converted_to_v2,
    ),
}


def _storage_for(rt: ResourceType, known: Scheme, storage: Storage) -> Storage:
    """The raw storage, or a view converting to the resource's storage version."""
    versions = [t.version for t in known.equivalents(rt.group, rt.version, rt.plural)]
    stored_as = min(versions, key=version_priority)
    if stored_as == rt.version:
        return storage  # every write goes through the storage version's form
    converters = CONVERTERS.get((rt.group, rt.plural, rt.version))
    if converters is not None:  # versions that differ in more than their apiVersion
        return StorageView(storage, *converters)
    into = _rewrite_into(f"{rt.group}/{stored_as}")
    return StorageView(storage, _rewrite_out(rt.api_version), into)


def _rewrite_out(api_version: str) -> Callable[[Obj], Obj | None]:
    def out(obj: Obj) -> Obj | None:
        if obj.get("apiVersion") == api_version:
            return None
        return {**obj, "apiVersion": api_version}

    return out


def _rewrite_into(api_version: str) -> Callable[[Obj], Obj]:
    def into(obj: Obj) -> Obj:
        if obj.get("apiVersion") == api_version:
            return obj
        return {**obj, "apiVersion": api_version}

    return into
