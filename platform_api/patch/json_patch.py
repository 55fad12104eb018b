"""JSON Patch (RFC 6902), with kube's limits and error classes.

The ``jsonpatch`` library does the pointer arithmetic; this module maps its
failures onto kube's answers: a malformed document is 400, an operation that
cannot apply (including a failed ``test``) is 422, more than 10,000 operations 413.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer

from platform_api import errors

MAX_OPERATIONS = 10000


def decode(patch: Any) -> list[dict[str, Any]]:
    if not isinstance(patch, list) or not all(isinstance(op, dict) for op in patch):
        kind = "object" if isinstance(patch, dict) else type(patch).__name__
        raise errors.bad_request(
            f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch"
        )
    if len(patch) > MAX_OPERATIONS:
        raise errors.request_entity_too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {len(patch)}"
        )
    return patch


def apply(doc: dict[str, Any], operations: list[dict[str, Any]]) -> Any:
    try:
        return jsonpatch.JsonPatch(operations).apply(doc, in_place=True)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, KeyError):
        raise errors.unprocessable() from None
