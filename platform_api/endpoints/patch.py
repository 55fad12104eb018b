"""patch: JSON Patch and JSON Merge Patch, applied inside the store's retry loop.

The patch is re-applied to the freshest object on every compare-and-swap attempt, so
concurrent patches never lose an update.  The result is decoded against the schema
like a PUT body; what fails there is kube's ``"" is invalid: patch: Invalid value``.
"""

from __future__ import annotations

from typing import Any

import orjson

from platform_api import errors
from platform_api.codec import BodyError, parse_json
from platform_api.endpoints.body import strict_or_warn
from platform_api.endpoints.negotiation import (
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    input_type,
)
from platform_api.endpoints.options import write_options
from platform_api.endpoints.scope import Scope
from platform_api.patch import json_patch, strategic
from platform_api.patch.merge import merge_patch
from platform_api.scheme.decoding import DecodeError, Decoder
from platform_api.validation import field

Obj = dict[str, Any]
PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH]


def _patch_invalid(patched: Any, detail: str) -> errors.StatusError:
    """kube's answer when the patched document does not decode: an Invalid on ``patch``."""
    value = orjson.dumps(patched).decode()
    return errors.invalid("", "", "", [field.invalid("patch", value, detail)])


def _strategic(existing: Obj, patch: Obj, schemas: Any, definition: str) -> Obj:
    try:
        return strategic.apply(existing, patch, schemas, definition)
    except strategic.PatchError as e:
        if e.kind == strategic.BAD_REQUEST:
            raise errors.bad_request(str(e)) from None
        if e.kind == strategic.INVALID:
            raise errors.unprocessable() from None
        raise errors.internal_error(e) from None


async def handle(scope: Scope) -> bytes:
    patch_type = input_type(scope.content_type(), PATCH_TYPES)
    opts = write_options(scope.request, "PatchOptions", patch_type)
    out = scope.output()
    scope.ctx.dry_run = opts.dry_run
    scope.ctx.field_manager = opts.field_manager
    data = scope.body()
    try:
        patch, _ = parse_json(data)
    except BodyError as e:
        raise errors.bad_request(f"error decoding patch: {e}") from None
    if patch_type == JSON_PATCH:
        operations = json_patch.decode(patch)
    elif not isinstance(patch, dict):
        if patch_type == STRATEGIC_MERGE_PATCH:
            kind = "array" if isinstance(patch, list) else "value"
            raise errors.bad_request(
                f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
            )
        raise errors.bad_request("Invalid JSON Patch")
    rt = scope.resource
    schemas = scope.handlers.scheme.schemas

    def updated(existing: Obj | None) -> Obj:
        if existing is None:
            raise errors.not_found(rt.plural, rt.group, scope.name)
        fresh = orjson.loads(orjson.dumps(patch))  # every attempt patches from a clean copy
        if patch_type == JSON_PATCH:
            patched = json_patch.apply(existing, operations)
        elif patch_type == STRATEGIC_MERGE_PATCH:
            patched = _strategic(existing, fresh, schemas, rt.definition)
        else:
            patched = merge_patch(existing, fresh)
        if not isinstance(patched, dict):
            raise _patch_invalid(patched, "json: cannot unmarshal into Go value of type struct")
        try:
            decoded = Decoder(schemas).decode(patched, rt.definition)
        except DecodeError as e:
            raise _patch_invalid(patched, str(e)) from None
        if opts.field_validation == "Strict" and decoded.strict_errors():
            detail = "strict decoding error: " + ", ".join(decoded.strict_errors())
            raise _patch_invalid(patched, detail)
        strict_or_warn(scope.ctx, opts.field_validation, decoded.strict_errors())
        return decoded.obj

    admit = scope.handlers.admission.validator(scope, "UPDATE")
    stored, _ = await scope.store.update(
        scope.namespace,
        scope.name,
        updated,
        dry_run=opts.dry_run,
        admit=admit,
        subresource=scope.info.subresource,
    )
    return scope.respond_object(stored, 200, out)
