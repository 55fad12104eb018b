"""Field ownership: the managedFields rules of Update and Apply.

An Update (create, PUT, or a patch that is not apply) takes the fields it changes
from every other manager and never conflicts.  An Apply owns exactly the fields of
its configuration: values it changes that another manager owns are conflicts unless
forced, equal values are shared, and fields it applied before but no longer does
are removed when nobody else owns them.  Entries are keyed as kube keys them
(manager, operation, subresource, and the apiVersion of Updates), so Updates from
one manager merge into one entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from platform_api import errors
from platform_api.fieldmanager import fit, lastapplied, versionprune, walk
from platform_api.fieldmanager.fieldpath import (
    FieldSet,
    from_fields_v1,
    iteration_order,
    path_string,
    to_fields_v1,
)
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
APPLY, UPDATE = "Apply", "Update"
MAX_UPDATE_ENTRIES = 10
ANCIENT = "ancient-changes"
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


@dataclass
class Entry:
    manager: str
    operation: str
    api_version: str
    subresource: str = ""
    time: str | None = None
    fields: FieldSet = field(default_factory=set)

    @property
    def key(self) -> tuple[str, str, str, str]:
        version = self.api_version if self.operation == UPDATE else ""
        return (self.manager, self.operation, version, self.subresource)

    def printed(self) -> str:
        """The manager as conflict messages name it (kube's printManager)."""
        text = f'"{self.manager}"'
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def encode(self) -> Obj:
        out: Obj = {"manager": self.manager, "operation": self.operation}
        out["apiVersion"] = self.api_version
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = to_fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


Managers = dict[tuple[str, str, str, str], Entry]


def decode(entries: Any) -> Managers:
    """The managers of stored ``managedFields``; ValueError when they do not decode."""
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    managers: Managers = {}
    for raw in entries:  # kube's DecodeManagedFields: any bad entry fails them all
        if not isinstance(raw, dict) or raw.get("fieldsType") != "FieldsV1":
            raise ValueError("unsupported managedFields entry")
        if raw.get("operation") not in (APPLY, UPDATE) or not raw.get("apiVersion"):
            raise ValueError("operation must be Apply or Update, apiVersion not empty")
        entry = Entry(
            manager=str(raw.get("manager", "")),
            operation=str(raw.get("operation", "")),
            api_version=str(raw.get("apiVersion", "")),
            subresource=str(raw.get("subresource", "")),
            time=raw.get("time"),
            fields=from_fields_v1(raw.get("fieldsV1") or {}),
        )
        managers[entry.key] = entry
    return managers


def encode(managers: Managers) -> list[Obj]:
    """Entries in kube's order: Apply before Update, then by time, manager, version."""
    ordered = sorted(
        managers.values(),
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    return [entry.encode() for entry in ordered]


def cap_updates(managers: Managers) -> None:
    """Keep at most ten Update entries: the oldest merge into ``ancient-changes``."""
    updaters = sorted(
        (e for e in managers.values() if e.operation == UPDATE),
        key=lambda e: (e.time or "", e.manager),
    )
    count = len(updaters)
    buckets: dict[str, Entry] = {}
    for entry in updaters:
        if count <= MAX_UPDATE_ENTRIES:
            break
        bucket = buckets.get(entry.api_version)
        del managers[entry.key]
        if bucket is None:
            bucket = Entry(ANCIENT, UPDATE, entry.api_version, time=entry.time)
            bucket.fields = set(entry.fields)
            existing = managers.pop(bucket.key, None)
            if existing is not None:
                bucket.fields |= existing.fields
                count -= 1
            buckets[entry.api_version] = bucket
        else:
            bucket.fields |= entry.fields
            bucket.time = entry.time
            count -= 1
        managers[bucket.key] = bucket


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

    def _owned(self, paths: FieldSet, who: Who) -> FieldSet:
        """Drop what the writer cannot own: system metadata, and what the request cannot
        change (``_changeable``)."""
        return self._changeable(paths - _STRIPPED, who)

    def _changeable(self, paths: FieldSet, who: Who) -> FieldSet:
        """What the request can change: status through the status sub-resource, all but
        status through the main resource.  The rest is reset to the live object (kube's
        reset fields), so a change there takes no field from its owner."""
        if who.subresource == "status":
            return {p for p in paths if p[0] == "f:status"}
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
        _store(new["metadata"], managers)

    def _views(self, who: Who, before: Obj) -> Views:
        """The write's view of the managers' versions (versions.Views)."""
        own = VersionView(self.typed, self.node, _same)
        return Views(self.versions, who.api_version, own, before)

    def _pruned(
        self, views: Views, merged: Obj, previous: Entry, managers: Managers, config: Obj
    ) -> Obj:
        """What the applier applied last time and no longer does, removed unless owned:
        in one version, or across the versions of the entries (versionprune.py), where
        an empty map the configuration applies (``spec: {}``) stays, as in kube."""
        versions = {previous.api_version} | {e.api_version for e in managers.values()}
        if all(views.view(version) is views.own for version in versions):
            owned: FieldSet = set().union(*(e.fields for e in managers.values()))
            return walk.prune(self.typed, self.node, merged, previous.fields, owned)
        last = (previous.api_version, previous.fields)
        owners = [(e.api_version, e.fields) for e in managers.values()]
        try:
            pruned = versionprune.prune(views, merged, last, owners)
        except ConversionFailed as e:
            raise errors.field_manager_failed(str(e)) from e
        return _with_empty_maps(pruned, config)

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
            merged = self._pruned(views, merged, previous, managers, config)
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
        if not self.typed.unstructured:
            merged = walk.without_nulls(merged)
        if merged != before:  # kube's no-op apply stamps no time, even on a new entry
            mine.time = now
        _store(merged.setdefault("metadata", {}), managers)
        if synced:
            lastapplied.keep_in_step(merged, synced)
        return merged


def _with_empty_maps(value: Obj, config: Obj) -> Obj:
    """``value`` holding each empty map ``config`` applies where its parent is there."""
    for key, applied in config.items():
        if applied == {} and value.get(key) is None:
            value[key] = {}
        elif isinstance(applied, dict) and isinstance(value.get(key), dict):
            _with_empty_maps(value[key], applied)
    return value


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


def _store(meta: Obj, managers: Managers) -> None:
    for key in [k for k, e in managers.items() if not e.fields]:
        del managers[key]
    cap_updates(managers)
    if managers:
        meta["managedFields"] = encode(managers)
    else:
        meta.pop("managedFields", None)


def conflict_error(conflicts: list[tuple[Entry, tuple[str, ...]]]) -> errors.StatusError:
    """409 with one ``FieldManagerConflict`` cause per field, in kube's wording."""
    conflicts.sort(key=lambda c: (c[0].printed(), iteration_order(c[1])))
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {entry.printed()}",
            "field": path_string(path),
        }
        for entry, path in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        detail = f"conflict with {entry.printed()}: {path_string(path)}"
        return errors.apply_conflict(causes, f"Apply failed with 1 conflict: {detail}")
    lines: list[str] = []
    for entry, path in conflicts:
        header = f"conflicts with {entry.printed()}:"
        if header not in lines:
            lines.append(header)
        lines.append(f"- {path_string(path)}")
    message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return errors.apply_conflict(causes, message)
