"""The ``scale`` sub-resource: an autoscaling/v1 Scale view of a workload's replicas.

GET builds the Scale from the object; PUT and PATCH (JSON, merge, strategic) edit that
view and write ``spec.replicas`` back inside the store's retry loop, so ``kubectl
scale`` and autoscalers never race other writers.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import orjson

from platform_api import errors
from platform_api.apiextensions import scale as crscale
from platform_api.apiextensions.resource import CustomResourceStrategy
from platform_api.codec.goshape import shape
from platform_api.endpoints import patchbody
from platform_api.endpoints.applyconfig import checked_apply_config, meta_of
from platform_api.endpoints.body import decode_against, decode_subresource
from platform_api.endpoints.negotiation import (
    APPLY_PATCH_CBOR,
    APPLY_PATCH_YAML,
    JSON,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    accepted_patch_type,
)
from platform_api.endpoints.options import refuse_export, write_options
from platform_api.endpoints.patch import convert_numbers
from platform_api.endpoints.scope import Scope
from platform_api.endpoints.typemeta import typemeta_problem
from platform_api.endpoints.update import check_update_preconditions
from platform_api.fieldmanager.entries import Managers, decode, encode, store
from platform_api.fieldmanager.manager import Who
from platform_api.fieldmanager.scaleowners import (
    SCALE_VERSION,
    Mappings,
    built_in_mappings,
    parent_owners,
    replicas_path,
    scale_owners,
)
from platform_api.patch import json_patch, merge, strategic
from platform_api.patch.merge import merge_patch
from platform_api.registry.prepare import check_put_target
from platform_api.scheme.gonames import DecodeError
from platform_api.scheme.schemas import Schemas
from platform_api.storage.interface import Preconditions
from platform_api.validation import field
from platform_api.validation.field import go_quote

Obj = dict[str, Any]
SCALE = "io.platform.api.autoscaling.v1.Scale"
_UNSET = -(2**31)  # kube's invalidSpecReplicas
_TARGET = patchbody.PatchTarget("autoscaling/v1", "Scale", SCALE)
# A custom resource's Scale is decoded through client-go's scale scheme, and its
# handler's typer knows no Scale to name when a body does not decode.
_CUSTOM_TARGET = patchbody.PatchTarget(
    "autoscaling/v1", "Scale", SCALE, scheme="platform.io/client-go/scale/util.go:146"
)
_CUSTOM_UNDECODABLE = (
    'no kind is registered for the type v1.Scale in scheme "pkg/apiserver/customresource_'
    'handler.go:781"'
)


def selector_text(selector: Obj | None) -> str:
    """A LabelSelector as the string Scale.status.selector carries."""
    parts = [f"{k}={v}" for k, v in sorted(((selector or {}).get("matchLabels") or {}).items())]
    for expr in (selector or {}).get("matchExpressions") or []:
        op = expr.get("operator", "")
        if op in ("Exists", "DoesNotExist"):
            parts.append(("!" if op == "DoesNotExist" else "") + expr.get("key", ""))
        else:
            values = ",".join(sorted(expr.get("values") or []))
            parts.append(f"{expr.get('key')} {op.lower()} ({values})")
    return ",".join(parts)


def to_scale(obj: Obj) -> Obj:
    meta = obj.get("metadata", {})
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    selector = spec.get("selector")
    if selector and "matchLabels" not in selector and "matchExpressions" not in selector:
        selector = {"matchLabels": selector}  # ReplicationControllers: a plain map
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": spec.get("replicas", 1)},
        "status": {"replicas": status.get("replicas", 0), "selector": selector_text(selector)},
    }


def _mappings(scope: Scope) -> Mappings:
    """Where each of the kind's versions keeps its replicas: a custom resource's
    ``specReplicasPath`` per CRD version, a built-in workload's ``spec.replicas``."""
    strategy = scope.store.strategy
    if isinstance(strategy, CustomResourceStrategy):
        return {
            version: replicas_path(path) if path else None
            for version, path in strategy.replicas_paths.items()
        }
    rt = scope.resource
    return built_in_mappings(rt.group, rt.plural)


def _owners(existing: Obj, mappings: Mappings) -> tuple[Managers, Managers]:
    """The object's field owners and the Scale's (its owners of the replicas, in the
    Scale's version)."""
    try:
        parent = decode(existing["metadata"].get("managedFields") or [])
    except ValueError:
        parent = {}
    return parent, scale_owners(parent, mappings)


def _fold(
    scope: Scope, existing: Obj, parent: Managers, scale: Managers, mappings: Mappings
) -> None:
    """The object's managedFields with the Scale's owners after the write folded back
    (kube's ScaleHandler.ToParent: no cap on Update entries, none written when empty)."""
    folded = parent_owners(parent, scale, mappings, scope.resource.api_version)
    store(existing["metadata"], folded, cap=False)


def _custom_paths(scope: Scope) -> Obj | None:
    """A custom resource's scale paths (its CRD's ``subresources.scale``), else None."""
    strategy = scope.store.strategy
    return strategy.scale if isinstance(strategy, CustomResourceStrategy) else None


