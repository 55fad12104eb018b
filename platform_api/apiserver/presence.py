"""What each API server runs itself, not only the leader: it makes itself known.

Its address in the ``kubernetes`` Service's Endpoints (kubernetesservice.py) and its
identity Lease (identitylease.py), with the Lease collector every server runs; and kube's
system-namespaces controller, which makes the system namespaces again within a minute of
their deletion (the node-lease one may be deleted).  With ``--workers N``, one worker per
server does it: the others share its address and host.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall

from platform_api.apiserver import identitylease
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.defaultobjects import ensure_namespaces
from platform_api.apiserver.healthchecks import API_SERVER_IDENTITY
from platform_api.apiserver.kubernetesservice import KubernetesService, build_reconciler
from platform_api.apiserver.periodic import every
from platform_api.apiserver.periodic import stop as stop_loop
from platform_api.registry.store import Store
from platform_api.scheme.namespaces import SYSTEM
from platform_api.storage.interface import Storage

LEASES = ("coordination.platform.io", "v1", "leases")
NAMESPACES = ("", "v1", "namespaces")
NAMESPACES_INTERVAL = 60.0  # kube's system-namespaces controller: every minute
PEER_PROXY = "UnknownVersionInteroperabilityProxy"  # the gate of the peer address


class Presence:
    def __init__(
        self,
        cfg: ServerConfig,
        stores: dict[tuple[str, str, str], Store],
        storage: Storage,
        reactor: IReactorTime,
    ) -> None:
        reconciler = build_reconciler(cfg, stores, storage, reactor)
        self.kubernetes_service = KubernetesService(cfg, stores, reconciler, reactor)
        self.identity: tuple[Any, ...] = ()
        self.reactor = reactor
        self._namespaces = stores[NAMESPACES]
        self._upstream = cfg.serve_upstream_groups
        self.namespaces: LoopingCall | None = None
        gates = cfg.feature_gates
        if gates.enabled(API_SERVER_IDENTITY):
            self.identity = identitylease.for_server(
                stores[LEASES],
                SYSTEM,
                self.kubernetes_service.ip,
                cfg.secure_port,
                gates.enabled(PEER_PROXY),
                reactor,
            )

    async def start(self) -> None:
        await self.kubernetes_service.start()
        for part in self.identity:
            part.start()
        self.namespaces = every(  # made at bootstrap: the first check is a minute on
            self.reactor,
            NAMESPACES_INTERVAL,
            lambda: ensure_namespaces(self._namespaces, self._upstream),
            "system namespaces",
            now=False,
        )

    async def stop(self) -> None:
        """The identity Lease stays (it lapses in an hour, as kube's); the address goes
        at once."""
        for part in self.identity:
            part.stop()
        stop_loop(self.namespaces)
        await self.kubernetes_service.stop()
