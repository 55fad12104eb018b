"""Field ownership: the managedFields rules of Update and Apply.

An Update (create, PUT, or a patch that is not apply) takes the fields it changes
from every other manager and never conflicts.  An Apply owns exactly the fields of
its configuration: values it changes that another manager owns are conflicts unless
forced, equal values are shared, and fields it applied before but no longer does
are removed when nobody else owns them.  Entries (entries.py) are keyed as kube keys them
(manager, operation, subresource, and the apiVersion of Updates), so Updates from
one manager merge into one entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from platform_api import errors
from platform_api.fieldmanager import fit, lastapplied, versionprune, walk
from platform_api.fieldmanager.entries import (
    APPLY,
    UPDATE,
    Entry,
    Managers,
    conflict_error,
    decode,
    store,
)
from platform_api.fieldmanager.fieldpath import FieldSet
from platform_api.fieldmanager.reconcile import reconcile
from platform_api.fieldmanager.typed import Typed
from platform_api.fieldmanager.versions import (
    ConversionFailed,
    Pending,
    Versions,
    VersionView,
    Views,
)
from platform_api.scheme.schemas import Node, Schemas
from platform_api.scheme.types import ResourceType

Obj = dict[str, Any]
BEFORE_FIRST_APPLY = "before-first-apply"

# System metadata is never owned (kube's stripMeta).
_STRIPPED: FieldSet = {("f:apiVersion",), ("f:kind",), ("f:metadata",)} | {
    ("f:metadata", "f:" + name)
    for name in (
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    )
}


@dataclass(frozen=True)
class Who:
    """The writer of a request: its manager name, the request's apiVersion, sub-resource."""

    manager: str
    api_version: str
    subresource: str = ""


# The manager of the API server's own writes (its default objects, its Endpoints, its
# identity Lease): kube's loopback client is named so.
APISERVER = "kube-apiserver"


def update_tracker(
    manager: FieldManager, who: Who, now: Callable[[], str]
) -> Callable[[Obj | None, Obj], None]:
    """Records each write as an Update by ``who`` in the new object's managedFields."""

    def track(live: Obj | None, new: Obj) -> None:
        manager.update(live, new, who, now())

    return track


def is_reset(requested: Any, unstructured: bool) -> bool:
    """kube's ``isResetManagedFields``: a write sending ``managedFields: [{}]`` strips
    them all, and the object's later Updates are not tracked (until an Apply).  So does
    ``[]`` for a built-in kind (decoded into a Go slice that is empty but not nil); a
    custom resource's accessor reads an empty list as none sent."""
    return requested == [{}] or (requested == [] and not unstructured)


_SCHEMALESS: Node = {}


def for_resource(
    schemas: Schemas, rt: ResourceType, current: FieldManager | None = None
) -> FieldManager:
    """The ownership tracker of a resource type: its schema, whether it has a status.
    ``current`` is kept while both are still ``rt``'s; a CRD's change gives new ones,
    and its objects are tracked by the new schema from then on, as in kube."""
    has_status = any(sub.name == "status" for sub in rt.subresources)
    node = schemas.get(rt.definition) if rt.definition else _SCHEMALESS
    if current is not None and current.node is node and current.has_status == has_status:
        return current
    return FieldManager(Typed(schemas, unstructured=rt.custom), node, has_status)


