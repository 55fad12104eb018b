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

from platform_api.gotext import sprint
from platform_api.patch.elementorder import (
    DIRECTIVE,
    bad_arg_type,
    check_order_list,
    find,
    go_kind,
    no_merge_key,
    normalize_order,
    partition,
)
from platform_api.patch.patchmeta import Meta, PatchError
from platform_api.scheme.schemas import Schemas

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
        if go_kind(current) != go_kind(value):
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
            raise bad_arg_type(order)
        key = directive[len(SET_ORDER) :]
        found_current, found_changes = key in original, key in patch
        for value, found in ((original.get(key), found_current), (patch.get(key), found_changes)):
            if found and not isinstance(value, list):
                raise bad_arg_type(value)
        current: list[Any] = original.get(key) or []
        changes: list[Any] = patch.get(key) or []
        sub, strategy, merge_key = meta.for_slice(key)
        check_order_list(changes, order, merge_key)
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
        in_order, server_only = partition(merged, order, merge_key)
        kind = _element_kind(current, changes)
        if kind is None:
            raise PatchError("no elements in any of the given slices")
        original[key] = normalize_order(
            in_order, server_only, order, current, merge_key, kind is dict
        )
        patch.pop(key, None)


def _element_kind(original: list[Any], patch: list[Any]) -> type | None:
    """kube's sliceElementType: the first element's type, refused if a list, then every
    other element's checked against it in order (the error prints both lists)."""
    first: type | None = None
    for value in [*original, *patch]:
        kind = go_kind(value)
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
    in_patch, server_only = partition(merged, patch, merge_key if is_map else "")
    return normalize_order(
        in_patch, server_only, patch, original, merge_key if is_map else "", is_map
    )


def _dedupe(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if value not in out:
            out.append(value)
    return out


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
                raise no_merge_key(item, merge_key)
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
            raise no_merge_key(item, merge_key)
        at = find(original, merge_key, item[merge_key])
        if at >= 0:
            original[at] = _merge_map(original[at], item, meta)
        else:
            original.append(item)
    return original
