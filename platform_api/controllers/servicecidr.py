"""kube-controller-manager's service-cidr-controller: every ServiceCIDR gets the
protection finalizer and a Ready condition; one being deleted keeps its finalizer while
an allocated IPAddress lies in it and in no other ServiceCIDR (its condition then says
why), and loses it a grace period after the deletion began, so that no allocator still
hands out addresses from it.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.registry.servicecidr import (
    ALLOCATOR,
    FINALIZER,
    LABEL_MANAGED_BY,
    ready_condition,
    with_ready,
)
from platform_api.registry.store import Store
from platform_api.scheme.decoding import parse_time
from platform_api.storage.interface import Event, ListOptions

Obj = dict[str, Any]
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
GRACE = 10.0  # kube's deletionGracePeriod
READY = "Kubernetes Service CIDR is ready"
BLOCKED = (
    "There are still IPAddresses referencing the ServiceCIDR, please remove them or create "
    "a new ServiceCIDR"
)


def networks(cidr: Obj) -> list[Network]:
    out = []
    for text in (cidr.get("spec") or {}).get("cidrs") or []:
        try:
            out.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            continue
    return out


def _within(net: Network, other: Network) -> bool:
    return net.version == other.version and net.subnet_of(other)  # type: ignore[arg-type]


class ServiceCIDRController(Controller):
    name = "service-cidr-controller"

    def __init__(self, cidrs: Store, addresses: Store, *args: Any) -> None:
        super().__init__(*args)
        self.cidrs = cidrs
        self.addresses = addresses

    def resync(self) -> None:
        for stored in self.cidrs.list("", ListOptions()).items:
            self.enqueue(stored.object["metadata"]["name"])

    def watched(self) -> tuple[bytes, ...]:
        return (self.cidrs.prefix, self.addresses.prefix)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.cidrs.prefix):
            self.resync()  # one ServiceCIDR may unblock or block the deletion of another
        elif event.key.startswith(self.addresses.prefix) and event.type == "DELETED":
            for stored in self.cidrs.list("", ListOptions()).items:
                if stored.object["metadata"].get("deletionTimestamp"):
                    self.enqueue(stored.object["metadata"]["name"])

    async def sync(self, key: str) -> float | None:
        try:
            cidr = self.cidrs.get("", key).object
        except errors.StatusError:
            return None
        deleting = cidr["metadata"].get("deletionTimestamp")
        if deleting:
            if FINALIZER not in (cidr["metadata"].get("finalizers") or []):
                return None
            if not self._can_delete(cidr):
                await self._condition(cidr, "False", "Terminating", BLOCKED)
                return None
            wait = GRACE - (self.reactor.seconds() - parse_time(deleting).timestamp())
            if wait > 0:
                return wait
            await self._finalizer(key, present=False)
            return None
        if FINALIZER not in (cidr["metadata"].get("finalizers") or []):
            await self._finalizer(key, present=True)
        if (ready_condition(cidr) or {}).get("status") != "True":
            await self._condition(cidr, "True", "", READY)
        return None

    def _can_delete(self, cidr: Obj) -> bool:
        """kube's canDeleteCIDR: each range inside another ServiceCIDR, or no allocated
        address that only this one holds."""
        name = cidr["metadata"]["name"]
        others = [
            (stored.object["metadata"]["name"], networks(stored.object))
            for stored in self.cidrs.list("", ListOptions()).items
        ]

        def covered(net: Network) -> bool:  # by another ServiceCIDR's range
            return any(
                other != name and any(_within(net, o) for o in nets) for other, nets in others
            )

        if all(covered(net) for net in networks(cidr)):
            return True
        for stored in self.addresses.list("", ListOptions()).items:
            meta = stored.object["metadata"]
            if (meta.get("labels") or {}).get(LABEL_MANAGED_BY) != ALLOCATOR:
                continue
            try:
                address = ipaddress.ip_address(meta["name"])
            except ValueError:
                continue
            holders = {n for n, nets in others if any(address in net for net in nets)}
            if holders == {name}:
                return False
        return True

    async def _finalizer(self, name: str, present: bool) -> None:
        def update(existing: Obj | None) -> Obj:
            if existing is None:
                raise errors.not_found("servicecidrs", "networking.platform.io", name)
            left = [f for f in existing["metadata"].get("finalizers") or [] if f != FINALIZER]
            if present:
                left.append(FINALIZER)
            if left:
                existing["metadata"]["finalizers"] = left
            else:
                existing["metadata"].pop("finalizers", None)
            return existing

        await errors.tolerating(self.cidrs.update("", name, update), 404, 409)

    async def _condition(self, cidr: Obj, status: str, reason: str, message: str) -> None:
        """Set the Ready condition, unless it says so already (a write would wake this
        controller again)."""
        before = ready_condition(cidr) or {}
        if (before.get("status"), before.get("reason"), before.get("message")) == (
            status,
            reason,
            message,
        ):
            return
        name, now = cidr["metadata"]["name"], self.cidrs.now()

        def update(existing: Obj | None) -> Obj:
            if existing is None:
                raise errors.not_found("servicecidrs", "networking.platform.io", name)
            return with_ready(existing, status, reason, message, now)

        work = self.cidrs.update("", name, update, subresource="status")
        await errors.tolerating(work, 404, 409)
