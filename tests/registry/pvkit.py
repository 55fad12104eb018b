"""Shared by the PersistentVolume and claim validation tests: objects built as the
reference received them, and the create and update paths kube's registry runs."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from platform_api.registry.defaults import apply_defaults
from platform_api.registry.strategy import StatusStrategy, Strategy, strategy_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.field import aggregate

Obj = dict[str, Any]
CREATED = "2026-11-29T10:00:00Z"
SCHEME = builtin_scheme()
MO = "volume.beta.platform.io/mount-options"
CLASS_ANNOTATION = "volume.beta.platform.io/storage-class"
HP = {"path": "/tmp"}
NFS = {"server": "s", "path": "/a"}
CSI = {"driver": "d.example.com", "volumeHandle": "h"}
CSI_EXP = {**CSI, "controllerExpandSecretRef": {"name": "s", "namespace": "n"}}


def affinity(key: str, value: str) -> Obj:
    expression = {"key": key, "operator": "In", "values": [value]}
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}}


AFF = affinity("platform.io/hostname", "n1")
BETA = affinity("failure-domain.beta.platform.io/zone", "z1")
GA = affinity("topology.platform.io/zone", "z1")
VOLUME_BASE = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
CLAIM_BASE = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
BOUND = {"phase": "Bound", "capacity": {"storage": "1Gi"}}


def pv(
    extra: Obj | None = None,
    name: str = "pv",
    annotations: dict[str, str] | None = None,
    base: bool = True,
    **spec: Any,
) -> Obj:
    """A volume (``base``: with access modes and capacity) of ``spec``'s fields."""
    body = {**(copy.deepcopy(VOLUME_BASE) if base else {}), **spec, **(extra or {})}
    meta: Obj = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": body}


def pvc(
    base: bool = True, name: str = "c", annotations: dict[str, str] | None = None, **spec: Any
) -> Obj:
    body = {**(copy.deepcopy(CLAIM_BASE) if base else {}), **spec}
    meta: Obj = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": body}


def res(**more: Any) -> Obj:
    """A claim's resources: 1Gi requested, and ``more``."""
    return {"requests": {"storage": "1Gi"}, **more}


def pv_spec(**fields: Any) -> Obj:
    return {**copy.deepcopy(VOLUME_BASE), **fields}


def claim_spec(**fields: Any) -> Obj:
    return {**copy.deepcopy(CLAIM_BASE), **fields}


def req(size: str, **more: Any) -> Obj:
    return {"requests": {"storage": size}, **more}


def strategy_of(plural: str, subresource: str = "") -> Strategy:
    rt = SCHEME.lookup("", "v1", plural)
    assert rt is not None
    main = strategy_for(rt)
    if not subresource:
        return main
    own = getattr(main, "subresource_strategies", dict)()
    return own.get(subresource) or StatusStrategy(main)


def kind_of(plural: str) -> str:
    return "PersistentVolume" if plural == "persistentvolumes" else "PersistentVolumeClaim"


def created(plural: str, obj: Obj) -> tuple[str, Obj]:
    """The message a create gets ("" when accepted) and the object as it is stored."""
    made = {"apiVersion": "v1", "kind": kind_of(plural), **copy.deepcopy(obj)}
    made.setdefault("metadata", {})["creationTimestamp"] = CREATED
    apply_defaults("", made["kind"], made)
    strategy = strategy_of(plural)
    strategy.prepare_for_create(made)
    errs = strategy.validate(made)
    return (aggregate(errs) if errs else ""), made


def updated(
    plural: str,
    old_obj: Obj,
    change: Callable[[Obj], None],
    subresource: str = "",
    old_status: Obj | None = None,
) -> tuple[str, Obj, Obj]:
    """An update of a stored ``old_obj`` by ``change``: its message, the new object and
    the old one."""
    message, old = created(plural, old_obj)
    assert message == ""
    old["metadata"]["resourceVersion"] = "1"
    if old_status is not None:
        old["status"] = copy.deepcopy(old_status)
    new = copy.deepcopy(old)
    change(new)
    if not subresource:
        apply_defaults("", new["kind"], new)
    strategy = strategy_of(plural, subresource)
    strategy.prepare_for_update(new, old)
    errs = strategy.validate_update(new, old)
    return (aggregate(errs) if errs else ""), new, old


def update_of_stored(plural: str, old: Obj, change: Callable[[Obj], None]) -> str:
    """An update of an object stored before today's rules (validation skipped)."""
    old = {"apiVersion": "v1", "kind": kind_of(plural), **copy.deepcopy(old)}
    apply_defaults("", old["kind"], old)
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    change(new)
    strategy = strategy_of(plural)
    strategy.prepare_for_update(new, old)
    errs = strategy.validate_update(new, old)
    return aggregate(errs) if errs else ""
