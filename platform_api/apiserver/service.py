"""The API server as a Twisted service: builds the parts, listens, shuts down gracefully."""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.defer import maybeDeferred, succeed
from twisted.internet.interfaces import IListeningPort
from twisted.internet.task import deferLater
from twisted.logger import Logger
from twisted.protocols.tls import TLSMemoryBIOFactory

from platform_api.aggregator.registration import ensure_apiservices
from platform_api.apiserver import defaultobjects, loopback, loopbackstore, pki
from platform_api.apiserver.assembly import ServerAssembly
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.controllers import authentication_trust, build_controllers
from platform_api.apiserver.duties import LeaderDuties, trim_history
from platform_api.apiserver.eagerwrite import listen_eager
from platform_api.apiserver.presence import Presence
from platform_api.apiserver.signals import (
    exit_on_second_signal,
    ignore_repeated_signals,
    stop_reactor,
)
from platform_api.apiserver.tls import serving_options_for
from platform_api.apiserver.webrequest import APIRequest, APISite
from platform_api.apiserver.workerslot import WorkerSlot
from platform_api.controllers.authtrust import AuthenticationTrust
from platform_api.controllers.base import Controller
from platform_api.registry.apiregistration import STORE_KEY as APISERVICES

log = Logger()


class APIServerService(ServerAssembly, Service):
    """Builds the parts (``ServerAssembly``), listens, bootstraps the default objects,
    runs the leader's duties, and shuts down gracefully."""

    name = "platform-apiserver"
    rbac_bootstrapped = False  # the default roles and bindings are reconciled

    def __init__(
        self,
        config: ServerConfig,
        reactor: Any = None,
        *,
        freeze_heap: bool = False,
        slot: WorkerSlot | None = None,
    ) -> None:
        self.started_at = time.monotonic()
        if reactor is None:
            # Looked up now, not at import: a forked worker installs its own reactor
            # after its supervisor imported this module (forkedworker.py).
            from twisted.internet import reactor  # noqa: PLC0415
        super().__init__(config, reactor, slot)
        self.port: IListeningPort | None = None
        self.bootstrapped = False
        self.freeze_heap = freeze_heap
        self.shutting_down = False
        self.duties: LeaderDuties | None = None  # once bootstrapped
        self.authentication_trust: AuthenticationTrust | None = None  # once bootstrapped
        self.presence: Presence | None = None  # once bootstrapped, in one worker

    def startService(self) -> None:
        super().startService()
        if self.slot is None:
            exit_on_second_signal(self.reactor)
        else:
            ignore_repeated_signals(self.reactor)
        cfg = self.config
        server, cert, key, client_ca = self.build(self)
        # The API takes no HTML form posts; checking every POST for one cost ~7% of CPU.
        site = APISite(
            server.resource(),
            http2=not cfg.disable_http2_serving,
            requestFactory=APIRequest,
            parsePOSTFormSubmission=False,
        )
        site.displayTracebacks = False
        tls = serving_options_for(cfg, cert, key, client_ca)
        self.backend.start()
        # Alone, every commit is this process's own; on etcd every commit, any replica's,
        # comes through this process's own etcd watch: neither polls a change log.
        self.hub.start(shared=self.shares_change_log())
        self.rbac_index.start()
        if self.node_graph is not None:
            self.node_graph.start()  # complete before the first request is served
        self.admission.start()
        if self.slot is not None:  # the supervisor's socket
            listening = succeed(
                self.slot.adopt(self.reactor, TLSMemoryBIOFactory(tls, False, site), cfg.data_dir)
            )
        else:
            listening = maybeDeferred(
                listen_eager,
                self.reactor,
                cfg.secure_port,
                TLSMemoryBIOFactory(tls, False, site),
                cfg.bind_address,
            )
        listening.addCallback(self._listening)
        listening.addCallbacks(self._start_bootstrap, self._failed)

    def _listening(self, port: IListeningPort) -> None:
        self.port = port
        cfg = self.config
        actual = port.getHost().port  # type: ignore[attr-defined]
        if actual != cfg.secure_port:
            cfg.secure_port = actual  # port 0: the kernel picked one
        log.info("Serving securely on {url}", url=f"https://{cfg.bind_address}:{actual}")
        if self.pki_paths is not None and not self.config.client_ca_file:
            pki.write_admin_kubeconfig(cfg.kubeconfig_path, cfg.server_url, self.pki_paths)
            path = os.path.abspath(cfg.kubeconfig_path)
            log.info("Admin kubeconfig: {path}", path=path)
            log.info("Try: kubectl --kubeconfig {path} get namespaces", path=path)

    def _failed(self, failure: Any) -> None:
        log.failure("could not listen on port {port}", failure, port=self.config.secure_port)
        stop_reactor(self.reactor)

    def _start_bootstrap(self, _: object) -> None:
        work = self.bootstrap_lock.acquire()
        work.addCallback(lambda _: defer.ensureDeferred(self._bootstrap()))
        work.addErrback(lambda f: log.failure("bootstrapping the default objects", f))
        work.addBoth(lambda _: self.bootstrap_lock.release())

    async def _bootstrap(self) -> None:
        reconciled = await defaultobjects.bootstrap(self.stores, self.config, self.reactor)
        if reconciled is None:
            return
        if APISERVICES in self.stores:
            await ensure_apiservices(self.stores[APISERVICES], self.crd_installer.scheme)
        await self._start_authentication_trust()
        self.rbac_bootstrapped = reconciled
        self.bootstrapped = True
        if self.freeze_heap:
            # In its own process, modules, schemas and the bootstrap objects live as long
            # as the process: keep them out of every later full collection.
            gc.freeze()
        seconds = time.monotonic() - self.started_at
        if self.slot is None:
            log.info("Ready: {seconds:.2f}s after start", seconds=seconds)
        else:  # the supervisor says Ready once every worker is
            log.info(
                "Worker {i} bootstrapped {seconds:.2f}s after start",
                i=self.slot.index,
                seconds=seconds,
            )
            self.slot.report_ready()
        window, per_process = self.config.history_window, self.backend.history_per_process
        if per_process:  # etcd: every replica trims its own watch cache
            self._loops.append(trim_history(self.storage, window, self.reactor))
        self.duties = LeaderDuties(
            self.storage, window, self._controllers, self.reactor, trims_history=not per_process
        )
        self.leadership.start(self.duties.start, self.duties.stop)
        if self.slot is None or self.slot.index == 0:  # one per server, not one per worker
            self.presence = Presence(self.config, self.stores, self.storage, self.reactor)
            await self.presence.start()

    async def _start_authentication_trust(self) -> None:
        """The extension-apiserver-authentication ConfigMap, written before ready."""
        trust = authentication_trust(
            self.config, self.client_ca_file, self.stores, self.hub, self.reactor
        )
        await trust.write_now()
        trust.start()
        self.authentication_trust = trust

    def _controllers(self) -> list[Controller]:
        cfg = self.config
        return build_controllers(
            self.config,
            self.stores,
            self.crd_store,
            self.crd_installer,
            self.rbac_index,
            self.hub,
            self.reactor,
            self.aggregation.proxy if self.aggregation else None,
            self.authorizer,
            loopbackstore.Loopback(
                loopback.connection(cfg.server_url, self.serving_cert_file, self.loopback_token),
                self.reactor,
            ),
            service_account_key=self.service_account_key,
        )

    async def _stop(self) -> None:
        self.shutting_down = True
        if self.presence is not None:  # out of the Endpoints before draining
            await self.presence.stop()
        if self.config.shutdown_delay > 0:
            log.info(
                "Shutting down in {delay}s (readyz now fails)", delay=self.config.shutdown_delay
            )
            await deferLater(self.reactor, self.config.shutdown_delay, lambda: None)
        if self.port is not None:
            stopped = self.port.stopListening()
            if stopped is not None:
                await stopped
        for loop in self._loops:
            if loop.running:
                loop.stop()
        if self.duties is not None:
            self.duties.stop()
        if self.authentication_trust is not None:
            self.authentication_trust.stop()
        await self.leadership.release()
        self.leadership.stop()
        self.bootstrap_lock.release()
        self.hub.unsubscribe(self.crd_installer)
        self.rbac_index.stop()
        self.admission.stop()
        if self.node_graph is not None:
            self.node_graph.stop()
        self.hub.stop()
        if self.siblings is not None:
            self.siblings.stop()
        self.backend.close()
        if self.service_accounts is not None:
            self.service_accounts.close()
        if self.auditor is not None:
            self.auditor.shutdown()
        if self.tracing is not None:  # the last spans exported
            await self.tracing.close()

    def stopService(self) -> Any:
        super().stopService()
        return defer.ensureDeferred(self._stop())
