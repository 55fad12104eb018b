"""Strategic merge patch, as apimachinery's ``strategicpatch`` applies it on the server.

The patch strategy (``merge``, ``replace``, ``retainKeys``) and merge key of each field
come from the ``x-kubernetes-patch-*`` markers of the schemas.  Directives: ``$patch``
(replace, delete, merge) in maps and list items, ``$retainKeys``,
``$setElementOrder/<list>`` and ``$deleteFromPrimitiveList/<list>``.  Lists merged by
key keep kube's element order: the patch's order for its items, the server's for the
rest.  Server options as kube's: parallel lists merged, unmatched nulls ignored.
"""

from __future__ import annotations

from typing import Any

from platform_api.gosort import slice_stable
from platform_api.gotext import sprint
from platform_api.patch.patchmeta import Meta, PatchError
from platform_api.scheme.schemas import Schemas

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ORDER = "$setElementOrder/"
DELETE_FROM_LIST = "$deleteFromPrimitiveList/"

# Error classes, as kube's interpretStrategicMergePatchError sorts them.
BAD_REQUEST, INVALID, INTERNAL = "BadRequest", "Invalid", "Internal"
__all__ = ["BAD_REQUEST", "INTERNAL", "INVALID", "PatchError", "apply", "remove_directives"]


def apply(
    original: dict[str, Any], patch: dict[str, Any], schemas: Schemas, definition: str
) -> dict[str, Any]:
    """Apply ``patch`` to ``original`` (both modified); the result is the patched object."""
    meta = Meta(schemas, {"$ref": definition})
    result = _merge_map(original, patch, meta)
    return result if result is not None else {}


