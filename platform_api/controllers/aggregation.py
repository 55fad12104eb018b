"""The clusterrole-aggregation-controller: an aggregated ClusterRole's rules are the
union of the rules of the ClusterRoles its ``aggregationRule`` selects.

As kube's controller, a ClusterRole change re-queues aggregated roles (here only those
whose selectors match the changed role's labels, before or after); a sync
takes each selector in turn, the selected roles (itself excluded) sorted by name, and
appends their rules in order, skipping exact duplicates; the result is written only
when it differs from the stored rules.  Nested aggregation (``view`` into ``edit``
into ``admin``) converges because each rewrite is itself a ClusterRole change.
"""

from __future__ import annotations

from typing import Any

import orjson

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.controllers.informer import Informer
from platform_api.registry.store import Store
from platform_api.selectors import LabelSelector, SelectorError, label_selector_from
from platform_api.storage.interface import Event, ListOptions

Obj = dict[str, Any]


def _normal(rule: Obj) -> Obj:
    """A rule without empty fields: kube's semantic equality treats nil and empty alike."""
    return {k: v for k, v in rule.items() if v}  # its fields are lists of strings


def _same_rules(rules: list[Obj], stored: list[Obj] | None) -> bool:
    return rules == stored or [_normal(r) for r in rules] == [_normal(r) for r in stored or []]


def aggregate_rules(role: Obj, roles: list[Obj]) -> list[Obj]:
    """The rules ``role``'s selectors gather from ``roles``, in kube's order."""
    name = role["metadata"]["name"]
    rules: list[Obj] = []
    seen: set[bytes] = set()  # kube compares each rule with every one kept: quadratic
    by_name = sorted(roles, key=lambda r: r["metadata"]["name"])
    for spec in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []:
        selector = label_selector_from(spec)
        for other in by_name:
            if other["metadata"]["name"] == name:
                continue
            if not selector.matches(other["metadata"].get("labels") or {}):
                continue
            for rule in other.get("rules") or []:
                normal = orjson.dumps(_normal(rule), option=orjson.OPT_SORT_KEYS)
                if normal not in seen:
                    seen.add(normal)
                    rules.append(rule)
    return rules


def _selectors(role: Obj) -> list[LabelSelector] | None:
    specs = (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
    try:
        return [label_selector_from(spec) for spec in specs]
    except SelectorError:
        return None


class ClusterRoleAggregation(Controller):
    """Keeps the rules of aggregated ClusterRoles current, from an informer's copy."""

    name = "clusterrole-aggregation-controller"

    def __init__(self, clusterroles: Store, informer: Informer | None, *args: Any) -> None:
        super().__init__(*args)
        self.clusterroles = clusterroles
        self.prefix = clusterroles.prefix
        self._own_informer = informer is None
        self.informer = informer or Informer(clusterroles.storage, self.hub, (self.prefix,))
        # Aggregated roles by name: their selectors (None: one does not parse).
        self.aggregated: dict[str, list[LabelSelector] | None] = {}

    def start(self) -> None:
        """Changes reach us through the informer's listener, not a subscription of our own."""
        self.running = True
        if self._own_informer:
            self.informer.start()
        self.informer.add_listener(self._changed)

    def stop(self) -> None:
        self.running = False
        if self.informer.listeners and self._changed in self.informer.listeners:
            self.informer.listeners.remove(self._changed)
        if self._own_informer:
            self.informer.stop()

    def observe(self, event: Event) -> None:
        """Unused: the informer's listener sees every change."""

    def _changed(self, key: bytes, old: Obj | None, new: Obj | None) -> None:
        """kube re-queues every aggregated role on any change; only those the changed
        role is (or was) selected by, and the role itself, can gather other rules, and
        each sync reads every role."""
        if not key.startswith(self.prefix):
            return
        changed = (new or old or {}).get("metadata", {}).get("name", "")
        self.aggregated.pop(changed, None)
        if new is not None and new.get("aggregationRule") is not None:
            self.aggregated[changed] = _selectors(new)
        labels = [(obj["metadata"].get("labels") or {}) for obj in (old, new) if obj is not None]
        for name, selectors in sorted(self.aggregated.items()):
            if (
                name == changed
                or selectors is None
                or any(s.matches(set_) for s in selectors for set_ in labels)
            ):
                self.enqueue(name)

    def _roles(self) -> list[Obj]:
        return list(self.informer.under(self.prefix))

    async def sync(self, name: str) -> float | None:
        role = self.informer.objects.get(self.clusterroles.key("", name))
        if role is None or role.get("aggregationRule") is None:
            return None
        try:
            rules = aggregate_rules(role, self._roles())
        except SelectorError:
            return None  # validation keeps bad selectors out; one from old data is skipped
        if _same_rules(rules, role.get("rules")):
            return None
        await write_rules(self.clusterroles, name, rules)
        return None


async def write_rules(clusterroles: Store, name: str, rules: list[Obj]) -> None:
    """Set an aggregated role's rules (gone, or no longer aggregated: nothing to do)."""

    def rewrite(current: Obj | None) -> Obj:
        if current is None or current.get("aggregationRule") is None:
            raise errors.not_found("clusterroles", clusterroles.resource.group, name)
        current["rules"] = rules
        return current

    try:
        await clusterroles.update("", name, rewrite)
    except errors.StatusError as e:
        if e.code != 404:
            raise


async def fill_aggregated_roles(clusterroles: Store, passes: int = 4) -> None:
    """Fill every aggregated role from storage, repeating while a pass changes one (admin
    aggregates edit): a fresh server is ready with admin/edit/view filled rather than
    rewriting them a moment later, as kube's controller does."""
    for _ in range(passes):
        roles = [s.object for s in clusterroles.list("", ListOptions()).items]
        changed = False
        for role in roles:
            if role.get("aggregationRule") is None:
                continue
            try:
                rules = aggregate_rules(role, roles)
            except SelectorError:
                continue
            if not _same_rules(rules, role.get("rules")):
                await write_rules(clusterroles, role["metadata"]["name"], rules)
                changed = True
        if not changed:
            return
