"""A change as each manager's version sees it: structured-merge-diff's ``Updater.update``.

A managedFields entry records paths in the schema of its own apiVersion, and versions
of one kind need not agree (a list that is a set in v1 may be atomic in v2, an HPA's
v1 target percentage is a v2 metric).  kube therefore converts the live and the new
object into each other manager's version and compares them there: an entry loses what
changed in its own terms, and an apply conflicts with it where it does.  A conversion
that fails (for a custom resource, an object its version's schema does not declare,
``read_as``) fails the write's ownership (``ConversionFailed``); a version the kind
does not have at all is ``MISSING``, and kube drops that manager's entry.  The views
come from the REST handlers (``endpoints/fieldversions.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from platform_api.fieldmanager import fit, walk
from platform_api.fieldmanager.typed import Typed
from platform_api.scheme.schemas import Node

Obj = dict[str, Any]


class ConversionFailed(Exception):
    """An object would not convert into a manager's version (kube's 'failed to convert
    old object' / 'new object' errors of the field manager)."""


@dataclass(frozen=True)
class VersionView:
    """Another version of the kind: its schema and the conversion into it, which raises
    ValueError when the object will not convert (or fit: ``read_as``)."""

    typed: Typed
    node: Node
    convert: Callable[[Obj], Obj]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
View = VersionView | _Missing | None  # None: compare in the request's version


class Versions(Protocol):
    """The kind's other versions, by apiVersion (the REST handlers provide them)."""

    def __call__(self, api_version: str) -> View: ...


def read_as(typed: Typed, node: Node, obj: Obj) -> Obj:
    """``obj`` read as a version's schema declares it (SMD's ObjectToTyped): ValueError
    naming what does not fit."""
    found = fit.problems(typed, node, obj)
    if found:
        raise ValueError(fit.message(found))
    return obj


def _converted(view: VersionView, obj: Obj, which: str) -> Obj:
    try:
        return view.convert(obj)
    except ValueError as e:
        raise ConversionFailed(f"failed to convert {which} object: {e}") from e


def comparisons(
    versions: Versions | None,
    api_versions: set[str],
    own: tuple[str, walk.Comparison],
    before: Obj,
    after: Obj,
) -> dict[str, walk.Comparison | None]:
    """The comparison of ``before`` and ``after`` in each of ``api_versions``: ``own`` is
    the request's version and its comparison; None marks a version the kind lacks.
    Raises ConversionFailed."""
    out: dict[str, walk.Comparison | None] = {own[0]: own[1]}
    for api_version in sorted(api_versions - {own[0]}):
        view = versions(api_version) if versions is not None else None
        if view is None:
            out[api_version] = own[1]
        elif isinstance(view, VersionView):
            old = _converted(view, before, "old") if before else {}
            new = _converted(view, after, "new")
            out[api_version] = walk.compare(view.typed, view.node, old, new)
        else:
            out[api_version] = None
    return out
