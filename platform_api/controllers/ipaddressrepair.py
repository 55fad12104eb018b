"""kube-apiserver's IPAddress repair loop: every Service's cluster IP has its IPAddress,
and every IPAddress the allocator made belongs to a Service that has its address.

A Service whose address lacks its IPAddress (written before this server kept them, or
deleted by hand) gets it again, and one pointing elsewhere is made again for it.  An
IPAddress of the allocator whose Service is gone is deleted once a minute old (before
that its Service may still be on its way to storage); one whose Service exists but does
not have the address (turned ExternalName) at once, unless it was written after the
Service was (an update that allocated it is on its way).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from twisted.logger import Logger

from platform_api import errors
from platform_api.admission.clusterip import address_object
from platform_api.controllers.base import Controller
from platform_api.controllers.servicecidr import networks
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.servicecidr import ALLOCATOR, LABEL_MANAGED_BY
from platform_api.registry.serviceips import cluster_ips
from platform_api.registry.store import Store
from platform_api.scheme.decoding import parse_time
from platform_api.storage.interface import Event, ListOptions

log = Logger()
Obj = dict[str, Any]
GRACE = 60.0  # kube's: a Service create's longest time between its IPAddress and itself


def _canonical(ip: str) -> str | None:
    try:
        return str(ipaddress.ip_address(ip))
    except ValueError:
        return None


def _revision(obj: Obj) -> int:
    try:
        return int(obj["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


def _labelled(address: Obj) -> bool:
    """Carries the labels the allocator gives the IPAddress of its address."""
    name = address["metadata"]["name"]
    wanted = address_object(name, "", "")["metadata"]["labels"]
    labels = address["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in wanted.items())


class IPAddressRepair(Controller):
    name = "ipaddress-repair"
    manager = APISERVER  # kube runs it inside the API server

    def __init__(self, services: Store, addresses: Store, cidrs: Store, *args: Any) -> None:
        super().__init__(*args)
        self.services = services
        self.addresses = addresses
        self.cidrs = cidrs

    def resync(self) -> None:
        for stored in self.services.list("", ListOptions()).items:
            meta = stored.object["metadata"]
            self.enqueue(("service", meta.get("namespace", ""), meta["name"]))
        for stored in self.addresses.list("", ListOptions()).items:
            self.enqueue(("address", stored.object["metadata"]["name"]))

    def watched(self) -> tuple[bytes, ...]:
        return (self.services.prefix, self.addresses.prefix)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.services.prefix):
            for state in (event.prev, event.stored):
                if state is not None:
                    meta = state.object["metadata"]
                    self.enqueue(("service", meta.get("namespace", ""), meta["name"]))
                    for ip in cluster_ips(state.object):
                        if (name := _canonical(ip)) is not None:
                            self.enqueue(("address", name))
        elif event.key.startswith(self.addresses.prefix):
            for state in (event.prev, event.stored):
                if state is not None:
                    self.enqueue(("address", state.object["metadata"]["name"]))
                    ref = (state.object.get("spec") or {}).get("parentRef") or {}
                    if ref.get("resource") == "services" and not ref.get("group"):
                        self.enqueue(("service", ref.get("namespace", ""), ref.get("name", "")))

    async def sync(self, key: tuple[str, ...]) -> float | None:
        if key[0] == "service":
            await self._service(key[1], key[2])
            return None
        return await self._address(key[1])

    def _in_range(self, ip: str) -> bool:
        address = ipaddress.ip_address(ip)
        for stored in self.cidrs.list("", ListOptions()).items:
            if any(address in net for net in networks(stored.object)):
                return True
        return False

    async def _service(self, namespace: str, name: str) -> None:
        try:
            service = self.services.get(namespace, name).object
        except errors.StatusError:
            return
        for ip in cluster_ips(service):
            canonical = _canonical(ip)
            if canonical is None or not self._in_range(canonical):
                log.warn(
                    "the cluster IP {ip} of Service {ns}/{name} is not within any "
                    "ServiceCIDR; please recreate the Service",
                    ip=ip,
                    ns=namespace,
                    name=name,
                )
                continue
            try:
                address = self.addresses.get("", canonical).object
            except errors.StatusError:
                await self._create(canonical, namespace, name)
                continue
            ref = (address.get("spec") or {}).get("parentRef") or {}
            if ref.get("group") or ref.get("resource") != "services":
                await self._recreate(canonical, namespace, name)
            elif (ref.get("namespace"), ref.get("name")) != (namespace, name):
                if not self._holds(ref.get("namespace", ""), ref.get("name", ""), canonical):
                    await self._recreate(canonical, namespace, name)
            elif not _labelled(address):
                await self._recreate(canonical, namespace, name)

    def _holds(self, namespace: str, name: str, ip: str) -> bool:
        try:
            service = self.services.get(namespace, name).object
        except errors.StatusError:
            return False
        return ip in {_canonical(a) for a in cluster_ips(service)}

    async def _address(self, name: str) -> float | None:
        try:
            address = self.addresses.get("", name).object
        except errors.StatusError:
            return None
        if (address["metadata"].get("labels") or {}).get(LABEL_MANAGED_BY) != ALLOCATOR:
            return None
        ref = (address.get("spec") or {}).get("parentRef") or {}
        if ref.get("group") or ref.get("resource") != "services":
            await self._delete(name)
            return None
        created = parse_time(address["metadata"]["creationTimestamp"]).timestamp()
        left = GRACE - (self.reactor.seconds() - created)
        try:
            service = self.services.get(ref.get("namespace", ""), ref.get("name", "")).object
        except errors.StatusError:
            if left > 0:
                return left
            await self._delete(name)
            return None
        if name in {_canonical(a) for a in cluster_ips(service)}:
            return None
        if _revision(address) > _revision(service) and left > 0:
            return min(left, 1.0)  # written after the Service: its update is on its way
        await self._delete(name)
        return None

    async def _create(self, ip: str, namespace: str, name: str) -> None:
        await errors.tolerating(self.addresses.create("", address_object(ip, namespace, name)), 409)

    async def _recreate(self, ip: str, namespace: str, name: str) -> None:
        await self._delete(ip)
        await self._create(ip, namespace, name)

    async def _delete(self, ip: str) -> None:
        await errors.tolerating(self.addresses.delete("", ip), 404)
