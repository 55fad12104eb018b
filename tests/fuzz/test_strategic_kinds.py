"""Property tests of strategic merge patch over every built-in kind: a patch shaped like
the kind (its own partial object, with patch directives sprinkled in) applies or is
refused with the patch's own errors, whatever list merge keys and strategies the kind's
schema gives each field."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from platform_api.patch import strategic
from tests.fuzz.schema_objects import SCHEMAS, SCHEME, objects_of

Obj = dict[str, Any]
TYPES = [rt for rt in SCHEME.all() if not rt.custom and "/" not in rt.plural]
_DIRECTIVES = st.sampled_from(
    [
        {"$patch": "replace"},
        {"$patch": "delete"},
        {"$patch": "merge"},
        {"$retainKeys": ["a"]},
        {"$setElementOrder/finalizers": ["a"]},
        {"$deleteFromPrimitiveList/finalizers": ["a"]},
    ]
)


def _with_directive(patch: Obj, directive: Obj | None) -> Obj:
    """``patch`` with ``directive`` at its top or in its first object-valued field."""
    if directive is None:
        return patch
    for value in patch.values():
        if isinstance(value, dict):
            value.update(directive)
            return patch
    return {**patch, **directive}


@given(
    st.sampled_from(TYPES).flatmap(
        lambda rt: st.tuples(
            st.just(rt.definition),
            objects_of(rt.definition),
            objects_of(rt.definition),
            st.none() | _DIRECTIVES,
        )
    )
)
def test_a_patch_shaped_like_the_kind_applies_or_is_a_patch_error(
    case: tuple[str, Obj, Obj, Obj | None],
) -> None:
    definition, original, patch, directive = case
    try:
        result = strategic.apply(original, _with_directive(patch, directive), SCHEMAS, definition)
    except strategic.PatchError as e:
        assert e.kind in (strategic.BAD_REQUEST, strategic.INVALID, strategic.INTERNAL)
        return
    orjson.dumps(result)
