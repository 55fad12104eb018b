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
from platform_api.scheme.readback import OtherKind, ReadBackError, read_back
from platform_api.scheme.schemas import load_schemas

Obj = dict[str, Any]


def read_back_patched(patched: Any, kind: tuple[str, str, str], strict: bool = False) -> Obj:
    """``patched`` as the built-in type ``kind`` holds it (custom resources as they are);
    errors.StatusError as kube answers what does not decode."""
    if not isinstance(patched, dict):
        raise errors.internal_error(typemeta_problem(patched))
    try:
        return read_back(patched, kind, load_schemas(), strict)
    except OtherKind as e:
        if strict:
            raise errors.internal_error(f"failed to convert object: {e}") from None
        raise errors.unknown(str(e)) from None
    except ReadBackError as e:
        raise errors.internal_error(str(e)) from None
