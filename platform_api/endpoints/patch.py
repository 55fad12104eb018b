"""patch: JSON Patch and JSON Merge Patch, applied inside the store's retry loop.

The patch is re-applied to the freshest object on every compare-and-swap attempt, so
concurrent patches never lose an update.  The result is decoded against the schema
like a PUT body; what fails there is kube's ``"" is invalid: patch: Invalid value``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import orjson

from platform_api import errors, heavy
from platform_api.codec import (
    Duplicates,
)
from platform_api.endpoints import patchbody
from platform_api.endpoints.applyconfig import checked_apply_config, meta_of
from platform_api.endpoints.body import custom_strategy, decode_against, strict_or_warn
from platform_api.endpoints.negotiation import (
    APPLY_PATCH_CBOR,
    APPLY_PATCH_YAML,
    JSON,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    Output,
    accepted_patch_type,
)
from platform_api.endpoints.options import WriteOptions, write_options
from platform_api.endpoints.scope import Scope
from platform_api.endpoints.typemeta import typemeta_problem
from platform_api.fieldmanager import fit
from platform_api.fieldmanager.manager import FieldManager
from platform_api.patch import json_patch, merge, strategic
from platform_api.patch.merge import merge_patch
from platform_api.registry.prepare import check_put_target, undeterminable
from platform_api.scheme.decoding import Decoded
from platform_api.scheme.gonames import DecodeError

Obj = dict[str, Any]
PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH_YAML]
# Custom resources have no patch strategies to merge by.
CUSTOM_PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH_YAML]


def patch_types(custom: bool, cbor: bool) -> list[str]:
    """The patch types a resource's PATCH takes (CBOR has only apply)."""
    accepted = CUSTOM_PATCH_TYPES if custom else PATCH_TYPES
    return [*accepted, APPLY_PATCH_CBOR] if cbor else accepted


def _strategic(existing: Obj, patch: Obj, schemas: Any, definition: str) -> Obj:
    try:
        return strategic.apply(existing, patch, schemas, definition)
    except strategic.PatchError as e:
        if e.kind == strategic.BAD_REQUEST:
            raise errors.bad_request(str(e)) from None
        if e.kind == strategic.INVALID:
            raise errors.unprocessable() from None
        # kube's interpretStrategicMergePatchError passes the rest on as plain errors:
        # a 500 with the error's text and no reason.
        raise errors.unknown(str(e)) from None


async def handle(scope: Scope) -> bytes:
    accepted = patch_types(scope.resource.custom, scope.handlers.cbor)
    patch_type = accepted_patch_type(scope.content_type(), accepted, scope.resource.custom)
    out = scope.write_output()  # kube's order: the patch's type, the answer's, the body, options
    data = scope.body()
    scope.event("limitedReadBody succeeded", len=len(data))
    opts = write_options(scope.request, "PatchOptions", patch_type)
    scope.ctx.dry_run = opts.dry_run
    scope.ctx.field_manager = opts.field_manager
    scope.event("Recorded the audit event")
    if patch_type in (APPLY_PATCH_YAML, APPLY_PATCH_CBOR):
        return await _apply(scope, opts, out, data, patch_type == APPLY_PATCH_CBOR)
    failure: errors.StatusError | None = None
    try:
        body = patchbody.parse(data, patch_type, opts.field_validation)
    except errors.StatusError as e:  # kube decodes the patch only once the object is read
        body, failure = patchbody.PatchBody(None), e
    rt = scope.resource
    schemas = scope.handlers.scheme.schemas
    strategic_patch = patch_type == STRATEGIC_MERGE_PATCH

    def updated(existing: Obj | None) -> Obj:
        if existing is None:
            raise errors.not_found(rt.plural, rt.group, scope.name)
        if failure is not None:
            raise failure
        # kube shows a strategic patch's refusals as the patch map Go prints (%v), as
        # the merge left it (its directives taken out)
        shown = None
        if patch_type == JSON_PATCH:
            decoded: dict[int, Any] = {}
            try:
                patched = json_patch.apply(existing, body.document, decoded)
            except json_patch.JSONPatchError:
                raise errors.unprocessable() from None
            written: Callable[[Any], Any] = partial(json_patch.as_written, decoded=decoded)
        else:
            written = partial(merge.as_written, patch=body.document)
            fresh = orjson.loads(orjson.dumps(body.document))  # a clean copy per attempt
            if strategic_patch:
                patched = _strategic(existing, fresh, schemas, rt.definition)
                # a copy: a replaced map is the result itself, which is typed next
                shown = orjson.loads(orjson.dumps(fresh))
                convert_numbers(scope.handlers.field_manager(rt), patched, shown)
            else:
                patched = merge_patch(existing, fresh)
        quoted = _Quoted(patched, written)
        if isinstance(patched, dict):
            _check_type(scope, quoted, strategic_patch, opts.field_validation, body.problems)
        obj = _decode_patched(scope, quoted, opts.field_validation, body.problems, shown)
        check_put_target(rt, obj, scope.namespace, scope.name)  # kube's checkName
        return obj

    scope.event("About to apply patch")
    stored, _ = await scope.update(updated)
    scope.event("Object stored in database")
    return await scope.respond_object(stored, 200, out)


