"""The controller manager process: leader election, then the controllers on a remote cluster.

As kube-controller-manager: /healthz is served at once; with ``--leader-elect`` the
process waits for the Lease, then discovers the cluster, fills its informers and starts
the selected controllers; losing the Lease ends the process (exit status 1), so a
restarted manager starts clean instead of racing the new leader.
"""

from __future__ import annotations

import os
import platform as host
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from twisted.application.service import Service
from twisted.internet.defer import ensureDeferred
from twisted.logger import Logger

from platform_api.client import kubeconfig
from platform_api.client.rest import Resource, RESTClient
from platform_api.controllermanager import health
from platform_api.controllermanager.tap import ManagerConfig
from platform_api.controllers import registry
from platform_api.controllers.base import Controller
from platform_api.controllers.leaderelection import LeaderElector, identity
from platform_api.controllers.remote import RemoteCluster
from platform_api.timers import timer_clock

log = Logger()
VERSION = "v1.36.0"
REVIEWS = Resource("authorization.platform.io", "v1", "subjectaccessreviews", namespaced=False)


def _exit(code: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class ControllerManagerService(Service):
    def __init__(
        self, config: ManagerConfig, reactor: Any = None, exit: Callable[[int], None] = _exit
    ) -> None:
        if reactor is None:
            from twisted.internet import reactor as default  # noqa: PLC0415

            reactor = default
        self.config = config
        self.reactor = reactor
        self.exit = exit
        self.identity = identity()
        self.cluster: RemoteCluster | None = None
        self.controllers: list[Controller] = []
        self.elector: LeaderElector | None = None
        self.port: Any = None

    def startService(self) -> None:
        super().startService()
        d = ensureDeferred(self._start())
        d.addErrback(self._fatal)

    def _fatal(self, failure: Any) -> None:
        log.failure("controller manager", failure)
        self.exit(1)

    async def _start(self) -> None:
        cfg = self.config
        log.info('"Starting" version="{version}"', version=VERSION)
        log.info(
            '"Golang settings" GOGC="" GOMAXPROCS="" GOTRACEBACK="" python="{py}"',
            py=host.python_version(),
        )
        connection = kubeconfig.load(cfg.kubeconfig) if cfg.kubeconfig else None
        if connection is None:
            connection = kubeconfig.Connection(server=cfg.master)
        elif cfg.master:
            connection = replace(connection, server=cfg.master)
        self.client = RESTClient(connection, self.reactor)
        self.root_ca = cfg.root_ca or connection.ca_pem
        if cfg.secure_port:
            app = health.health_app({"leaderElection": self._healthy})
            self.port = await health.listen(self.reactor, cfg.secure_port, cfg.bind_address, app)
            where = (
                f"[::]:{cfg.secure_port}"
                if cfg.bind_address in ("0.0.0.0", "::")
                else (f"{cfg.bind_address}:{cfg.secure_port}")
            )
            log.info("Serving securely on {where}", where=where)
        if not cfg.leader_elect:
            self._lead()
            return
        self.elector = LeaderElector(
            self.client,
            self.reactor,
            cfg.lock_namespace,
            cfg.lock_name,
            self.identity,
            on_started=self._lead,
            on_stopped=self._lost,
            lease_duration=cfg.lease_duration,
            renew_deadline=cfg.renew_deadline,
            retry_period=cfg.retry_period,
        )
        self.elector.start()

    def _healthy(self) -> bool:
        """kube's leaderElection check: a leader past its renew deadline is unhealthy."""
        e = self.elector
        if e is None or not e.leading:
            return True
        return timer_clock(self.reactor)() - e.last_renew < e.lease_duration + 20

    def _lead(self) -> None:
        d = ensureDeferred(self._run_controllers())
        d.addErrback(self._fatal)

    async def _run_controllers(self) -> None:
        self.cluster = RemoteCluster(self.client, self.reactor)
        await self.cluster.start()
        log.info("Informers synced: {count} resources", count=len(self.cluster.by_prefix))
        clusterroles = self.cluster.stores.get(
            ("rbac.authorization.platform.io", "v1", "clusterroles")
        )
        context = registry.ControllerContext(
            stores=self.cluster.stores,
            every=self.cluster.every,
            hub=self.cluster.hub,
            reactor=self.reactor,
            rbac_informer=clusterroles.informer if clusterroles is not None else None,
            root_ca=self.root_ca,
            upstream_names=self.cluster.upstream_names,
            signing=self.config.signing,
            review=self._review,
            service_account_key=self.config.service_account_key,
            extra={"client": self.client, "config": self.config},
        )
        for name in sorted(set(registry.REGISTRY) - self.config.controllers):
            log.info('"Warning: controller is disabled" controller="{name}"', name=name)
        self.controllers = registry.build(context, self.config.controllers)
        built = {c.name for c in self.controllers}
        for name in sorted(self.config.controllers - built):
            log.info(
                '"Skipping a controller" controller="{name}" reason="needs the API '
                "server's own state; it runs there\"",
                name=name,
            )
        for controller in self.controllers:
            log.info('"Starting controller" controller="{name}"', name=controller.name)
            controller.start()
        log.info('"Started controllers" count={count}', count=len(self.controllers))

    async def _review(self, spec: dict[str, Any]) -> bool:
        """A SubjectAccessReview, asked of the server (the approving controller's check)."""
        assert self.client is not None
        review = {
            "apiVersion": f"{REVIEWS.group}/{REVIEWS.version}",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        answer = await self.client.create(REVIEWS, "", review)
        return bool((answer.get("status") or {}).get("allowed"))

    def _lost(self) -> None:
        log.error("leaderelection lost/stopped")
        for controller in self.controllers:
            controller.stop()
        if self.cluster is not None:
            self.cluster.stop()
        self.exit(1)

    def stopService(self) -> Any:
        super().stopService()
        if self.elector is not None:
            self.elector.stop()
        for controller in self.controllers:
            controller.stop()
        if self.cluster is not None:
            self.cluster.stop()
        if self.port is not None:
            return self.port.stopListening()
        return None
