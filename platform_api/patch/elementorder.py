"""The order strategic merge patch gives merged lists, and Go's view of JSON values.

kube partitions a merged list into the items the patch (or its ``$setElementOrder``
list) names and the server's others, sorts each part by its order with Go's
``sort.SliceStable`` and a comparison that calls an item of unknown position "less"
either way round, then merges the two by the server's order.  Items are compared with
Go's ``==`` on decoded JSON (a bool is never a number), and the refusals on the way are
mergepatch's errors in their words.
"""

from __future__ import annotations

from typing import Any

from platform_api.gosort import slice_stable
from platform_api.gotext import sprint
from platform_api.patch.patchmeta import PatchError

DIRECTIVE = "$patch"


def go_kind(value: Any) -> type:
    if isinstance(value, bool):
        return bool
    if isinstance(value, int | float):
        return float  # Go decodes every JSON number to float64
    return type(value)


def check_order_list(changes: list[Any], order: list[Any], merge_key: str) -> None:
    """validatePatchWithSetOrderList: the patch's items (deletions aside) must appear in
    the order list, in its order; items that are directives are passed over."""
    if not order or not changes:
        return
    if merge_key:
        for item in changes:
            if not isinstance(item, dict):
                raise bad_arg_type(item, dict)
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
        return go_equal(left, right)
    for side in (left, right):
        if not isinstance(side, dict):
            raise bad_arg_type(side, dict)
    for side in (left, right):
        if merge_key not in side:
            raise no_merge_key(side, merge_key)
    return go_equal(left[merge_key], right[merge_key])


def keyed(item: Any, merge_key: str) -> dict[str, Any]:
    """``item`` as a keyed list's item: a map that holds the merge key."""
    if not isinstance(item, dict):
        raise bad_arg_type(item, dict)
    if merge_key not in item:
        raise no_merge_key(item, merge_key)
    return item


def no_merge_key(item: dict[str, Any], merge_key: str) -> PatchError:
    return PatchError(f"map: {sprint(item)} does not contain declared merge key: {merge_key}")


def go_equal(left: Any, right: Any) -> bool:
    """Go's ``==`` on decoded JSON values: a bool is never a number."""
    if type(left) is type(right):  # the common case, strings with strings
        return bool(left == right)
    return go_kind(left) is go_kind(right) and left == right


def bad_arg_type(value: Any, expected: type = list) -> PatchError:
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


def find(items: list[Any], merge_key: str, value: Any) -> int:
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise PatchError(f"value for key {i} is not a map")
        if merge_key in item and go_equal(item[merge_key], value):
            return i
    return -1


def _identity(item: Any, merge_key: str) -> Any:
    return item.get(merge_key) if merge_key and isinstance(item, dict) else item


def partition(merged: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    """The merged items the list ``by`` names, and the others (kube's partition*)."""
    in_by: list[Any] = []
    others: list[Any] = []
    for item in merged:
        if merge_key:
            named = find(by, merge_key, keyed(item, merge_key)[merge_key]) >= 0
        else:
            named = any(go_equal(item, wanted) for wanted in by)
        (in_by if named else others).append(item)
    return in_by, others


def normalize_order(
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
            if go_equal(_identity(candidate, key), ident):
                return i
        return -1

    def sort(items: list[Any], order: list[Any]) -> list[Any]:
        if is_map:  # validateMergeKeyInLists: every item of both lists a map with the key
            for item in [*items, *order]:
                keyed(item, merge_key)
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