def remove_directives(value: Any) -> tuple[Any, bool]:
    """The value without directive markers; False when the value itself is a directive."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            cleaned, keep = remove_directives(value[key])
            if keep:
                value[key] = cleaned
            else:
                del value[key]
        return value, True
    if isinstance(value, list):
        out = []
        for item in value:
            cleaned, keep = remove_directives(item)
            if keep:
                out.append(cleaned)
        return out, True
    return value, True


def _merge_map(
    original: dict[str, Any] | None, patch: dict[str, Any], meta: Meta
) -> dict[str, Any] | None:
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == "replace":
            del patch[DIRECTIVE]
            return patch
        if directive == "delete":
            return {}
        raise PatchError(f"unknown patch type: {sprint(directive, 's')} in map: {sprint(patch)}")
    if original is None:
        original = {}
    _retain_keys(original, patch)
    _set_element_orders(original, patch, meta)
    for raw_key in list(patch):
        value = patch[raw_key]
        delete_list = raw_key.startswith(DELETE_FROM_LIST)
        key = raw_key[len(DELETE_FROM_LIST) :] if delete_list else raw_key
        if value is None:
            original.pop(key, None)
            continue
        if key not in original:
            if not delete_list:
                _set_cleaned(original, key, value)
            continue
        current = original[key]
        if _kind(current) != _kind(value):
            if not delete_list:
                _set_cleaned(original, key, value)
            continue
        if isinstance(current, dict):
            sub, strategy = meta.for_struct(key)
            original[key] = value if strategy == "replace" else _merge_map(current, value, sub)
        elif isinstance(current, list):
            sub, strategy, merge_key = meta.for_slice(key)
            if strategy == "merge" or delete_list:
                original[key] = _merge_slice(current, value, sub, merge_key, delete_list)
            else:
                original[key] = value
        else:
            _set_cleaned(original, key, value)
    return original


def _set_cleaned(original: dict[str, Any], key: str, value: Any) -> None:
    _discard_nulls(value)
    cleaned, keep = remove_directives(value)
    if keep:
        original[key] = cleaned
    else:
        original.pop(key, None)


def _discard_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for item in value.values():
            _discard_nulls(item)
    elif isinstance(value, list):
        for item in value:
            _discard_nulls(item)


def _kind(value: Any) -> type:
    if isinstance(value, bool):
        return bool
    if isinstance(value, int | float):
        return float  # Go decodes every JSON number to float64
    return type(value)


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if RETAIN_KEYS not in patch:
        return
    keep = patch.pop(RETAIN_KEYS)
    # kube panics (a reset stream) on a list or map in the list; a bad format here instead
    if not isinstance(keep, list) or any(isinstance(k, list | dict) for k in keep):
        raise PatchError("invalid patch format of retainKeys", BAD_REQUEST)
    allowed = set(keep)
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_LIST, SET_ORDER)):
            continue
        if key not in allowed:
            raise PatchError("invalid patch format of retainKeys", BAD_REQUEST)
    for key in [k for k in original if k not in allowed]:
        del original[key]


def _set_element_orders(original: dict[str, Any], patch: dict[str, Any], meta: Meta) -> None:
    """mergePatchIntoOriginal: each ``$setElementOrder/<list>`` merges its list at once
    and orders the result (the list is then not merged again)."""
    for directive in [k for k in patch if k.startswith(SET_ORDER)]:
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise _bad_arg_type(order)
        key = directive[len(SET_ORDER) :]
        found_current, found_changes = key in original, key in patch
        for value, found in ((original.get(key), found_current), (patch.get(key), found_changes)):
            if found and not isinstance(value, list):
                raise _bad_arg_type(value)
        current: list[Any] = original.get(key) or []
        changes: list[Any] = patch.get(key) or []
        sub, strategy, merge_key = meta.for_slice(key)
        _check_order_list(changes, order, merge_key)
        if found_current and not found_changes:
            merged = current
        elif found_changes and not found_current:
            merged, _ = remove_directives(changes)
        elif found_current:
            merged = (
                _merge_slice(current, changes, sub, merge_key, False)
                if strategy == "merge"
                else changes
            )
        else:
            continue
        in_order, server_only = _partition(merged, order, merge_key)
        kind = _element_kind(current, changes)
        if kind is None:
            raise PatchError("no elements in any of the given slices")
        original[key] = _normalize_order(
            in_order, server_only, order, current, merge_key, kind is dict
        )
        patch.pop(key, None)


def _check_order_list(changes: list[Any], order: list[Any], merge_key: str) -> None:
    """validatePatchWithSetOrderList: the patch's items (deletions aside) must appear in
    the order list, in its order; items that are directives are passed over."""
    if not order or not changes:
        return
    if merge_key:
        for item in changes:
            if not isinstance(item, dict):
                raise _bad_arg_type(item, dict)
        changes_kept = [c for c in changes if c.get(DIRECTIVE) != "delete"]
    else:
        changes_kept = changes
    at = seen = 0
    while at < len(changes_kept) and seen < len(order):
        item = changes_kept[at]
        if isinstance(item, dict) and DIRECTIVE in item:
            at += 1  # passed over without moving along the order list
            continue
        if _merge_key_equal(item, order[seen], merge_key):
            at += 1
        seen += 1
    if at < len(changes_kept) and seen >= len(order):
        raise PatchError(
            f"The order in patch list:\n{sprint(changes)}\n doesn't match "
            f"$setElementOrder list:\n{sprint(order)}\n"
        )


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _go_equal(left, right)
    for side in (left, right):
        if not isinstance(side, dict):
            raise _bad_arg_type(side, dict)
    for side in (left, right):
        if merge_key not in side:
            raise _no_merge_key(side, merge_key)
    return _go_equal(left[merge_key], right[merge_key])


def _no_merge_key(item: dict[str, Any], merge_key: str) -> PatchError:
    return PatchError(f"map: {sprint(item)} does not contain declared merge key: {merge_key}")


def _go_equal(left: Any, right: Any) -> bool:
    """Go's ``==`` on decoded JSON values: a bool is never a number."""
    if type(left) is type(right):  # the common case, strings with strings
        return bool(left == right)
    return _kind(left) is _kind(right) and left == right


def _bad_arg_type(value: Any, expected: type = list) -> PatchError:
    """mergepatch's ErrBadArgType for a value of the wrong type (a plain 500)."""
    received = _GO_TYPES.get(type(value), "float64")
    return PatchError(f"expected a {_GO_TYPES[expected]}, but received a {received}")


_GO_TYPES = {
    dict: "map[string]interface {}",
    list: "[]interface {}",
    str: "string",
    bool: "bool",
    int: "int64",
    type(None): "%!s(<nil>)",
}


