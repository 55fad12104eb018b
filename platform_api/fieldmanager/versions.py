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

A CRD converted by a webhook converts by a call out, which the synchronous ownership
step cannot make: its conversion raises ``Pending``, the store awaits the call and runs
the step again (``settled``), which finds the answer made (``awaited``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import orjson

from platform_api.errors import StatusError, internal_error
from platform_api.fieldmanager import fit, walk
from platform_api.fieldmanager.typed import Typed
from platform_api.scheme.schemas import Node

Obj = dict[str, Any]
T = TypeVar("T")


class ConversionFailed(Exception):
    """An object would not convert into a manager's version (kube's 'failed to convert
    old object' / 'new object' errors of the field manager)."""


@dataclass(frozen=True)
class VersionView:
    """Another version of the kind: its schema and the conversion into it of an object
    of any version (by its ``apiVersion``), which raises ValueError when the object
    will not convert (or fit: ``read_as``)."""

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


class Views:
    """One write's view of the kind's versions: each manager's version (its schema and
    conversion), and the live object converted into it once.  kube converts the live
    object into every entry's version before anything else (structured-merge-diff's
    ``reconcileManagedFieldsWithSchemaChanges``), so a failure there is the converter's
    own error (``ConversionFailed`` without a prefix), later ones name the new object."""

    def __init__(self, versions: Versions | None, own: str, view: VersionView, before: Obj):
        self.versions, self.own_version, self.own, self.before = versions, own, view, before
        self._views: dict[str, VersionView | _Missing] = {}
        self._old: dict[str, Obj] = {}

    def view(self, api_version: str) -> VersionView | _Missing:
        """The version's view; the request's own where none is known (compare there)."""
        if api_version == self.own_version:
            return self.own
        found = self._views.get(api_version)
        if found is None:
            known = self.versions(api_version) if self.versions is not None else None
            found = self._views[api_version] = self.own if known is None else known
        return found

    def to(self, api_version: str, obj: Obj) -> Obj:
        """``obj``, of any version of the kind, in ``api_version`` (the request's own
        too); raises ValueError, or Pending."""
        if obj.get("apiVersion") == api_version:
            return obj
        view = self.versions(api_version) if self.versions is not None else None
        if isinstance(view, VersionView):
            return view.convert(obj)
        return {**obj, "apiVersion": api_version}

    def old(self, api_version: str, view: VersionView) -> Obj:
        """The live object in ``api_version`` (an empty one converts to itself, as kube's
        webhook converter passes it by).  Raises ConversionFailed, or Pending."""
        if view is self.own or not self.before:
            return self.before
        found = self._old.get(api_version)
        if found is None:
            try:
                found = self._old[api_version] = view.convert(self.before)
            except ValueError as e:
                raise ConversionFailed(str(e)) from e
        return found

    def comparisons(
        self, api_versions: set[str], own: walk.Comparison, after: Obj
    ) -> dict[str, walk.Comparison | None]:
        """The change to ``after`` in each of ``api_versions``: ``own`` is the request
        version's; None marks a version the kind lacks.  Raises ConversionFailed."""
        out: dict[str, walk.Comparison | None] = {self.own_version: own}
        for api_version in sorted(api_versions - {self.own_version}):
            view = self.view(api_version)
            if view is self.own:
                out[api_version] = own
            elif isinstance(view, VersionView):
                old = self.old(api_version, view)
                new = _converted(view, after, "new")
                out[api_version] = walk.compare(view.typed, view.node, old, new)
            else:
                out[api_version] = None
        return out


def _converted(view: VersionView, obj: Obj, which: str) -> Obj:
    try:
        return view.convert(obj)
    except ValueError as e:
        raise ConversionFailed(f"failed to convert {which} object: {e}") from e


# -- conversions made by a call out ---------------------------------------------------


class Pending(Exception):
    """A conversion the ownership step cannot make on its own (a CRD's conversion
    webhook): ``settled`` awaits ``fetch``, which makes it, and runs the step again,
    which then finds it made (``awaited``)."""

    def __init__(self, fetch: Callable[[], Awaitable[None]]) -> None:
        super().__init__("a conversion is pending")
        self.fetch = fetch


# One settled step's conversions: (apiVersion, object's JSON) -> the object converted,
# or the converter's error text.
_MADE: ContextVar[dict[tuple[str, bytes], Obj | str] | None] = ContextVar(
    "fieldmanager_conversions", default=None
)
# Each round makes one more conversion: the live and the new object into each entry's
# version, and an apply's prune a few more per version (twenty-five for six versions).
MAX_ROUNDS = 64


async def settled(step: Callable[[], Awaitable[T]]) -> T:
    """``step``'s result, run again after each conversion it waits for.  The step must
    leave its inputs as it found them when it raises Pending (the store's steps get a
    fresh copy of the object, or restore what they took)."""
    token = _MADE.set({})
    try:
        for _ in range(MAX_ROUNDS):
            try:
                return await step()
            except Pending as pending:
                await pending.fetch()
        raise internal_error("the field manager kept asking for conversions")
    finally:
        _MADE.reset(token)


def awaited(api_version: str, obj: Obj, make: Callable[[], Awaitable[Obj]]) -> Obj:
    """What ``make`` converts ``obj`` into, once a ``settled`` step has awaited it:
    raises Pending until then, and ValueError with the converter's error (a StatusError's
    message) if it failed."""
    made = _MADE.get()
    if made is None:
        raise RuntimeError("a conversion by call out outside a settled step")
    key = (api_version, orjson.dumps(obj, option=orjson.OPT_SORT_KEYS))
    found = made.get(key)
    if found is None:

        async def fetch() -> None:
            try:
                made[key] = await make()
            except StatusError as e:
                made[key] = e.message

        raise Pending(fetch)
    if isinstance(found, str):
        raise ValueError(found)
    return found
