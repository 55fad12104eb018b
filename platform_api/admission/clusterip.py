"""Service cluster IPs from ``--service-cluster-ip-range`` (kube's service IP allocator).

A free address is picked at random, as kube picks, from those no stored Service has
and none handed out to a Service not stored yet (``allocation.Holds``), so concurrent
creates never get the same one. The first address of the range is the ``kubernetes``
service's, as in kube, and skipped.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from platform_api import errors
from platform_api.admission.allocation import Holds, Owner, Share, pick_free
from platform_api.admission.chain import Attributes
from platform_api.storage.interface import ListOptions, Storage
from platform_api.validation import field
from platform_api.validation.ips import INVALID_IP

ALLOCATED = "provided IP is already allocated"
HOLD = 30.0  # seconds a handed-out address waits for its Service to be stored


class ClusterIPAllocation:
    name = "ServiceClusterIPAllocation"

    def __init__(
        self, storage: Storage, services_prefix: bytes, cidr: str, share: Share = (0, 1)
    ) -> None:
        self._share = share
        self._storage = storage
        self._prefix = services_prefix
        self._network = ipaddress.ip_network(cidr.split(",", 1)[0].strip(), strict=False)
        self._holds = Holds(HOLD)

    def _in_use(self, me: Owner) -> set[str]:
        used: set[str] = set()
        stored: set[Owner] = set()
        for item in self._storage.get_list(self._prefix, ListOptions()).items:
            meta = item.object.get("metadata", {})
            stored.add((meta.get("namespace", ""), meta.get("name", "")))
            used.update(item.object.get("spec", {}).get("clusterIPs") or [])
        return used | {ip for ip in self._holds.pending(me, stored) if isinstance(ip, str)}

    def admit(
        self, attrs: Attributes, obj: dict[str, Any] | None, old: dict[str, Any] | None
    ) -> None:
        rt = attrs.resource
        if rt.group or rt.plural != "services":
            return
        me = (attrs.namespace, attrs.name)
        if attrs.operation == "DELETE" and not attrs.dry_run:
            self._holds.release(me)  # its address is free once it is gone
        if attrs.operation != "CREATE" or obj is None:
            return
        spec = obj.setdefault("spec", {})
        if spec.get("type") == "ExternalName" or spec.get("clusterIP") == "None":
            if spec.get("clusterIP") == "None":
                spec["clusterIPs"] = ["None"]
            return
        used = self._in_use(me)
        wanted = spec.get("clusterIP")
        if wanted:
            self._check(attrs, wanted, used)
            ip = wanted
        else:
            ip = self._next_free(used)
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]
        spec.setdefault("ipFamilies", ["IPv6" if self._network.version == 6 else "IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        if not attrs.dry_run:
            self._holds.hold([ip], me)

    def _check(self, attrs: Attributes, wanted: str, used: set[str]) -> None:
        try:
            address = ipaddress.ip_address(wanted)
        except ValueError:  # kube's validation, before its allocator, names the item
            error = field.invalid("spec.clusterIPs[0]", wanted, INVALID_IP)
            raise errors.invalid("Service", "", attrs.name, [error]) from None
        if address not in self._network:
            detail = (
                f"failed to allocate IP {wanted}: the provided IP ({wanted}) is not in the valid "
                f"range. The range of valid IPs is {self._network}"
            )
            raise self._invalid(attrs, wanted, detail)
        if wanted in used:
            raise self._invalid(attrs, wanted, f"failed to allocate IP {wanted}: {ALLOCATED}")

    @staticmethod
    def _invalid(attrs: Attributes, value: str, detail: str) -> errors.StatusError:
        return errors.invalid(
            "Service", "", attrs.name, [field.invalid("spec.clusterIPs", [value], detail)]
        )

    def _next_free(self, used: set[str]) -> str:
        # Host addresses after the network's first, which is the kubernetes service's.
        first = int(self._network.network_address) + 2
        size = self._network.num_addresses - 2 - (1 if self._network.version == 4 else 0)

        def taken(offset: int) -> bool:
            return str(ipaddress.ip_address(first + offset)) in used

        offset = pick_free(size, taken, self._share)
        if offset is None:
            raise errors.internal_error(
                f"failed to allocate a serviceIP: range is full ({self._network})"
            )
        return str(ipaddress.ip_address(first + offset))

    def validate(
        self, attrs: Attributes, obj: dict[str, Any] | None, old: dict[str, Any] | None
    ) -> None:
        return None
