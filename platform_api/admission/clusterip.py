"""Service cluster IPs, as kube's MultiCIDRServiceAllocator hands them out.

The ranges are the ServiceCIDRs (the ``kubernetes`` one made from
``--service-cluster-ip-range``, and any a user adds) that are ready and not being
deleted, of the Service's IP families (one, or both when ``--service-cluster-ip-range``
names one of each).  Each address handed out is an IPAddress object
named by it and pointing at its Service: creating that object is the allocation, so two
workers or replicas never hand out one address twice (the second create is refused).
A free address is picked at random from the upper part of a range first (kube's
KEP-3070 static subrange below is for addresses users choose).  A Service refused after
its address was written gives it back (``Attributes.on_failure``); one deleted gives it
back once gone (``Store.after_delete``); anything else that leaks is the repair
controller's (controllers/ipaddressrepair.py).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from twisted.logger import Logger

from platform_api import errors
from platform_api.admission.allocation import Share, pick_free
from platform_api.admission.interface import Attributes
from platform_api.admission.servicefamilies import (
    family_of,
    init_families,
    unchanged_prefer_dual_stack,
)
from platform_api.registry.servicecidr import (
    ALLOCATOR,
    DEFAULT_SERVICE_CIDR,
    LABEL_IP_FAMILY,
    LABEL_MANAGED_BY,
    ready_condition,
)
from platform_api.registry.serviceips import (
    cluster_ips,
    needs_cluster_ip,
    normalize,
    prepare_update,
)
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions
from platform_api.validation import field
from platform_api.validation.field import go_quote
from platform_api.validation.ips import parse_ip_sloppy

log = Logger()
Obj = dict[str, Any]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
ALLOCATED = "provided IP is already allocated"
MISMATCH = "the provided network does not match the current range"


@dataclass(frozen=True)
class Range:
    """The addresses of one ServiceCIDR a Service may get: not the network's own, nor
    (IPv4) its broadcast address."""

    first: int
    size: int
    static: int  # the lower part dynamic allocation leaves for last (kube's rangeOffset)
    version: int

    @classmethod
    def of(cls, cidr: str) -> Range | None:
        try:
            network = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            return None
        if network.version == 6 and network.prefixlen < 64:
            return None  # kube makes no allocator for these
        hosts = network.num_addresses - (2 if network.version == 4 else 1)
        return cls(
            int(network.network_address) + 1, max(hosts, 0), _static(network), network.version
        )

    def __contains__(self, address: Address) -> bool:
        return address.version == self.version and 0 <= int(address) - self.first < self.size

    def address(self, offset: int) -> str:
        return str(ipaddress.ip_address(self.first + offset))


def _static(network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> int:
    """kube's calculateRangeOffset: min(max(16, size/16), 256), none for tiny ranges."""
    size = network.num_addresses
    return 0 if size <= 16 else min(max(16, size // 16), 256)


def is_ready(cidr: Obj) -> bool:
    """Not being deleted, and Ready unless a Ready condition says otherwise (kube assumes
    ready where no controller has said, as when kube-controller-manager is not running)."""
    if cidr["metadata"].get("deletionTimestamp"):
        return False
    ready = ready_condition(cidr)
    return ready is None or ready.get("status") == "True"


def _family(version: int) -> str:
    return "IPv6" if version == 6 else "IPv4"


def address_object(ip: str, namespace: str, name: str) -> Obj:
    """The IPAddress that holds ``ip`` for a Service."""
    version = ipaddress.ip_address(ip).version
    labels = {LABEL_IP_FAMILY: _family(version), LABEL_MANAGED_BY: ALLOCATOR}
    return {
        "apiVersion": "networking.platform.io/v1",
        "kind": "IPAddress",
        "metadata": {"name": ip, "labels": labels},
        "spec": {"parentRef": {"resource": "services", "namespace": namespace, "name": name}},
    }


class ClusterIPAllocation:
    name = "ServiceClusterIPAllocation"
    resources = frozenset({("", "services")})
    allocates = True  # after the webhooks and policies, as kube's Service store does

    def __init__(
        self, addresses: Store, cidrs: Store, service_range: str, share: Share = (0, 1)
    ) -> None:
        self._addresses = addresses
        self._cidrs = cidrs
        # The cluster's families, the primary first: one per --service-cluster-ip-range CIDR.
        self._families = [
            _family(ipaddress.ip_network(cidr.strip(), strict=False).version)
            for cidr in service_range.split(",")
            if cidr.strip()
        ]
        self._share = share

    def ranges(self, family: str) -> list[Range]:
        """The ready ranges of ``family``, the default ServiceCIDR's first."""
        found: list[Range] = []
        items = self._cidrs.list("", ListOptions()).items
        for stored in sorted(
            items, key=lambda s: s.object["metadata"]["name"] != DEFAULT_SERVICE_CIDR
        ):
            if is_ready(stored.object):
                for cidr in (stored.object.get("spec") or {}).get("cidrs") or []:
                    r = Range.of(cidr)
                    if r is not None and _family(r.version) == family and r not in found:
                        found.append(r)
        return found

    async def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if rt.group or rt.plural != "services" or attrs.subresource or obj is None:
            return
        spec, old_spec = obj.get("spec"), (old or {}).get("spec") if old is not None else None
        if attrs.operation not in ("CREATE", "UPDATE") or not isinstance(spec, dict):
            return
        if isinstance(old_spec, dict):
            prepare_update(spec, old_spec)  # as the strategy will: allocation needs it now
        else:
            old_spec = None
            normalize(spec, None)
        init_families(spec, old_spec, self._families, attrs.name)
        if old_spec is None or not needs_cluster_ip(old_spec):
            if needs_cluster_ip(spec) and spec.get("clusterIPs") != ["None"]:
                await self._allocate(attrs, spec, 0, old_spec is not None)
            return
        if old_spec.get("clusterIPs") == ["None"] or unchanged_prefer_dual_stack(spec, old_spec):
            return  # headless, or left as it was
        if not needs_cluster_ip(spec):  # turned ExternalName: its addresses are free
            self._release_on_success(attrs, cluster_ips({"spec": old_spec}))
            return
        families, old_families = spec["ipFamilies"], old_spec.get("ipFamilies") or []
        if len(old_families) == 1 and len(families) == 2:  # upgraded to dual-stack
            await self._allocate(attrs, spec, 1, True)
        elif len(old_families) == 2 and len(families) == 1:  # downgraded
            self._release_on_success(attrs, cluster_ips({"spec": old_spec})[1:])

    async def _allocate(self, attrs: Attributes, spec: Obj, start: int, updating: bool) -> None:
        """Addresses for ``ipFamilies[start:]``: those ``clusterIPs`` names, else free
        ones.  A failure names ``clusterIPs`` as asked, a blank for each address to find:
        kube's allocator adds the blanks first and fills them in only once all succeed."""
        families = spec["ipFamilies"]
        asked = list(spec.get("clusterIPs") or [])
        asked += [""] * (len(families) - len(asked))
        ips = list(asked)
        for i in range(start, len(families)):
            if ips[i]:
                ips[i] = await self._static(attrs, asked, ips[i])
            elif attrs.dry_run:
                ips[i] = self._dry_run_address(attrs, families[i])
            else:
                reused = await self._reuse(attrs, families[i], ips) if updating else None
                ips[i] = reused or await self._dynamic(attrs, families[i], asked)
        spec["clusterIP"] = ips[0]
        spec["clusterIPs"] = ips

    def _release_on_success(self, attrs: Attributes, ips: list[str]) -> None:
        """Free addresses the Service gives up once its update is stored (kube releases
        them as the update commits)."""
        if attrs.dry_run or not ips:
            return

        async def give_up() -> None:
            for ip in ips:
                await self.release(ip, attrs.namespace, attrs.name)

        attrs.on_success(give_up)

    def _dry_run_address(self, attrs: Attributes, family: str) -> str:
        """kube's dry-run allocator answers with a range's own network address."""
        ranges = self.ranges(family)
        if not ranges:
            raise _full(attrs)
        return str(ipaddress.ip_address(ranges[0].first - 1))

    async def _static(self, attrs: Attributes, ips: list[str], wanted: str) -> str:
        address = parse_ip_sloppy(wanted)  # init_families refused what does not parse
        assert address is not None
        if not any(address in r for r in self.ranges(_family(address.version))):
            raise _invalid(attrs, ips, f"failed to allocate IP {wanted}: {MISMATCH}")
        if not attrs.dry_run and not await self._take(attrs, str(address)):
            raise _invalid(attrs, ips, f"failed to allocate IP {wanted}: {ALLOCATED}")
        return wanted  # the Service keeps it as given; its IPAddress is named canonically

    async def _dynamic(self, attrs: Attributes, family: str, requested: list[str]) -> str:
        """The next free address of ``family``; kube's allocator reports a failure to
        write its IPAddress as the Service's (``requested``: its clusterIPs as asked)."""
        for r in self.ranges(family):
            while True:
                ip = self._free(r)
                if ip is None:
                    break  # full: the next range
                try:
                    if await self._take(attrs, ip):
                        return ip
                except errors.StatusError as e:
                    raise _invalid(
                        attrs, requested, f"failed to allocate IP: {e.message}"
                    ) from None
        raise _full(attrs)

    def _free(self, r: Range) -> str | None:
        def taken(offset: int) -> bool:
            return self._exists(r.address(offset))

        offset = pick_free(r.size, taken, self._share, r.static)
        return None if offset is None else r.address(offset)

    def _exists(self, ip: str) -> bool:
        try:
            self._addresses.get("", ip)
        except errors.StatusError:
            return False
        return True

    async def _take(self, attrs: Attributes, ip: str) -> bool:
        """Write the IPAddress; False when another holds the address already."""
        try:
            await self._addresses.create("", address_object(ip, attrs.namespace, attrs.name))
        except errors.StatusError as e:
            if e.code == 409:
                return False
            raise

        async def give_back() -> None:
            await self.release(ip, attrs.namespace, attrs.name)

        attrs.on_failure(give_back)
        return True

    async def _reuse(self, attrs: Attributes, family: str, held: list[str]) -> str | None:
        """An address of ``family`` an earlier attempt of this update wrote (the mutating
        phase of an update runs again when the stored object changed meanwhile)."""
        for stored in self._addresses.list("", ListOptions()).items:
            ref = (stored.object.get("spec") or {}).get("parentRef") or {}
            ip = str(stored.object["metadata"]["name"])
            if (
                ref.get("resource") == "services"
                and (ref.get("namespace"), ref.get("name")) == (attrs.namespace, attrs.name)
                and family_of(ip) == family
                and ip not in held
            ):
                return ip
        return None

    async def release(self, ip: str, namespace: str, name: str) -> None:
        """Delete ``ip``'s IPAddress if it still points at this Service."""
        try:
            current = self._addresses.get("", ip).object
        except errors.StatusError:
            return
        ref = (current.get("spec") or {}).get("parentRef") or {}
        if (ref.get("resource"), ref.get("namespace"), ref.get("name")) != (
            "services",
            namespace,
            name,
        ):
            return
        await errors.tolerating(self._addresses.delete("", ip), 404)

    async def service_deleted(self, service: Obj) -> None:
        """``Store.after_delete`` of Services: its addresses are free."""
        meta = service.get("metadata") or {}
        for ip in cluster_ips(service):
            await self.release(ip, meta.get("namespace", ""), meta.get("name", ""))

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        return None


def _invalid(attrs: Attributes, value: list[str], detail: str) -> errors.StatusError:
    return errors.invalid(
        "Service", "", attrs.name, [field.invalid("spec.clusterIPs", value, detail)]
    )


def _full(attrs: Attributes) -> errors.StatusError:
    return errors.internal_error(
        f"failed to allocate a serviceIP for Service {go_quote(attrs.name)}: range is full"
    )
