"""An apply's prune when the applier's last apply or the owners are of other versions:
structured-merge-diff's ``Updater.prune``.

An applier's fields it no longer applies go, unless someone still owns them.  Its last
applied set is in the version it applied then, and each owner's fields in its own, so
kube prunes in the last applied version (the merged object converted into it), adds
back what the owners of each version own there (the objects converted into it), keeps
whatever was not in the last applied set, and converts the result back into the
request's version.  Every step converts whole objects, by the kind's ``Views`` (a
CRD's webhook call is awaited as any other: ``versions.Pending``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from platform_api.fieldmanager import walk
from platform_api.fieldmanager.fieldpath import FieldSet
from platform_api.fieldmanager.versions import ConversionFailed, VersionView, Views

Obj = dict[str, Any]


def prune(
    views: Views,
    merged: Obj,
    last: tuple[str, FieldSet],
    owners: Iterable[tuple[str, FieldSet]],
) -> Obj:
    """``merged`` (in the request's version) without what the applier's ``last`` apply
    (its version and fields) set and nobody in ``owners`` (each entry's version and
    fields, the applier's new one too) owns, step for step as kube prunes; a map the
    removal empties stays empty (``spec: {}``, as kube leaves it).  Raises
    ConversionFailed in kube's words."""
    version, released = last
    at_last = views.view(version)
    if not isinstance(at_last, VersionView):
        return merged  # a version the kind lacks: kube prunes nothing
    merged_last = _into(
        views, version, merged, "failed to convert merged object to last applied version"
    )
    applied = walk.ensure_named(at_last.typed, at_last.node, released)
    pruned = walk.remove_items(at_last.typed, at_last.node, merged_last, applied)
    owned = _by_version(views, owners)
    order = ([version] if version in owned else []) + sorted(set(owned) - {version})
    for other in order:
        view = views.view(other)
        assert isinstance(view, VersionView)  # (_by_version keeps only those)
        merged_other = _into(views, other, merged, f"{_OWNED}merged object at version {other}")
        pruned_other = _into(
            views, other, pruned or {}, f"{_OWNED}pruned object at version {other}"
        )
        has = _fields(view, merged_other)
        keep = _fields(view, pruned_other) | walk.ensure_named(view.typed, view.node, owned[other])
        pruned = walk.remove_items(view.typed, view.node, merged_other, has - keep)
    pruned_last = _into(views, version, pruned or {}, _DANGLING)
    gone = _fields(at_last, merged_last) - _fields(at_last, pruned_last)
    kept = walk.remove_items(at_last.typed, at_last.node, merged_last, gone & applied)
    back = _into(views, views.own_version, kept or {}, "")
    return _emptied(back, merged)


def _by_version(views: Views, owners: Iterable[tuple[str, FieldSet]]) -> dict[str, FieldSet]:
    """The owners' fields united by version; a version compared as the request's is the
    request's, and one the kind lacks owns nothing."""
    out: dict[str, FieldSet] = {}
    for version, fields in owners:
        view = views.view(version)
        if not isinstance(view, VersionView):
            continue
        key = views.own_version if view is views.own else version
        out.setdefault(key, set()).update(fields)
    return out


def _fields(view: VersionView, obj: Obj) -> FieldSet:
    """What ``obj`` sets, with the struct fields above (``EnsureNamedFieldsAreMembers``)."""
    return walk.ensure_named(view.typed, view.node, walk.to_field_set(view.typed, view.node, obj))


def _emptied(value: Any, before: Any) -> Any:
    """The nulls the removal left where ``before`` held something, as kube's object
    ends up holding them: a map emptied by the removal is an empty map, a list emptied
    goes (a field removed whole stays removed)."""
    if not isinstance(value, dict):
        return value
    old = before if isinstance(before, dict) else {}
    out: Obj = {}
    for key, child in value.items():
        was = old.get(key)
        if child is None and was is not None:
            if isinstance(was, dict):
                out[key] = {}
            continue
        out[key] = _emptied(child, was)
    return out


# the words of the step a conversion failed in (structured-merge-diff's Updater.prune);
# the last step, back into the request's version, adds none
_OWNED = "failed add back owned items: failed to convert "
_DANGLING = (
    "failed add back dangling items: failed to convert pruned object to last applied version"
)


def _into(views: Views, version: str, obj: Obj, step: str) -> Obj:
    try:
        return views.to(version, obj)
    except ValueError as e:
        said = f"{step}: {e}" if step else str(e)
        raise ConversionFailed(f"failed to prune fields: {said}") from e