class FieldManager:
    """Tracks ownership for one resource type (its schema and ignored fields)."""

    def __init__(
        self, typed: Typed, node: Node, has_status: bool, versions: Versions | None = None
    ) -> None:
        self.typed = typed
        self.node = node
        self.has_status = has_status
        # The kind's other versions, where managers of them are compared (versions.py);
        # without them every entry is read in the request's version.
        self.versions = versions
        # What of the metadata a /status write keeps from the old object (its kind's
        # reset fields), the rest being the writer's; None: it keeps all the metadata.
        self.status_keeps_metadata: frozenset[str] | None = None
        # Reset fields of kinds whose strategies reset more, by sub-resource ("" for
        # the main resource): path prefixes (``("f:spec",)``) no writer there owns.
        self.reset: dict[str, tuple[tuple[str, ...], ...]] = {}

    def _owned(self, paths: FieldSet, who: Who) -> FieldSet:
        """Drop what the writer cannot own: system metadata, and what the request cannot
        change (``_changeable``)."""
        return self._changeable(paths - _STRIPPED, who)

    def _changeable(self, paths: FieldSet, who: Who) -> FieldSet:
        """What the request can change: status through the status sub-resource, all but
        status through the main resource.  The rest is reset to the live object (kube's
        reset fields), so a change there takes no field from its owner."""
        reset = self.reset.get(who.subresource)
        if reset:
            paths = {p for p in paths if not any(p[: len(r)] == r for r in reset)}
        if who.subresource == "status":
            kept = self.status_keeps_metadata
            return {
                p
                for p in paths
                if p[0] == "f:status"
                or (kept is not None and p[0] == "f:metadata" and p[1:2] and p[1][2:] not in kept)
            }
        if self.has_status and not who.subresource:
            return {p for p in paths if p[0] != "f:status"}
        return paths

    def _live_managers(self, live: Obj | None) -> Managers:
        if live is None:
            return {}
        try:
            return decode(live.get("metadata", {}).get("managedFields") or [])
        except ValueError:
            return {}

    def update(self, live: Obj | None, new: Obj, who: Who, now: str) -> None:
        """Record an Update: ``new`` gets its ``managedFields``.  A conversion still
        pending (versions.Pending) leaves ``new`` as it came, for the step's next run."""
        meta = new.setdefault("metadata", {})
        requested = meta.pop("managedFields", None)
        try:
            self._update(live, new, requested, who, now)
        except Pending:
            if requested is not None:
                meta["managedFields"] = requested
            raise

    def _update(self, live: Obj | None, new: Obj, requested: Any, who: Who, now: str) -> None:
        managers: Managers | None = None
        if who.subresource:
            pass  # a sub-resource cannot set them: the live object's hold
        elif is_reset(requested, self.typed.unstructured):
            managers = {}
        elif requested:
            try:
                managers = decode(requested)
            except ValueError:
                managers = None
        sent = managers is not None
        if managers is None:
            managers = self._live_managers(live)
        if not managers and live is not None:
            return  # kube's skipNonAppliedManager: an object without them stays so
        before = _without_managed_fields(live) if live is not None else {}
        views = self._views(who, before)
        try:
            _reconcile(managers, views, sent or self.typed.unstructured)
            diff = walk.compare(self.typed, self.node, before, new)
            wanted = {e.api_version for e in managers.values()}
            seen = views.comparisons(wanted, diff, new)
        except ConversionFailed:
            return  # kube's UpdateNoErrors: the object is left without managedFields
        for entry in managers.values():
            theirs = seen[entry.api_version]
            assert theirs is not None  # (_reconcile dropped versions the kind lacks)
            entry.fields -= self._changeable(theirs.modified | theirs.added | theirs.removed, who)
        mine = self._owned(diff.modified | diff.added, who)
        if mine:
            entry = Entry(who.manager, UPDATE, who.api_version, who.subresource)
            entry = managers.setdefault(entry.key, entry)
            entry.fields |= mine
            # kube's scale handler rebuilds a scale entry without its time.
            entry.time = None if who.subresource == "scale" else now
        store(new["metadata"], managers)

    def _views(self, who: Who, before: Obj) -> Views:
        """The write's view of the managers' versions (versions.Views)."""
        own = VersionView(self.typed, self.node, _same)
        return Views(self.versions, who.api_version, own, before)

    def _pruned(self, views: Views, merged: Obj, previous: Entry, managers: Managers) -> Obj:
        """What the applier applied last time and no longer does, removed unless owned:
        in one version, or across the versions of the entries (versionprune.py)."""
        versions = {previous.api_version} | {e.api_version for e in managers.values()}
        if all(views.view(version) is views.own for version in versions):
            owned: FieldSet = set().union(*(e.fields for e in managers.values()))
            return walk.prune(self.typed, self.node, merged, previous.fields, owned)
        last = (previous.api_version, previous.fields)
        owners = [(e.api_version, e.fields) for e in managers.values()]
        try:
            return versionprune.prune(views, merged, last, owners)
        except ConversionFailed as e:
            raise errors.field_manager_failed(str(e)) from e

    def misfits(self, config: Obj) -> list[str]:
        """Where an applied configuration does not fit the schema (fit.problems)."""
        return fit.problems(self.typed, self.node, config)

    def apply(self, live: Obj | None, config: Obj, who: Who, force: bool, now: str) -> Obj:
        """The object after applying ``config``; raises a 409 on ownership conflicts."""
        managers = self._live_managers(live)
        before = _without_managed_fields(live) if live is not None else {}
        views = self._views(who, before)
        try:
            _reconcile(managers, views, self.typed.unstructured)
        except ConversionFailed as e:
            raise errors.field_manager_failed(str(e)) from e
        if live is not None and not live.get("metadata", {}).get("managedFields"):
            first = Entry(BEFORE_FIRST_APPLY, UPDATE, who.api_version, who.subresource, now)
            made = walk.compare(self.typed, self.node, {}, before)  # kube's Update from empty
            first.fields = self._owned(made.modified | made.added, who)
            if first.fields:
                managers[first.key] = first
        kubectl = who.manager == lastapplied.KUBECTL and lastapplied.present(live)
        synced = lastapplied.annotation_for(config) if kubectl else ""  # before merging
        mine = Entry(who.manager, APPLY, who.api_version, who.subresource)
        previous = managers.get(mine.key)
        mine.time = previous.time if previous else None
        mine.fields = self._owned(walk.to_field_set(self.typed, self.node, config), who)
        managers[mine.key] = mine
        merged = walk.merge(self.typed, self.node, before, config)
        if previous is not None and previous.fields:
            merged = self._pruned(views, merged, previous, managers)
        diff = walk.compare(self.typed, self.node, before, merged)
        others = [e for e in managers.values() if e.key != mine.key]
        try:
            seen = views.comparisons({e.api_version for e in others}, diff, merged)
        except ConversionFailed as e:
            raise errors.field_manager_failed(str(e)) from e
        changes = {v: _changes(c, self._changeable, who) for v, c in seen.items() if c is not None}
        conflicts = [(e, p) for e in others for p in e.fields & changes[e.api_version][0]]
        if conflicts and not force and kubectl:
            allowed = lastapplied.allowed_conflicts(self.typed, self.node, live, who.api_version)
            conflicts = [(e, p) for e, p in conflicts if p not in allowed]
        if conflicts and not force:
            raise conflict_error(conflicts)
        for entry in others:
            entry.fields -= changes[entry.api_version][1]
        go_typed = not self.typed.unstructured
        if go_typed:
            merged = walk.without_nulls(merged)
        # kube's no-op apply stamps no time, even on a new entry; a built-in's live value
        # is as Go holds it too, without the nulls its JSON shows (status.currentMetrics)
        if merged != before and not (go_typed and merged == walk.without_nulls(before)):
            mine.time = now
        store(merged.setdefault("metadata", {}), managers)
        if synced:
            lastapplied.keep_in_step(merged, synced)
        return merged


