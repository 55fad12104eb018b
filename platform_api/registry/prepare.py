"""System metadata and the strategy's checks before a write (kube's ``rest.BeforeCreate``
and ``rest.BeforeUpdate``), as the registry store runs them inside its retry loop."""

from __future__ import annotations

import random

from platform_api import errors, gotext
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.gateddrops import GateCheck, kube_defaults, pod_options
from platform_api.registry.strategy import Obj, Strategy
from platform_api.scheme.types import ResourceType
from platform_api.uid import new_uid
from platform_api.validation import field, podoptions
from platform_api.validation.field import FieldError
from platform_api.validation.names import GENERIC_NAMES
from platform_api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from platform_api.validation.podoptions import PodOptions

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_GENERATED_BASE_MAX = 58
NAMESPACE_MISMATCH = (
    "the namespace of the provided object does not match the namespace sent on the request"
)


def generate_name(base: str) -> str:
    """kube's SimpleNameGenerator: the base, cut to fit, and five random characters."""
    return base[:_GENERATED_BASE_MAX] + "".join(random.choices(_NAME_CHARS, k=5))


def before_create(rt: ResourceType, strategy: Strategy, namespace: str, obj: Obj, now: str) -> str:
    """Fill system metadata and validate, in place; returns the object's name."""
    meta = obj.setdefault("metadata", {})
    _set_namespace(rt, meta, namespace)
    if meta.get("generateName") and not meta.get("name"):
        generates = getattr(strategy, "generates_names", True)
        meta["name"] = generate_name(meta["generateName"]) if generates else meta["generateName"]
    apply_defaults(rt.group, rt.kind, obj)
    meta["uid"] = new_uid()
    meta["creationTimestamp"] = now
    for system in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(system, None)
    strategy.prepare_for_create(obj)
    with podoptions.using(_pod_options(rt, strategy, None)):
        errs = strategy.validate(obj)
    if not errs and _unchecked_names(strategy):
        # kube's BeforeCreate checks the metadata after the kind's validation, which
        # for such a kind does not (its names as path segments, no finalizer rules)
        errs = validate_object_meta(meta, rt.namespaced, GENERIC_NAMES)
    name = meta.get("name", "")
    if errs:
        raise errors.invalid(*_invalid_kind(rt, strategy, obj), name, errs)
    strategy.canonicalize(obj)
    return str(name)


def _unchecked_names(strategy: Strategy) -> bool:
    """Whether the kind's validation leaves its metadata, or at least its names, to
    BeforeCreate's generic check (a name any path segment would do for)."""
    if not getattr(strategy, "validates_metadata", True):
        return True
    rule = getattr(strategy, "name_rule", None)
    return rule is not None and rule() == "any"


def check_put_target(rt: ResourceType, obj: Obj, namespace: str, name: str) -> None:
    """A PUT body names its object, the URL's, before anything is read (kube's
    update handler: 400 whether or not the object exists; the namespace first)."""
    meta = obj.get("metadata") or {}
    check_namespace(rt, meta, namespace)
    if not meta.get("name"):
        raise undeterminable(name)
    check_name(obj, name)


def undeterminable(name: str) -> errors.StatusError:
    """kube's 400 for a written object that names nothing (``checkName``)."""
    return errors.bad_request(
        f"the name of the object ({name} based on URL) was undeterminable: name must be provided"
    )


def check_name(obj: Obj, name: str) -> None:
    """The body's name must be the URL's (and is set to it when absent)."""
    body_name = obj.get("metadata", {}).get("name")
    if body_name is not None and body_name != name:
        raise errors.bad_request(
            f"the name of the object ({body_name}) does not match the name on the URL ({name})"
        )
    obj.setdefault("metadata", {})["name"] = name


