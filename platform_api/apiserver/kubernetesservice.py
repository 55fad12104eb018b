"""kube-apiserver's kubernetes-service controller: the ``default/kubernetes`` Service and
the Endpoints and EndpointSlice that point in-cluster clients at the API servers.

Every API server runs it (in one worker process of each server), not one leader:
each keeps its own address in the Endpoints.  Every ``interval`` (kube's 10 s) it
creates the Service if it is gone and reconciles the Endpoints through the chosen
reconciler (endpointreconcilers.py).  At start it first takes out a record a previous
run left behind (a crash); at stop, before the shutdown delay, it takes its address out
so clients stop being sent here while the server drains.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.internet.error import TimeoutError as DeferredTimeout
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.defaultobjects import ensure_kubernetes_service
from platform_api.apiserver.endpointoptions import LEASE, MASTER_COUNT, advertised_address
from platform_api.apiserver.endpointreconcilers import (
    EndpointReconciler,
    LeaseReconciler,
    MasterCountReconciler,
)
from platform_api.apiserver.endpointsadapter import EndpointsAdapter
from platform_api.apiserver.masterleases import MasterLeases
from platform_api.apiserver.periodic import every
from platform_api.apiserver.periodic import stop as stop_loop
from platform_api.registry.store import Store
from platform_api.storage.interface import Storage

log = Logger()
SERVICE = "kubernetes"
INTERVAL = 10.0  # kube's EndpointInterval
Stores = dict[tuple[str, str, str], Store]


def endpoint_ports(port: int) -> list[dict[str, Any]]:
    return [{"name": "https", "port": port, "protocol": "TCP"}]


def build_reconciler(
    cfg: ServerConfig, stores: Stores, storage: Storage, clock: IReactorTime
) -> EndpointReconciler | None:
    """The ``--endpoint-reconciler-type`` reconciler; None for ``none``."""
    adapter = EndpointsAdapter(
        stores[("", "v1", "endpoints")], stores[("discovery.platform.io", "v1", "endpointslices")]
    )
    if cfg.endpoints.reconciler == LEASE:
        return LeaseReconciler(adapter, MasterLeases(storage, clock))
    if cfg.endpoints.reconciler == MASTER_COUNT:
        return MasterCountReconciler(adapter, cfg.endpoints.apiserver_count)
    return None


class KubernetesService:
    def __init__(
        self,
        cfg: ServerConfig,
        stores: Stores,
        reconciler: EndpointReconciler | None,
        reactor: IReactorTime,
        interval: float = INTERVAL,
    ) -> None:
        self.cfg = cfg
        self.stores = stores
        self.reactor = reactor
        self.interval = interval
        self.ip = advertised_address(cfg.endpoints, cfg.bind_address)
        self.reconciler = reconciler if self.ip else None
        if reconciler is not None and not self.ip:
            log.error(
                "Unable to find suitable network address: set --advertise-address; the "
                "kubernetes Service gets no Endpoints"
            )
        self._loop: LoopingCall | None = None
        self._pass: Deferred[None] | None = None  # the pass under way, awaited by stop

    @property
    def ports(self) -> list[dict[str, Any]]:
        return endpoint_ports(self.cfg.secure_port)

    async def start(self) -> None:
        """Take out what a previous run left (kube logs it as stale), then reconcile now
        and every ``interval``."""
        if self.reconciler is not None and self.ip:
            try:
                if await self.reconciler.remove(SERVICE, self.ip, self.ports):
                    log.error(
                        "Found stale data, removed previous endpoints on kubernetes service, "
                        "apiserver didn't exit successfully previously"
                    )
            except Exception as e:
                log.info("Removing old endpoints from kubernetes service: {error}", error=e)
        self._loop = every(self.reactor, self.interval, self._next_pass, "kubernetes service")

    def _next_pass(self) -> Deferred[None]:
        self._pass = ensureDeferred(self.sync())
        return self._pass

    async def sync(self) -> None:
        """One pass: the Service exists, the Endpoints list this server (errors logged)."""
        cfg = self.cfg
        try:
            services = self.stores[("", "v1", "services")]
            addresses = self.stores[("networking.platform.io", "v1", "ipaddresses")]
            await ensure_kubernetes_service(
                services,
                addresses,
                cfg.service_cluster_ip_range,
                cfg.secure_port,
                cfg.kubernetes_service_node_port,
            )
            if self.reconciler is not None and self.ip:
                await self.reconciler.reconcile(SERVICE, self.ip, self.ports, False)
        except Exception as e:
            log.error("unable to sync kubernetes service: {error}", error=e)

    async def stop(self) -> None:
        """Stop reconciling and take this server's address out, waiting at most two
        intervals, as kube does."""
        stop_loop(self._loop)
        if self.reconciler is None or not self.ip:
            return
        self.reconciler.stop_reconciling()
        if self._pass is not None and not self._pass.called:
            await self._pass  # its lease renewal must not land after the removal
        log.info("Shutting down kubernetes service endpoint reconciler")
        removal: Deferred[bool] = ensureDeferred(
            self.reconciler.remove(SERVICE, self.ip, self.ports)
        )
        removal.addTimeout(2 * self.interval, self.reactor)
        try:
            await removal
        except DeferredTimeout:
            log.warn("RemoveEndpoints() timed out")
        except Exception as e:
            log.error("Unable to remove endpoints from kubernetes service: {error}", error=e)