def _check_type(
    scope: Scope, quoted: _Quoted, strategic_patch: bool, level: str, problems: list[str]
) -> None:
    """The patched object's apiVersion and kind as kube's decoders take them; one left
    with no apiVersion has its strict problems reported first (the patch's own, then
    the decoder's), warned of or refused per ``level``, as kube."""
    try:
        patchbody.check_patched_type(
            quoted.patched,
            patchbody.PatchTarget.of(scope.resource),
            scope.handlers.scheme.schemas,
            scope.name,
            strategic_patch,
            scope.handlers.aliases,
            quoted.doc,
        )
    except patchbody.Typeless as typeless:
        strict = problems + typeless.unknown_fields(quoted.doc())
        if level == "Strict" and strict:
            raise quoted.refused("strict decoding error: " + ", ".join(strict)) from None
        strict_or_warn(scope.ctx, level, strict)
        raise


def convert_numbers(manager: FieldManager, patched: Obj, shown: Any) -> None:
    """Integer fields as kube's unstructured converter fills them from the strategic merge
    patch's result (``2.0`` is 2, ``2147483648`` an int32's -2147483648; a fraction is
    refused in its words); ``manager`` knows the patched kind's types."""
    if not fit.has_conversions(shown):  # only the patch brings numbers to convert
        return
    problem = fit.convert_numbers(manager.typed, manager.node, patched)
    if problem is not None:
        raise patchbody.patch_invalid(patched, problem, shown)


_ABSENT = object()


class _Quoted:
    """A patched document and how a refusal quotes it: in the key order kube's
    json-patch library writes it (``written``, from the patch), read only on refusal."""

    def __init__(self, patched: Any, written: Callable[[Any], Any] | None = None) -> None:
        self.patched, self._written = patched, written
        # its apiVersion and kind as the patch left them: the type check fills them in
        # for the decoder, kube's quote shows them as they were (a null kind)
        self._typemeta = {
            k: patched[k] for k in patchbody.TYPEMETA if isinstance(patched, dict) and k in patched
        }

    def doc(self) -> Any:
        """The document as the patch library writes it, which kube decodes."""
        doc = self.patched if self._written is None else self._written(self.patched)
        if not isinstance(doc, dict) or all(
            doc.get(k, _ABSENT) == self._typemeta.get(k, _ABSENT) for k in patchbody.TYPEMETA
        ):
            return doc
        doc = dict(doc)
        for key in patchbody.TYPEMETA:
            if key in self._typemeta:
                doc[key] = self._typemeta[key]
            else:
                doc.pop(key, None)
        return doc

    def refused(self, detail: str) -> errors.StatusError:
        return patchbody.patch_invalid(self.doc(), detail)

    def first_problem(self, scope: Scope, found: DecodeError) -> str:
        """Of several problems, the one kube meets first: it decodes the written
        document, whose keys may come in another order than the patched one's."""
        doc = self.doc()
        if doc is not self.patched:
            try:
                _decode(scope, doc, {})
            except DecodeError as e:
                return str(e)
        return str(found)


