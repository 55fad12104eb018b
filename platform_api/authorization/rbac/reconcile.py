"""Start-up reconciliation of the default roles and bindings (kube's RBAC post-start hook).

Each default is created when missing.  One that exists is brought up to date by
union, as kube's ``reconciliation`` package does in its non-destructive mode: missing
rules (found with ``covers``), aggregation selectors and subjects are added, labels
and annotations merged with the stored values winning; nothing is ever removed, so an
administrator's additions survive.  A binding whose ``roleRef`` differs is recreated,
since a ``roleRef`` cannot change.  Annotation ``rbac.authorization.platform.io/
autoupdate: "false"`` leaves an object alone.  Objects are written only when something
changed, so a restart writes nothing; all writes are issued at once, so the storage
commits a fresh cluster's defaults in one batch.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import ensureDeferred, gatherResults
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import deferLater
from twisted.logger import Logger

from platform_api import errors
from platform_api.authorization.rbac import bootstrap_components as components
from platform_api.authorization.rbac.bootstrap import (
    AGGREGATE_TO,
    AUTOUPDATE,
    RBAC_GROUP,
    Gates,
    Obj,
    cluster_role_bindings,
    cluster_roles,
    default_gates,
)
from platform_api.authorization.rbac.rules import covers
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.store import Store
from platform_api.scheme import namespaces
from platform_api.storage.interface import Preconditions

log = Logger()
PLURALS = {
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "Role": "roles",
    "RoleBinding": "rolebindings",
}
ATTEMPTS = 3  # per object: a create or update racing another process is re-planned


# The upstream keys of the defaults' annotation and aggregation labels
# (--serve-upstream-groups): roles labelled either way aggregate, either annotation protects.
UPSTREAM_AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
UPSTREAM_AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"


def default_policy(upstream: bool = False, gates: Gates = default_gates) -> list[Obj]:
    """Every default object: roles first, then bindings (kube's order); with upstream
    names, kube's namespaced ones are in kube's system namespaces too.  Those kube makes
    only while a feature gate is on follow ``gates``."""
    pairs = list(
        zip(
            namespaces.names(namespaces.SYSTEM, upstream),
            namespaces.names(namespaces.PUBLIC, upstream),
            strict=True,
        )
    )
    objs = (
        cluster_roles(gates)
        + components.component_roles(gates)
        + (components.certificate_roles(upstream=True) if upstream else [])
        + components.controller_roles(gates)
        + cluster_role_bindings(gates)
        + components.controller_role_bindings(gates)
        + [role for system, public in pairs for role in components.roles(system, public)]
        + [b for system, public in pairs for b in components.role_bindings(system, public)]
    )
    if upstream:
        for obj in objs:
            _select_upstream_labels(obj)
    return objs


def _select_upstream_labels(obj: Obj) -> None:
    """An aggregated role also selects roles carrying the upstream aggregation label."""
    selectors = (obj.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
    for selector in list(selectors):
        labels = selector.get("matchLabels") or {}
        upstream = {
            UPSTREAM_AGGREGATE_TO + k[len(AGGREGATE_TO) :]: v
            for k, v in labels.items()
            if k.startswith(AGGREGATE_TO)
        }
        if upstream:
            selectors.append({"matchLabels": upstream})


def is_protected(obj: Obj) -> bool:
    annotations = obj.get("metadata", {}).get("annotations") or {}
    return "false" in (annotations.get(AUTOUPDATE), annotations.get(UPSTREAM_AUTOUPDATE))


def _merge_metadata(result: Obj, expected: Obj) -> None:
    meta, wanted = result.setdefault("metadata", {}), expected.get("metadata", {})
    for name in ("labels", "annotations"):
        merged = {**(wanted.get(name) or {}), **(meta.get(name) or {})}
        if merged:
            meta[name] = merged


def _selector_key(selector: Obj) -> tuple[Any, ...]:
    """Semantic identity of a label selector (kube compares with ``Semantic.DeepEqual``)."""
    labels = tuple(sorted((selector.get("matchLabels") or {}).items()))
    expressions = tuple(
        (e.get("key", ""), e.get("operator", ""), tuple(e.get("values") or ()))
        for e in selector.get("matchExpressions") or ()
    )
    return labels, expressions


def reconciled_role(existing: Obj, expected: Obj) -> Obj | None:
    """``existing`` with what the default adds, or None when nothing is missing."""
    if is_protected(existing):
        return None
    result = copy.deepcopy(existing)
    _merge_metadata(result, expected)
    have = existing.get("rules") or []
    _, missing = covers(have, expected.get("rules") or [])
    if missing:
        result["rules"] = [*have, *missing]
    wanted, present = expected.get("aggregationRule"), existing.get("aggregationRule")
    if wanted is None and present is not None:
        del result["aggregationRule"]  # kube: a role not meant to aggregate stops aggregating
    elif wanted is not None:
        selectors = (present or {}).get("clusterRoleSelectors") or []
        known = {_selector_key(s) for s in selectors}
        extra = [
            s for s in wanted.get("clusterRoleSelectors") or [] if _selector_key(s) not in known
        ]
        if extra:
            result["aggregationRule"] = {
                **(present or {}),
                "clusterRoleSelectors": selectors + extra,
            }
    return None if result == existing else result


def _ref_key(ref: Obj | None) -> tuple[str, str, str]:
    ref = ref or {}
    return (ref.get("apiGroup") or RBAC_GROUP, ref.get("kind", ""), ref.get("name", ""))


def _subject_key(subject: Obj) -> tuple[str, str, str, str]:
    kind = subject.get("kind", "")
    group = subject.get("apiGroup") or (RBAC_GROUP if kind in ("User", "Group") else "")
    return (kind, group, subject.get("name", ""), subject.get("namespace") or "")


def roleref_changed(existing: Obj, expected: Obj) -> bool:
    return _ref_key(existing.get("roleRef")) != _ref_key(expected.get("roleRef"))


def reconciled_binding(existing: Obj, expected: Obj) -> Obj | None:
    """``existing`` with the default's subjects and metadata added, or None if complete.

    The caller recreates a binding whose ``roleRef`` differs (``roleref_changed``).
    """
    if is_protected(existing):
        return None
    result = copy.deepcopy(existing)
    _merge_metadata(result, expected)
    have = existing.get("subjects") or []
    known = {_subject_key(s) for s in have}
    missing = [s for s in expected.get("subjects") or [] if _subject_key(s) not in known]
    if missing:
        result["subjects"] = [*have, *copy.deepcopy(missing)]
    return None if result == existing else result


def reconciled(existing: Obj, expected: Obj) -> Obj | None:
    if expected["kind"] in ("Role", "ClusterRole"):
        return reconciled_role(existing, expected)
    return reconciled_binding(existing, expected)


@dataclass
class Report:
    """What one pass did, by ``kind/namespace/name``."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    recreated: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def writes(self) -> int:
        return len(self.created) + len(self.updated) + len(self.recreated)


class Reconciler:
    """Applies the defaults through the registry stores (the server's own identity)."""

    def __init__(
        self,
        stores: Mapping[tuple[str, str, str], Store],
        upstream: bool = False,
        gates: Gates = default_gates,
    ) -> None:
        self.stores = {kind: stores[(RBAC_GROUP, "v1", plural)] for kind, plural in PLURALS.items()}
        self.upstream = upstream
        self.gates = gates

    async def run(self, objects: list[Obj] | None = None) -> Report:
        """One pass over ``objects`` (the defaults by default), all writes concurrent."""
        report = Report()
        objects = objects or default_policy(self.upstream, self.gates)
        work = [ensureDeferred(self._one(obj, report)) for obj in objects]
        await gatherResults(work, consumeErrors=True)
        return report

    async def _one(self, expected: Obj, report: Report) -> None:
        meta = expected["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        label = (
            f"{expected['kind']}/{namespace}/{name}" if namespace else f"{expected['kind']}/{name}"
        )
        try:
            outcome = await self._apply(self.stores[expected["kind"]], namespace, name, expected)
        except errors.StatusError as e:
            report.failed[label] = e.message
            return
        if outcome:
            getattr(report, outcome).append(label)

    async def _apply(self, store: Store, namespace: str, name: str, expected: Obj) -> str:
        """Brings one object in line; returns what was done ("" for nothing)."""
        for _ in range(ATTEMPTS):
            try:
                existing = store.get(namespace, name).object
            except errors.StatusError as e:
                if e.code != 404:
                    raise
                if await self._create(store, namespace, expected):
                    return "created"
                continue  # someone else created it meanwhile: reconcile theirs
            if is_protected(existing):
                return "protected"
            if expected["kind"].endswith("Binding") and roleref_changed(existing, expected):
                await self._recreate(store, namespace, name, existing, expected)
                return "recreated"
            if reconciled(existing, expected) is None:
                return ""
            try:
                await store.update(
                    namespace,
                    name,
                    lambda current: _update(current, expected),
                    track=store.tracker(APISERVER),
                )
            except errors.StatusError as e:
                if e.code == 404:
                    continue  # deleted meanwhile: create it again
                raise
            return "updated"
        raise errors.conflict(store.resource.plural, store.resource.group, name, "kept changing")

    async def _create(self, store: Store, namespace: str, expected: Obj) -> bool:
        try:
            await store.create(namespace, copy.deepcopy(expected), track=store.tracker(APISERVER))
        except errors.StatusError as e:
            if e.code == 409:
                return False
            raise
        return True

    async def _recreate(
        self, store: Store, namespace: str, name: str, existing: Obj, expected: Obj
    ) -> None:
        """A ``roleRef`` cannot change: delete exactly what was read, then create."""
        uid = existing["metadata"].get("uid")
        try:
            await store.delete(namespace, name, preconditions=Preconditions(uid=uid))
        except errors.StatusError as e:
            if e.code != 404:
                raise
        await self._create(store, namespace, expected)


def _update(current: Obj | None, expected: Obj) -> Obj:
    """Re-run on every compare-and-swap attempt, so a concurrent edit is merged, not lost."""
    if current is None:
        raise errors.not_found(PLURALS[expected["kind"]], RBAC_GROUP, expected["metadata"]["name"])
    return reconciled(current, expected) or current


async def ensure_defaults(
    stores: Mapping[tuple[str, str, str], Store],
    reactor: IReactorTime,
    attempts: int = 30,
    interval: float = 1.0,
    upstream: bool = False,
    gates: Gates = default_gates,
) -> bool:
    """Reconcile until a pass has no failures (kube retries its hook for 30 s)."""
    reconciler = Reconciler(stores, upstream, gates)
    for attempt in range(attempts):
        report = await reconciler.run()
        if report.writes:
            log.info(
                "RBAC defaults: {created} created, {updated} updated, {recreated} recreated",
                created=len(report.created),
                updated=len(report.updated),
                recreated=len(report.recreated),
            )
        if not report.failed:
            return True
        for label, why in report.failed.items():
            log.error("RBAC default {label}: {why}", label=label, why=why)
        if attempt + 1 < attempts:
            await deferLater(reactor, interval, lambda: None)
    return False