def _view(scope: Scope, obj: Obj) -> Obj:
    """The object's Scale as Go writes it (no ``spec.replicas`` when 0: omitempty), which
    is also what a patch edits."""
    paths = _custom_paths(scope)
    view = crscale.to_scale(obj, paths) if paths is not None else to_scale(obj)
    shape(view)
    return view


async def get(scope: Scope) -> bytes:
    out = scope.write_output()
    refuse_export(scope.request)
    stored = await scope.store.read(scope.namespace, scope.name)
    view = _view(scope, stored.object)
    paths = _custom_paths(scope)
    if paths is not None:  # kube's ScaleREST.Get: a resource without replicas has no Scale
        path = paths["specReplicasPath"]
        if not crscale.nested(stored.object, path, int, "int64")[1]:
            raise errors.internal_error(f"the spec replicas field {go_quote(path)} does not exist")
    return await scope.respond_object(view, 200, out)


async def _write(scope: Scope, change: Any, put: Obj | None = None) -> bytes:
    """Apply ``change(scale) -> scale`` to the object's Scale and store its replicas;
    a ``put`` body's uid is a precondition on the object, as on every PUT."""
    opts = write_options(
        scope.request, "UpdateOptions" if scope.request.method == b"PUT" else "PatchOptions"
    )
    out = scope.write_output()
    scope.ctx.dry_run = opts.dry_run
    scope.ctx.field_manager = opts.field_manager

    paths = _custom_paths(scope)
    mappings = _mappings(scope)
    uid = ((put or {}).get("metadata") or {}).get("uid")
    scale_manager = scope.handlers.kind_field_manager(SCALE)
    who = Who(scope.who().manager, SCALE_VERSION, "scale")

    def updated(existing: Obj | None) -> Obj:
        assert existing is not None
        if uid:
            check_update_preconditions(scope, Preconditions(uid=uid), existing)
        before = _view(scope, existing)
        parent, owners = _owners(existing, mappings)
        if owners:  # kube's ScaleHandler.ToSubresource: what a patch sees, and quotes
            before["metadata"]["managedFields"] = encode(owners)
        if (
            paths is not None
            and crscale.nested(existing, paths["specReplicasPath"], int, "")[0] is None
        ):
            before["spec"]["replicas"] = _UNSET  # kube's marker for a path with no value
        live = orjson.loads(orjson.dumps(before))
        scale = change(before)
        check_put_target(scope.resource, scale, scope.namespace, scope.name)  # kube's checkName
        # the Scale's own field manager records the write as Go holds it (0 replicas are
        # no replicas), nothing when nobody owned them (kube's skipNonApplied); then
        # its owners go back to the object
        tracked = orjson.loads(orjson.dumps(scale))
        shape(tracked)
        scale_manager.update(live, tracked, who, scope.store.now())
        result = _scaled(scope, paths, existing, scale)
        after = decode(tracked["metadata"].get("managedFields") or [])
        _fold(scope, result, parent, after, mappings)
        return result

    stored, _ = await scope.store.update(scope.namespace, scope.name, updated, dry_run=opts.dry_run)
    return await scope.respond_object(_view(scope, stored.object), 200, out)


def _scaled(scope: Scope, paths: Obj | None, existing: Obj, scale: Obj) -> Obj:
    """The object with the Scale's replicas (and its resourceVersion, a precondition the
    store checks as kube's does), or kube's refusal of them."""
    wanted = (scale.get("metadata") or {}).get("resourceVersion")
    if wanted:
        existing["metadata"]["resourceVersion"] = wanted
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if paths is not None:  # the custom resource's own validation checks the value
        if replicas == _UNSET:
            raise errors.bad_request(
                f"the spec replicas field {go_quote(paths['specReplicasPath'])} cannot be empty"
            )
        crscale.set_replicas(existing, paths, replicas)
        strategy = scope.store.strategy
        if isinstance(strategy, CustomResourceStrategy) and strategy.has_defaults:
            # kube defaults a custom resource each time it reads one: a spec the
            # replicas brought back has its defaults from then on
            strategy.compiled.default(existing)
        return existing
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        detail = "must be greater than or equal to 0"
        raise errors.invalid(
            "Scale", "autoscaling", scope.name, [field.invalid("spec.replicas", replicas, detail)]
        )
    existing.setdefault("spec", {})["replicas"] = replicas
    return existing


async def put(scope: Scope) -> bytes:
    undecodable = _CUSTOM_UNDECODABLE if _custom_paths(scope) is not None else ""
    body = await decode_subresource(
        scope, "UpdateOptions", "Scale", SCALE, "autoscaling/v1", undecodable=undecodable
    )
    check_put_target(scope.resource, body, scope.namespace, scope.name)  # before any read
    return await _write(scope, lambda _scale: orjson.loads(orjson.dumps(body)), body)


