"""JSON Merge Patch (RFC 7386)."""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply ``patch`` to ``target`` (modified in place where it is a dict).

    A list replaces what was there as kube's json-patch library writes it: its objects'
    null fields pruned (``pruneNulls``), except where it replaces an object, which the
    library hands back as the patch had it."""
    if not isinstance(patch, dict):
        return patch if isinstance(target, dict) else _pruned(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = merge_patch(target.get(key), value)
    return target


def _pruned(value: Any) -> Any:
    """evanphx's pruneNulls: null fields out of every object, null list items kept."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def as_written(merged: Any, patch: Any) -> Any:
    """``merged`` with its keys in the order kube's json-patch library writes a merge's
    result, which a refusal quotes: every object the patch reached or added is written
    as a Go map (sorted keys), the rest as it was stored (untouched values stay raw)."""
    if not isinstance(patch, dict) or not isinstance(merged, dict):
        return _go_maps(merged)
    return {k: as_written(merged[k], patch[k]) if k in patch else merged[k] for k in sorted(merged)}


def _go_maps(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _go_maps(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_go_maps(v) for v in value]
    return value
