"""JSON Merge Patch (RFC 7386)."""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply ``patch`` to ``target`` (modified in place where it is a dict)."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = merge_patch(target.get(key), value)
    return target


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