def prepare_update(
    rt: ResourceType, strategy: Strategy, main: bool, target: tuple[str, str], update: Obj, old: Obj
) -> None:
    """Carry the system metadata over from ``old``, check the resourceVersion, then the
    strategy's preparation (``check_update`` validates after); ``main`` is False for a
    sub-resource whose body is not the kind (its writes get no defaults).  ``target`` is
    the URL's (namespace, name)."""
    namespace, name = target
    meta = update.setdefault("metadata", {})
    old_meta = old["metadata"]
    check_name(update, name)
    _set_namespace(rt, meta, namespace)
    meta.pop("selfLink", None)  # kube clears it on every write
    version = _revision(meta.get("resourceVersion"))
    if not version:
        if not strategy.allow_unconditional_update:
            # kube's update handler names the resource here, not the kind
            required = field.invalid(
                "metadata.resourceVersion", 0, "must be specified for an update"
            )
            raise errors.invalid(rt.plural, rt.group, name, [required])
        meta["resourceVersion"] = old_meta["resourceVersion"]
    elif version != int(old_meta["resourceVersion"]):
        raise errors.conflict(rt.plural, rt.group, name)
    if main:
        apply_defaults(rt.group, rt.kind, update)
    if "generation" in old_meta:
        meta["generation"] = old_meta["generation"]
    else:
        meta.pop("generation", None)
    strategy.prepare_for_update(update, old)
    _keep_system_metadata(update["metadata"], old_meta)


def before_update(
    rt: ResourceType, strategy: Strategy, main: bool, target: tuple[str, str], update: Obj, old: Obj
) -> None:
    """``prepare_update``, then ``check_update`` with nothing denied (the store asks the
    authorizer in between, for kinds that authorize parts of a write)."""
    prepare_update(rt, strategy, main, target, update, old)
    check_update(rt, strategy, update, old, [])


def check_update(
    rt: ResourceType, strategy: Strategy, update: Obj, old: Obj, denied: list[FieldError]
) -> None:
    """The update's validation: the metadata, as kube's validateCommonFields checks it
    before the kind's validation (as a create's, names as path segments, then as an
    update's), which checks it again (so a problem is a cause two to four times, once in
    the message); what the writer may not change (``denied``, found asynchronously);
    then the kind's rules."""
    meta = update["metadata"]
    errs = validate_object_meta(meta, rt.namespaced, GENERIC_NAMES)
    errs += validate_object_meta_update(meta, old["metadata"])
    errs += denied
    with podoptions.using(_pod_options(rt, strategy, old)):
        errs += strategy.validate_update(update, old)
    if errs:
        name = update["metadata"].get("name", "")
        raise errors.invalid(*_invalid_kind(rt, strategy, update), name, errs)
    strategy.canonicalize(update)


def _pod_options(rt: ResourceType, strategy: Strategy, old: Obj | None) -> PodOptions:
    """What the server's feature gates (and ``old``) let a pod spec of this kind hold."""
    gates: GateCheck = getattr(strategy, "gates", kube_defaults)
    return pod_options(rt.group, rt.kind, old, gates)


def _revision(version: object) -> int:
    """The revision an update names as kube's storage versioner reads it (0 for none, as
    for "0"); what it cannot read is its plain 500, ``strconv.ParseUint: ...``."""
    if not version:
        return 0
    try:
        return gotext.parse_int(str(version), unsigned=True)
    except ValueError as e:
        raise errors.unknown(str(e)) from None


def ensure_namespace(rt: ResourceType, obj: Obj, namespace: str) -> None:
    """kube's EnsureObjectNamespaceMatchesRequestNamespace, which its handlers run
    before admission: webhooks and policies see the request's namespace in the object."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        _set_namespace(rt, meta, namespace)


def _set_namespace(rt: ResourceType, meta: Obj, namespace: str) -> None:
    if not rt.namespaced:
        meta.pop("namespace", None)
        return
    check_namespace(rt, meta, namespace)
    meta["namespace"] = namespace


def check_namespace(rt: ResourceType, meta: Obj, namespace: str) -> None:
    """A namespace in the body must be the URL's (a cluster-scoped kind's is ignored)."""
    if rt.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.bad_request(NAMESPACE_MISMATCH)


def _keep_system_metadata(meta: Obj, old_meta: Obj) -> None:
    meta.setdefault("uid", old_meta.get("uid"))
    for system in ("creationTimestamp", "deletionTimestamp"):
        if old_meta.get(system):
            meta[system] = old_meta[system]
    if "deletionGracePeriodSeconds" in old_meta and "deletionGracePeriodSeconds" not in meta:
        meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]


def _invalid_kind(rt: ResourceType, strategy: Strategy, obj: Obj) -> tuple[str, str]:
    """The kind an Invalid names: a custom resource's own (kube names the object's GVK,
    which may be another kind than the resource's), else the strategy's or the type's."""
    kind, version = obj.get("kind"), obj.get("apiVersion")
    if rt.custom and isinstance(kind, str) and kind:
        group = version.rpartition("/")[0] if isinstance(version, str) and version else rt.group
        return kind, group
    return strategy.error_kind or (rt.kind, rt.group)
