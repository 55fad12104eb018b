"""What the kubernetes-service tests share: real stores over a temporary LMDB, a clock,
and readers of the Endpoints and EndpointSlice the reconcilers write."""

from __future__ import annotations

from typing import Any

from twisted.internet.task import Clock

from platform_api import errors
from platform_api.apiserver.endpointreconcilers import LeaseReconciler
from platform_api.apiserver.endpointsadapter import EndpointsAdapter
from platform_api.apiserver.masterleases import MasterLeases
from tests.admission.plugin_kit import Cluster

Obj = dict[str, Any]
PORTS = [{"name": "https", "port": 6443, "protocol": "TCP"}]


class Servers:
    """Several API servers' reconcilers over one storage and one clock."""

    def __init__(self, path: str) -> None:
        self.cluster = Cluster(path)
        self.clock = Clock()
        self.clock.advance(1_800_000_000)
        self.adapter = EndpointsAdapter(
            self.cluster.store("endpoints"),
            self.cluster.store("endpointslices", "discovery.platform.io"),
        )

    def leases(self) -> MasterLeases:
        return MasterLeases(self.cluster.storage, self.clock)

    def lease_reconciler(self) -> LeaseReconciler:
        return LeaseReconciler(self.adapter, self.leases())

    def endpoints(self) -> Obj | None:
        return self.adapter.get("kubernetes")

    def slice(self) -> Obj | None:
        try:
            found: Obj = self.adapter.slices.get("default", "kubernetes").object
        except errors.StatusError:
            return None
        return found

    def ips(self) -> list[str]:
        endpoints = self.endpoints() or {}
        subsets = endpoints.get("subsets") or [{}]
        return [a["ip"] for a in subsets[0].get("addresses") or []]

    def slice_ips(self) -> list[str]:
        return [e["addresses"][0] for e in (self.slice() or {}).get("endpoints") or []]