def _same(obj: Obj) -> Obj:
    return obj


def _reconcile(managers: Managers, views: Views, schema_changes: bool) -> None:
    """Each entry read in its version's schema, as kube reads them before a write: the
    live object converted into it (ConversionFailed, or Pending, when it will not
    convert yet), a version the kind lacks dropped, and fields under what that schema
    now makes atomic cut back to it (reconcile.py).  That last step is needed only
    where the schema may have changed since the entry was written (a CRD's), or for
    entries a request sends: a built-in kind's stored entries were cut when written."""
    for key, entry in list(managers.items()):
        view = views.view(entry.api_version)
        if not isinstance(view, VersionView):
            del managers[key]
            continue
        views.old(entry.api_version, view)
        if not schema_changes:
            continue
        changed = reconcile(view.typed, view.node, entry.fields)
        if changed is not None:
            entry.fields = changed


def _changes(
    diff: walk.Comparison, changeable: Callable[[FieldSet, Who], FieldSet], who: Who
) -> tuple[FieldSet, FieldSet]:
    """What an apply changes of a version's fields (conflicts with their owners), and
    what it takes from them (those and what it removes)."""
    changed = changeable(diff.modified | diff.added, who)
    return changed, changed | changeable(diff.removed, who)


def _without_managed_fields(obj: Obj) -> Obj:
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    meta.pop("managedFields", None)
    out["metadata"] = meta
    return out