async def patch(scope: Scope) -> bytes:
    types = [JSON_PATCH, MERGE_PATCH]
    custom = _custom_paths(scope) is not None
    target = _CUSTOM_TARGET if custom else _TARGET
    if not custom:
        types.append(STRATEGIC_MERGE_PATCH)  # no patch strategies in a CRD's Scale
    types.append(APPLY_PATCH_YAML)
    if scope.handlers.cbor:
        types.append(APPLY_PATCH_CBOR)
    patch_type = accepted_patch_type(scope.content_type(), types, scope.resource.custom)
    if patch_type in (APPLY_PATCH_YAML, APPLY_PATCH_CBOR):
        return await _apply(scope, patch_type)
    data = scope.body()  # kube reads the body before the options
    opts = write_options(scope.request, "PatchOptions", patch_type)
    failure: errors.StatusError | None = None
    try:
        document = patchbody.parse(data, patch_type, opts.field_validation).document
    except errors.StatusError as e:  # kube decodes the patch only once the object is read
        document, failure = None, e

    schemas = scope.handlers.scheme.schemas
    shown = document if patch_type == STRATEGIC_MERGE_PATCH else None

    def change(scale: Obj) -> Obj:
        if failure is not None:
            raise failure
        written: Callable[[Any], Any] | None = None
        if patch_type == JSON_PATCH:
            decoded: dict[int, Any] = {}
            try:
                result: Any = json_patch.apply(scale, document, decoded)
            except json_patch.JSONPatchError:
                raise errors.unprocessable() from None
            written = partial(json_patch.as_written, decoded=decoded)
        else:
            fresh = orjson.loads(orjson.dumps(document))
            if patch_type == STRATEGIC_MERGE_PATCH:
                result = strategic.apply(scale, fresh, schemas, SCALE)
                if isinstance(result, dict):
                    convert_numbers(scope.handlers.kind_field_manager(SCALE), result, shown)
            else:
                result = merge_patch(scale, fresh)
                written = partial(merge.as_written, patch=document)
        if isinstance(result, dict):
            strategic_patch = patch_type == STRATEGIC_MERGE_PATCH
            quoted = (lambda: written(result)) if written is not None else None
            patchbody.check_patched_type(
                result, target, schemas, scope.name, strategic_patch, shown=quoted
            )
        return _decoded(result, schemas, shown, written)

    return await _write(scope, change)


async def _apply(scope: Scope, patch_type: str) -> bytes:
    """Server-side apply to the Scale: the apply's ownership is worked out on the Scale,
    whose owners are the object's owners of its replicas, then folded back into the
    object's managedFields (kube's ScaleHandler, ``scaleowners``)."""
    out = scope.write_output()
    data = scope.body()
    opts = write_options(scope.request, "PatchOptions", patch_type)
    scope.ctx.dry_run = opts.dry_run
    scope.ctx.field_manager = opts.field_manager
    manager = scope.handlers.kind_field_manager(SCALE)
    who = Who(opts.field_manager, SCALE_VERSION, "scale")
    paths = _custom_paths(scope)
    mappings = _mappings(scope)

    def updated(existing: Obj | None) -> Obj:
        assert existing is not None
        # kube reads the object before the configuration: a missing one is a 404 first
        config = checked_apply_config(
            scope,
            data,
            opts.field_validation,
            patch_type == APPLY_PATCH_CBOR,
            (SCALE_VERSION, "Scale"),
            manager,
            False,
        )
        parent, owners = _owners(existing, mappings)
        live = _view(scope, existing)
        live["metadata"]["managedFields"] = encode(owners)
        fresh = orjson.loads(orjson.dumps(config))
        scale = manager.apply(live, fresh, who, opts.force, scope.store.now())
        if paths is not None:
            # kube v1.36 gets this far with a custom resource, then fails to convert the
            # applied Scale to the resource's version: a 500, which is kept here
            namespace, name = meta_of(config)
            raise errors.unknown(
                f"failed to convert new object ({namespace}/{name}; {SCALE_VERSION}, "
                "Kind=Scale) to proper version: request to convert CR to an invalid "
                f"group/version: {SCALE_VERSION}"
            )
        check_put_target(scope.resource, scale, scope.namespace, scope.name)
        scale["metadata"].pop("resourceVersion", None)  # an apply sets no precondition
        applied = decode(scale["metadata"].get("managedFields") or [])
        result = _scaled(scope, paths, existing, scale)
        _fold(scope, result, parent, applied, mappings)
        return result

    stored, _ = await scope.store.update(scope.namespace, scope.name, updated, dry_run=opts.dry_run)
    return await scope.respond_object(_view(scope, stored.object), 200, out)


def _decoded(
    patched: Any, schemas: Schemas, shown: Any, written: Callable[[Any], Any] | None
) -> Obj:
    """The patched Scale, decoded as kube decodes it: a strategic patch's result through
    its unstructured converter, whose words ``shown`` selects; a JSON or merge patch's
    as its library writes it (``written``: the key order a refusal quotes, and the
    order kube meets the problems in)."""
    if not isinstance(patched, dict):
        raise patchbody.patch_invalid(patched, typemeta_problem(JSON, patched))
    doc = written(patched) if written is not None else patched
    try:
        decode_against(doc, {}, schemas, SCALE, None)
    except DecodeError as e:
        problem = e.converter_problem() if shown is not None else str(e)
        raise patchbody.patch_invalid(doc, problem, shown) from None
    return patched
