"""The object a mutating webhook or policy patched, read back into its type.

kube decodes the patched JSON into the versioned Go type before the request goes on
(webhooks leniently, a policy's JSON patch strictly), so what a patch wrote that the
type cannot hold never reaches validation or storage: kube answers an internal error
in its decoder's words.  A patch that made the object another kind decodes as that kind
and then fails the conversion into the resource's internal type: a webhook's is kube's
bare 500 (no reason), a policy's its ``failed to convert object`` internal error.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.gotext import typemeta_problem
from platform_api.patch import json_patch
from platform_api.scheme.readback import OtherKind, ReadBackError, read_back
from platform_api.scheme.schemas import load_schemas

Obj = dict[str, Any]


def read_back_patched(
    patched: Any,
    kind: tuple[str, str, str],
    strict: bool = False,
    decoded: dict[int, Any] | None = None,
) -> Obj:
    """``patched`` as the built-in type ``kind`` holds it (custom resources as they are);
    errors.StatusError as kube answers what does not decode.  ``decoded``: the objects
    the patch library decoded on the way (``json_patch.apply``), which it writes back with
    sorted keys: kube's decoder meets the fields in that order, and its first error is
    the one it reports."""
    if not isinstance(patched, dict):
        raise errors.internal_error(typemeta_problem(patched))
    schemas = load_schemas()
    try:
        return read_back(patched, kind, schemas, strict)
    except OtherKind as e:
        if strict:
            raise errors.internal_error(f"failed to convert object: {e}") from None
        raise errors.unknown(str(e)) from None
    except ReadBackError as e:
        error = e
    if decoded:
        try:
            read_back(json_patch.as_written(patched, decoded), kind, schemas, strict)
        except ReadBackError as first:
            error = first
    raise errors.internal_error(str(error))
