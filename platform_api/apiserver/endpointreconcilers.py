"""kube's endpoint reconcilers (``--endpoint-reconciler-type``): how the ``kubernetes``
Service's Endpoints come to list every API server.

``lease`` (the default): each server renews its address lease (masterleases.py) and
writes the addresses of all live leases, sorted, with its ports.  ``master-count``
(deprecated in kube): each server adds its own address and trims the list to
``--apiserver-count`` by dropping the addresses after its own.  ``none`` writes nothing.
Both refuse to leave the Endpoints empty, and mark them ``skip-mirror``: the API server
writes their EndpointSlice itself (endpointsadapter.py).
"""

from __future__ import annotations

from typing import Any, Protocol

from twisted.logger import Logger

from platform_api.apiserver.endpointsadapter import NAMESPACE, EndpointsAdapter
from platform_api.apiserver.masterleases import MasterLeases
from platform_api.controllers.endpointsubsets import SKIP_MIRROR, repack_subsets

log = Logger()
Obj = dict[str, Any]
NO_LEASES = (
    "no API server IP addresses were listed in storage, refusing to erase all endpoints "
    "for the kubernetes Service"
)


class EndpointReconciler(Protocol):
    async def reconcile(self, service: str, ip: str, ports: list[Obj], fix_ports: bool) -> None:
        """Make the Service's Endpoints list this server (and its live peers)."""
        ...

    async def remove(self, service: str, ip: str, ports: list[Obj]) -> bool:
        """Take this server out of the Endpoints; False when it had no record."""
        ...

    def stop_reconciling(self) -> None: ...


class ReconcileError(Exception):
    pass


def _mark_skip_mirror(endpoints: Obj) -> bool:
    """Label the Endpoints so the mirroring controller leaves them; whether it changed."""
    labels = endpoints["metadata"].setdefault("labels", {})
    if labels.get(SKIP_MIRROR) == "true":
        return False
    labels[SKIP_MIRROR] = "true"
    return True


def _new(service: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": service, "namespace": NAMESPACE},
    }


def _ports_match(subset: Obj, ports: list[Obj]) -> bool:
    return (subset.get("ports") or []) == ports


class _Reconciler:
    """Once stopped (the server is shutting down), a reconciler adds nothing back."""

    def __init__(self, adapter: EndpointsAdapter) -> None:
        self.adapter = adapter
        self.stopped = False

    def stop_reconciling(self) -> None:
        self.stopped = True


class LeaseReconciler(_Reconciler):
    def __init__(self, adapter: EndpointsAdapter, leases: MasterLeases) -> None:
        super().__init__(adapter)
        self.leases = leases

    async def reconcile(self, service: str, ip: str, ports: list[Obj], fix_ports: bool) -> None:
        if self.stopped:
            return
        await self.leases.update(ip)
        await self._reconcile(service, ports, fix_ports)

    async def remove(self, service: str, ip: str, ports: list[Obj]) -> bool:
        if not await self.leases.remove(ip):
            return False
        await self._reconcile(service, ports, True)
        return True

    async def _reconcile(self, service: str, ports: list[Obj], fix_ports: bool) -> None:
        await self.leases.collect()
        endpoints = self.adapter.get(service)
        create = endpoints is None
        if endpoints is None:
            endpoints = _new(service)
        ips = sorted(self.leases.list_live())
        if not ips:
            raise ReconcileError(NO_LEASES)
        relabelled = _mark_skip_mirror(endpoints)
        subsets = endpoints.get("subsets") or []
        format_ok = len(subsets) == 1
        ips_ok = format_ok and _holds_exactly(subsets[0], ips)
        ports_ok = format_ok and (not fix_ports or _ports_match(subsets[0], ports))
        if not relabelled and format_ok and ips_ok and ports_ok:
            await self.adapter.ensure_slice(endpoints)
            return
        if not format_ok:
            endpoints["subsets"] = subsets = [{"addresses": [], "ports": ports}]
        if not format_ok or not ips_ok:
            subsets[0]["addresses"] = [{"ip": ip} for ip in ips]
        if not ports_ok:
            subsets[0]["ports"] = ports
        log.warn("Resetting endpoints for master service {name!r} to {ips}", name=service, ips=ips)
        if create:
            await self.adapter.create(endpoints)
        else:
            await self.adapter.update(endpoints)


def _holds_exactly(subset: Obj, ips: list[str]) -> bool:
    """Every address is one of ``ips`` (sorted), once, and none is missing; any order."""
    return sorted(a.get("ip") or "" for a in subset.get("addresses") or []) == ips


class MasterCountReconciler(_Reconciler):
    def __init__(self, adapter: EndpointsAdapter, count: int) -> None:
        super().__init__(adapter)
        self.count = count

    async def reconcile(self, service: str, ip: str, ports: list[Obj], fix_ports: bool) -> None:
        if self.stopped:
            return
        endpoints = self.adapter.get(service)
        relabelled = _mark_skip_mirror(endpoints or {"metadata": {}})
        if endpoints is None:
            created = _new(service)
            _mark_skip_mirror(created)
            created["subsets"] = [{"addresses": [{"ip": ip}], "ports": ports}]
            await self.adapter.create(created)
            return
        subsets = endpoints.get("subsets") or []
        if len(subsets) != 1:  # something is badly wrong: start the record again
            endpoints["subsets"] = [{"addresses": [{"ip": ip}], "ports": ports}]
            await self.adapter.update(endpoints)
            return
        addresses = subsets[0].get("addresses") or []
        ours = any(a.get("ip") == ip for a in addresses)
        ip_ok = ours and len(addresses) <= self.count
        ports_ok = not fix_ports or _ports_match(subsets[0], ports)
        if not relabelled and ip_ok and ports_ok:
            await self.adapter.ensure_slice(endpoints)
            return
        if not ip_ok:
            subsets[0]["addresses"] = [*addresses, {"ip": ip}]
            endpoints["subsets"] = subsets = repack_subsets(subsets)
            self._trim(subsets[0]["addresses"], ip)
        if not ports_ok:
            subsets[0]["ports"] = ports
        log.warn("Resetting endpoints for master service {name!r}", name=service)
        await self.adapter.update(endpoints)

    def _trim(self, addresses: list[Obj], ip: str) -> None:
        """Past the count, drop the addresses after ours (wrapping round), so that the
        servers' views converge."""
        for i, address in enumerate(addresses):
            if address.get("ip") != ip:
                continue
            while len(addresses) > self.count:
                del addresses[(i + 1) % len(addresses)]  # as kube does, even past wrapping
            return

    async def remove(self, service: str, ip: str, ports: list[Obj]) -> bool:
        endpoints = self.adapter.get(service)
        if endpoints is None or not endpoints.get("subsets"):
            return True
        subsets = endpoints["subsets"]
        subsets[0]["addresses"] = [
            a for a in subsets[0].get("addresses") or [] if a.get("ip") != ip
        ]
        endpoints["subsets"] = repack_subsets(subsets)
        await self.adapter.update(endpoints)
        return True