def _decode_patched(
    scope: Scope,
    quoted: _Quoted,
    level: str,
    problems: list[str],
    shown: Any,
    applied: bool = False,
) -> Obj:
    """The patched object through the schema, as a PUT body would go; the patch's own
    strict problems come first, as kube joins them.  An ``applied`` one keeps its nulls
    (no request decoder reads an apply's result)."""
    patched = quoted.patched
    if not isinstance(patched, dict):
        raise patchbody.patch_invalid(patched, typemeta_problem(JSON, patched))
    custom = scope.resource.custom
    # a custom resource's refusal shows the patched map as it was, before its unknown
    # fields are pruned, every level sorted as Go writes maps
    unpruned = orjson.loads(orjson.dumps(patched)) if custom and level == "Strict" else None
    try:
        decoded = _decode(scope, patched, {}, applied)
    except DecodeError as e:
        if shown is not None:  # a strategic patch's result goes through kube's converter
            raise patchbody.patch_invalid(patched, e.converter_problem(), shown) from None
        raise quoted.refused(quoted.first_problem(scope, e)) from None
    found = decoded.strict_errors()
    # kube's converter sorts the unknown fields it finds in a strategic patch's result
    strict = problems + (sorted(found) if shown is not None else found)
    if level == "Strict" and strict and shown is None and unpruned is None:
        strict = problems + _decode(scope, quoted.doc(), {}).strict_errors()  # kube's order
    if level == "Strict" and strict:
        detail = "strict decoding error: " + ", ".join(strict)
        if unpruned is not None:
            raise patchbody.patch_invalid(unpruned, detail, sort_keys=True)
        if shown is not None:
            raise patchbody.patch_invalid(patched, detail, shown)
        raise quoted.refused(detail)
    strict_or_warn(scope.ctx, level, strict)
    return decoded.obj


def _decode(
    scope: Scope, obj: Obj, duplicates: Duplicates, applied: bool = False, as_config: bool = False
) -> Decoded:
    rt = scope.resource
    custom = custom_strategy(rt, scope.store.strategy)
    schemas = scope.handlers.scheme.schemas
    return decode_against(
        obj, duplicates, schemas, rt.definition, custom, applied=applied, as_config=as_config
    )


def _apply_config(scope: Scope, data: bytes, level: str, from_cbor: bool) -> Obj:
    """The applied configuration: parsed, checked, its unknown fields dropped.  It is read
    as kube's field manager reads it: not defaulted (kube defaults the merged object after
    it has settled who owns what, so the applier never owns a field only the schema's
    default set), quantities as written ("1024Mi" changes a "1Gi")."""
    rt = scope.resource
    manager = scope.handlers.field_manager(rt)
    target = (rt.api_version, rt.kind)
    config = checked_apply_config(scope, data, level, from_cbor, target, manager, rt.custom)
    try:
        decoded = _decode(scope, config, {}, applied=True, as_config=True)
    except DecodeError as e:
        if rt.custom:
            raise patchbody.patch_invalid(config, str(e)) from None
        # what the field manager's converter refuses in the merged object (a quantity
        # that does not parse, bad base64): its bare 500
        raise errors.conversion_failed(meta_of(config), *target, e.converter_problem()) from None
    strict_or_warn(scope.ctx, level, decoded.strict_errors())
    return decoded.obj


def _check_created(scope: Scope, obj: Obj) -> None:
    """kube's checks of an object an apply creates: a configuration that names a uid is
    for an object that exists (409), then its name is the request's (checkName)."""
    meta = obj.get("metadata") or {}
    if meta.get("uid"):
        rt = scope.resource
        why = (
            f"uid mismatch: the provided object specified uid {meta['uid']}, "
            "and no existing object was found"
        )
        raise errors.conflict(rt.plural, rt.group, scope.name, why)
    if not meta.get("name"):
        raise undeterminable(scope.name)


async def _apply(
    scope: Scope, opts: WriteOptions, out: Output, data: bytes, from_cbor: bool
) -> bytes:
    """Server-side apply: merge the configuration, track ownership, create if absent."""
    failure: errors.StatusError | None = None
    try:
        config = await heavy.run(_apply_config, scope, data, opts.field_validation, from_cbor)
    except errors.StatusError as e:
        if not scope.info.subresource:
            raise
        # a sub-resource is never created: kube reads its object before the configuration,
        # so a missing one is a 404 whatever the body
        config, failure = {}, e
    manager = scope.handlers.field_manager(scope.resource)
    who = scope.who()

    def updated(existing: Obj | None) -> Obj:
        if failure is not None:
            raise failure
        fresh = orjson.loads(orjson.dumps(config))
        merged = manager.apply(existing, fresh, who, opts.force, scope.store.now())
        obj = _decode_patched(scope, _Quoted(merged), "Ignore", [], None, applied=True)
        if existing is None:
            _check_created(scope, obj)
        return obj

    stored, created = await scope.update(updated, apply=True)
    return await scope.respond_object(stored, 201 if created else 200, out)
