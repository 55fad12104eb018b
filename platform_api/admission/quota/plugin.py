"""ResourceQuota admission (kube's ``QuotaAdmission``): charge quotas before writes.

It runs last, after the validating webhooks, so only writes everything else admitted
are charged.  Requests of one namespace are checked one at a time (kube's per-namespace
work queue); the charged usage is written to each quota's status with a compare-and-swap
on its resourceVersion, and a lost race (the controller's recount, a quota edit) re-reads
the quotas and checks again, up to three times.  Dry runs are checked, never charged.
A write that fails after its charge leaves the quota over-counted until the controller
recounts it.  Which namespaces hold a quota at all is kept from an informer (kube's
lister), so a write in a namespace without one reads no storage.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.admission.quota import resources as rl
from platform_api.admission.quota.catalog import Registry
from platform_api.admission.quota.check import LimitedResource, check_request
from platform_api.admission.quota.config import load_configuration
from platform_api.admission.quota.deviceclaims import CLASSES, classes_in
from platform_api.admission.quota.evaluators import Evaluator
from platform_api.admission.quota.pending import PendingCharges, pending_for
from platform_api.admission.quota.scopes import ScopeError
from platform_api.controllers.informer import Informer
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions
from platform_api.storage.watch import WatchHub

Obj = dict[str, Any]
RETRIES = 3


class ResourceQuota:
    name = "ResourceQuota"
    runs_last = True

    def __init__(
        self,
        quotas: Store,
        limited: list[LimitedResource],
        pending: PendingCharges,
        hub: WatchHub,
        registry: Registry | None = None,
    ) -> None:
        self.quotas = quotas
        self.limited = limited
        self.pending = pending
        self.registry = registry or Registry()
        self._held: Counter[str] = Counter()  # namespace -> how many quotas it holds
        self._informer = Informer(quotas.storage, hub, (quotas.prefix,))
        self._informer.add_listener(self._changed)

    def start(self) -> None:
        self._informer.start()

    def stop(self) -> None:
        self._informer.stop()

    def _changed(self, key: bytes, old: Obj | None, new: Obj | None) -> None:
        namespace = ((new or old or {}).get("metadata") or {}).get("namespace", "")
        self._held[namespace] += (new is not None) - (old is not None)
        if self._held[namespace] <= 0:
            del self._held[namespace]

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> Any:
        rt = attrs.resource
        if not attrs.namespace or attrs.operation not in ("CREATE", "UPDATE") or obj is None:
            return None
        if attrs.operation == "CREATE" and not rt.group and rt.plural == "namespaces":
            return None
        ev = self.registry.get(rt.group, rt.plural)
        if ev is None or not ev.handles(attrs, obj, old):
            return None
        if not self.limited and not self._has_quotas(attrs.namespace):
            return None  # nothing to charge: no lock, no list (most namespaces)
        return self._serialized(attrs, obj, old, ev)

    def _has_quotas(self, namespace: str) -> bool:
        return namespace in self._held

    async def _serialized(
        self, attrs: Attributes, obj: Obj, old: Obj | None, ev: Evaluator
    ) -> None:
        async with self.pending.locked(attrs.namespace):
            await self._evaluate(attrs, obj, old, ev)

    def _read_quotas(self, namespace: str) -> list[Obj]:
        return [s.object for s in self.quotas.list(namespace, ListOptions()).items]

    async def _evaluate(self, attrs: Attributes, obj: Obj, old: Obj | None, ev: Evaluator) -> None:
        quotas = self._read_quotas(attrs.namespace)
        if not quotas and not self.limited:
            return
        for attempt in range(RETRIES + 1):
            try:
                charged = check_request(quotas, attrs, obj, old, ev, self.limited)
            except ScopeError as e:
                raise errors.internal_error(e) from None
            if attrs.dry_run:
                return  # kube checks a dry run but never writes its charge
            failed, last = await self._write(attrs, obj, quotas, charged)
            if not failed:
                return
            if attempt == RETRIES:
                assert last is not None
                raise last
            # Check again against the current state of the quotas that were not written.
            quotas = [
                q for q in self._read_quotas(attrs.namespace) if q["metadata"]["name"] in failed
            ]
            if not quotas:
                return

    async def _write(
        self, attrs: Attributes, obj: Obj, before: list[Obj], after: list[Obj]
    ) -> tuple[set[str], errors.StatusError | None]:
        """Write every changed quota's usage; the names whose write lost a race."""
        failed: set[str] = set()
        last: errors.StatusError | None = None
        uid = (obj.get("metadata") or {}).get("uid", "")
        for old_quota, new_quota in zip(before, after, strict=True):
            used_before = rl.from_object((old_quota.get("status") or {}).get("used"))
            used_after = rl.from_object((new_quota.get("status") or {}).get("used"))
            if rl.equals(used_before, used_after):
                continue
            name = new_quota["metadata"]["name"]
            charge = None
            if attrs.operation == "CREATE" and uid:
                delta = rl.remove_zeros(rl.subtract_non_negative(used_after, used_before))
                charge = self.pending.add(attrs.namespace, name, uid, delta)
            try:
                await self.quotas.update(
                    attrs.namespace,
                    name,
                    _replace_with(new_quota),
                    subresource="status",
                )
            except errors.StatusError as e:
                if charge is not None:
                    self.pending.discard(attrs.namespace, name, charge)
                if e.code not in (404, 409):
                    raise
                failed.add(name)
                last = e
        return failed, last


def _replace_with(quota: Obj) -> Callable[[Obj | None], Obj]:
    """An update that writes ``quota`` as read: a changed resourceVersion is a conflict."""

    def update(_current: Obj | None) -> Obj:
        return copy.deepcopy(quota)

    return update


def build(ctx: PluginContext) -> ResourceQuota:
    limited = load_configuration(ctx.plugin_settings(ResourceQuota.name))
    quotas = ctx.stores[("", "v1", "resourcequotas")]
    registry = Registry(device_classes=classes_in(ctx.stores.get(CLASSES)))
    return ResourceQuota(quotas, limited, pending_for(ctx.hub), ctx.hub, registry)