def _element_kind(original: list[Any], patch: list[Any]) -> type | None:
    """kube's sliceElementType: the first element's type, refused if a list, then every
    other element's checked against it in order (the error prints both lists)."""
    first: type | None = None
    for value in [*original, *patch]:
        kind = _kind(value)
        if first is None:
            first = kind
            if kind is list:
                raise PatchError("lists of lists are not supported", INVALID)
        elif kind is not first:
            raise PatchError(f"list element types are not identical: {sprint([original, patch])}")
    return first


def _merge_slice(
    original: list[Any], patch: list[Any], meta: Meta, merge_key: str, delete_list: bool
) -> list[Any]:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    is_map = kind is dict
    if not is_map:
        if delete_list:
            return [v for v in original if v not in patch]
        merged = _dedupe([*original, *patch])
    else:
        if not merge_key:
            raise PatchError(f"cannot merge lists without merge key for {meta.go_kind}")
        original, patch = _special_elements(original, patch, merge_key)
        merged = _merge_by_key(original, patch, merge_key, meta)
    in_patch, server_only = _partition(merged, patch, merge_key if is_map else "")
    return _normalize_order(
        in_patch, server_only, patch, original, merge_key if is_map else "", is_map
    )


def _dedupe(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if value not in out:
            out.append(value)
    return out


def _find(items: list[Any], merge_key: str, value: Any) -> int:
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise PatchError(f"value for key {i} is not a map")
        if merge_key in item and _go_equal(item[merge_key], value):
            return i
    return -1


def _special_elements(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    plain, replace = [], False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            original = [
                o
                for o in original
                if not (isinstance(o, dict) and o.get(merge_key) == item[merge_key])
            ]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch")
        else:
            raise PatchError(f"unknown patch type: {sprint(directive, 's')} in map: {sprint(item)}")
    if replace:
        return plain, []
    return original, plain


def _merge_by_key(original: list[Any], patch: list[Any], merge_key: str, meta: Meta) -> list[Any]:
    original = list(original)
    for item in patch:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        at = _find(original, merge_key, item[merge_key])
        if at >= 0:
            original[at] = _merge_map(original[at], item, meta)
        else:
            original.append(item)
    return original


def _identity(item: Any, merge_key: str) -> Any:
    return item.get(merge_key) if merge_key and isinstance(item, dict) else item


def _partition(merged: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    """The merged items the list ``by`` names, and the others (kube's partition*)."""
    in_by: list[Any] = []
    others: list[Any] = []
    for item in merged:
        if merge_key:
            if not isinstance(item, dict):
                raise _bad_arg_type(item, dict)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            named = _find(by, merge_key, item[merge_key]) >= 0
        else:
            named = any(_go_equal(item, wanted) for wanted in by)
        (in_by if named else others).append(item)
    return in_by, others


def _normalize_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    is_map: bool,
) -> list[Any]:
    """normalizeElementOrder: each part sorted by its order list, then merged by the server's."""
    key = merge_key if is_map else ""

    def position(order: list[Any], item: Any) -> int:
        ident = _identity(item, key)
        for i, candidate in enumerate(order):
            if _go_equal(_identity(candidate, key), ident):
                return i
        return -1

    def sort(items: list[Any], order: list[Any]) -> list[Any]:
        if is_map:  # validateMergeKeyInLists: every item of both lists a map with the key
            for item in [*items, *order]:
                if not isinstance(item, dict):
                    raise _bad_arg_type(item, dict)
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
        deletes = [
            i for i in items if is_map and isinstance(i, dict) and i.get(DIRECTIVE) == "delete"
        ]
        rest = [
            i
            for i in items
            if not (is_map and isinstance(i, dict) and i.get(DIRECTIVE) == "delete")
        ]

        # kube's comparison: an item not in the order is "less" either way round
        placed = [(position(order, item), item) for item in rest]
        slice_stable(placed, lambda a, b: a[0] < b[0] if a[0] >= 0 and b[0] >= 0 else True)
        return [item for _, item in placed] + deletes

    right = sort(patch_items, patch_order)  # the patch's first, as kube sorts them
    left = sort(server_only, server_order)
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
        elif i >= len(left):
            out.append(right[j])
            j += 1
        else:
            li, ri = position(server_order, left[i]), position(server_order, right[j])
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out
