"""The API server as a Twisted service: builds the parts, listens, shuts down gracefully."""

from __future__ import annotations

import functools
import gc
import os
import time
from typing import Any

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet import reactor as global_reactor
from twisted.internet.defer import maybeDeferred, succeed
from twisted.internet.interfaces import IListeningPort
from twisted.internet.task import LoopingCall, deferLater
from twisted.logger import Logger
from twisted.protocols.tls import TLSMemoryBIOFactory

from platform_api.aggregator.registration import ensure_apiservices
from platform_api.apiextensions import crd as crds
from platform_api.apiextensions.resource import CustomResourceStrategy
from platform_api.apiextensions.serving import CRDInstaller
from platform_api.apiextensions.webhookconversion import REVIEW_GROUP
from platform_api.apiserver import (
    authn,
    authz,
    defaultobjects,
    enablement,
    flowcontrol,
    healthchecks,
    loopback,
    loopbackstore,
    pki,
    serviceaccounts,
)
from platform_api.apiserver.admission import build_admission
from platform_api.apiserver.aggregation import build_aggregation
from platform_api.apiserver.audit import options as audit_options
from platform_api.apiserver.browserheaders import BrowserHeaders
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.controllers import authentication_trust, build_controllers
from platform_api.apiserver.discovery import Discovery
from platform_api.apiserver.duties import LeaderDuties, trim_history
from platform_api.apiserver.eagerwrite import listen_eager
from platform_api.apiserver.encryption import build_encryption, encryption_checks
from platform_api.apiserver.features import (
    ALLOW_UNSAFE_MALFORMED_OBJECT_DELETION,
    API_RESPONSE_COMPRESSION,
    CBOR_SERVING_AND_STORAGE,
    CONSTRAINED_IMPERSONATION,
    WATCH_LIST,
)
from platform_api.apiserver.health import HealthCheck, HealthEndpoint
from platform_api.apiserver.hiddenmetrics import show_hidden, watch_database
from platform_api.apiserver.identity import server_id
from platform_api.apiserver.leadership import (
    LEASE_NAME,
    SERVER_LEASE_NAME,
    FlockLeadership,
    Leadership,
    LeaseLeadership,
)
from platform_api.apiserver.metricsinstall import install as install_metrics
from platform_api.apiserver.openapi import OpenAPI
from platform_api.apiserver.presence import Presence
from platform_api.apiserver.processlock import ProcessLock
from platform_api.apiserver.signals import (
    exit_on_second_signal,
    ignore_repeated_signals,
    stop_reactor,
)
from platform_api.apiserver.site import APIServer, Filters
from platform_api.apiserver.storagebackend import open_backend
from platform_api.apiserver.storageoptions import ETCD3
from platform_api.apiserver.tls import serving_options_for
from platform_api.apiserver.webrequest import APIRequest, APISite
from platform_api.apiserver.workermetrics import MetricsExchange
from platform_api.apiserver.workerslot import WakeSiblings, WorkerSlot, WorkerStates
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.authorization.interface import Authorizer
from platform_api.authorization.node import NodeAuthorizer
from platform_api.authorization.nodegraph import NodeGraph
from platform_api.authorization.rbac.authorizer import RBACAuthorizer
from platform_api.authorization.rbac.index import RuleIndex
from platform_api.controllers.authtrust import AuthenticationTrust
from platform_api.controllers.base import Controller
from platform_api.endpoints.scope import Handlers
from platform_api.endpoints.tables import TableConvertor
from platform_api.endpoints.watch import WatchStream
from platform_api.privatefiles import private_dir
from platform_api.registry import capabilities
from platform_api.registry.apiregistration import STORE_KEY as APISERVICES
from platform_api.registry.capabilities import Capabilities
from platform_api.registry.policyparams import guard_param_access
from platform_api.registry.rbacescalation import BINDINGS, ROLES, EscalationGuard
from platform_api.registry.rbacescalation import GROUP as RBAC_GROUP
from platform_api.registry.serviceresolver import ServiceResolver
from platform_api.registry.store import Store
from platform_api.registry.strategy import GenericStrategy
from platform_api.scheme.aliases import Aliases
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import ResourceType, outbound_group
from platform_api.storage.interface import UNREACHABLE, Event, Storage, StorageError
from platform_api.storage.watch import WatchHub

log = Logger()
SYSTEM_USER = UserInfo("system:apiserver", groups=(MASTERS,))


class APIServerService(Service):
    name = "platform-apiserver"
    rbac_bootstrapped = False  # the default roles and bindings are reconciled
    auditor: Any = None  # --audit-policy-file with a backend: flushed at stop
    tracing: Any = None  # --tracing-config-file: spans exported, flushed at stop

    def __init__(
        self,
        config: ServerConfig,
        reactor: Any = None,
        *,
        freeze_heap: bool = False,
        slot: WorkerSlot | None = None,
    ) -> None:
        # Any: the reactor provides several interfaces (time, threads, TCP) at once.
        self.config = config
        self.reactor = reactor or global_reactor
        self.port: IListeningPort | None = None
        self.started_at = time.monotonic()
        self.bootstrapped = False
        self.freeze_heap = freeze_heap
        self.shutting_down = False
        self._loops: list[LoopingCall] = []
        self.duties: LeaderDuties | None = None  # once bootstrapped
        self.authentication_trust: AuthenticationTrust | None = None  # once bootstrapped
        self.presence: Presence | None = None  # once bootstrapped, in one worker
        self.authorizer: Authorizer | None = None  # once assembled (handlers' and admission's)
        self.slot = slot  # one of --workers N
        self.service_accounts: serviceaccounts.ServiceAccounts | None = None  # once built
        self.siblings: WakeSiblings | None = None  # the other workers' wake sockets
        self.loopback_token = loopback.loopback_token()
        run_dir = os.path.join(config.data_dir, "run")
        private_dir(config.data_dir, ours=False)
        private_dir(run_dir)
        # The processes sharing the data directory bootstrap in turn, and one of them at a
        # time (the holder of the leader lock) runs the controllers and the compactor.
        self.bootstrap_lock = ProcessLock(os.path.join(run_dir, "bootstrap.lock"), self.reactor)
        leader_lock = ProcessLock(os.path.join(run_dir, "leader.lock"), self.reactor, 1.0)
        self.leadership: Leadership = FlockLeadership(leader_lock)

    # -- assembly ----------------------------------------------------------------------

    def _open_storage(self) -> None:
        cfg = self.config
        reactor: Any = self.reactor
        self.encryption = build_encryption(cfg, reactor)  # --encryption-provider-config
        try:
            self.backend = open_backend(cfg, reactor, self.encryption)
        except StorageError as e:
            if e.code != UNREACHABLE:
                raise
            # kube-apiserver's end when its storage never answered: one line, exit 1.
            log.critical("command failed: the storage did not answer: {error}", error=str(e))
            raise SystemExit(1) from None
        self.storage = self.backend.storage
        self.hub = WatchHub(self.storage, self.reactor)
        self.storage.on_commit = self.hub.committed
        if self.slot is not None:
            siblings = self.siblings = WakeSiblings(self.slot, self.hub.catch_up, reactor)
            slot = self.slot
            self.metrics_exchange = MetricsExchange(
                slot.index, slot.count, cfg.data_dir, reactor, siblings.send
            )
            siblings.on_message = self.metrics_exchange.received
            siblings.listen()
            self._loops.append(self.slot.follow_supervisor(reactor))
            if self.backend.wake_siblings and not self.backend.hear_siblings(siblings.heard):

                def committed(events: list[Event]) -> None:
                    self.hub.committed(events)
                    siblings.notify()

                self.storage.on_commit = committed

    def _shares_change_log(self) -> bool:
        """Workers on LMDB learn of each other's commits from the shared change log (a
        wake, a poll, a look before each request); etcd replicas from their own watch."""
        return self.slot is not None and self.backend.wake_siblings

    def _custom_resource_store(
        self, rt: ResourceType, storage: Storage, strategy: CustomResourceStrategy
    ) -> Store:
        store = Store(rt, storage, strategy)
        store.garbage_collection = self.config.enable_garbage_collector
        return store

    def _end_watches(self, prefix: bytes) -> None:
        """End the watches of custom resources whose types were removed or rebuilt."""
        for subscriber in self.hub.subscribers_under(prefix):
            if isinstance(subscriber, WatchStream):
                subscriber.finish_cleanly()

    def _authorizer(self) -> Authorizer:
        authorizer = authz.build(
            self.config,
            self.reactor,
            rbac=getattr(self, "rbac_authorizer", None),
            node=getattr(self, "node_authorizer", None),
        )
        if isinstance(authorizer, authz.ReloadingAuthorizer):
            self._loops.append(authorizer.start())  # stopped with the other timers
        return authorizer

    def _health(self) -> dict[str, HealthEndpoint]:
        storage = HealthCheck(self.backend.check_name, self.backend.check)
        workers = []
        if self.slot is not None:
            workers = WorkerStates(self.config.data_dir, self.slot.count).health_checks()
        with open(self.serving_cert_file, "rb") as f:
            loopback_check = healthchecks.loopback_certificate(f.read())
        return healthchecks.endpoints(
            self, storage, encryption_checks(self.encryption), workers, loopback_check
        )

    def build(self) -> tuple[APIServer, str, str, str]:
        """Everything but the listener; returns the server and its TLS files."""
        cfg = self.config
        capabilities.setup(Capabilities(allow_privileged=cfg.allow_privileged))
        self._open_storage()
        cert, key, client_ca = self._tls_files()
        self.client_ca_file = client_ca
        # --runtime-config: the scheme serves the enabled versions only.
        scheme, self.stores = enablement.build(
            cfg.runtime_config, enablement.gate_check(cfg.feature_gates), self.storage
        )
        for store in self.stores.values():
            store.garbage_collection = cfg.enable_garbage_collector
        if cfg.storage.backend == ETCD3:  # replicas on many machines: a Lease decides
            # The manager's Lease only when this server runs the manager's controllers.
            name = LEASE_NAME if cfg.controllers else SERVER_LEASE_NAME
            self.leadership = LeaseLeadership(self.stores, self.reactor, name)
        aliases = Aliases(scheme, cfg.serve_upstream_groups)
        for store in self.stores.values():
            if isinstance(store.strategy, GenericStrategy):
                store.strategy.aliases = aliases
            connect = getattr(store.strategy, "connect", None)
            if connect is not None:  # strategies that read other objects or authorize parts
                connect(self.stores, lambda: self.authorizer)
        self._authorization_indexes(scheme, aliases)
        self._report_configuration()
        self.admission = build_admission(
            cfg,
            self.storage,
            self.hub,
            scheme,
            self.stores,
            self.reactor,
            lambda: self.authorizer,
            (self.slot.index, self.slot.count) if self.slot is not None else (0, 1),
        )
        handlers = self._handlers(scheme, aliases, client_ca)
        self.serving_cert_file = cert
        server = APIServer(
            self._filters(handlers),
            handlers,
            Discovery(
                scheme,
                lambda: cfg.server_url.split("//", 1)[1],
                aliases,
                self.aggregation.remote if self.aggregation else None,
                self.aggregation.discovery if self.aggregation else None,
            ),
            OpenAPI(scheme, aliases, self.reactor),
            self._health(),
        )
        return server, cert, key, client_ca

    def _handlers(self, scheme: Scheme, aliases: Aliases, client_ca: str) -> Handlers:
        """What every request handler shares: storage, admission, the custom resources'
        types, service account tokens, and the authenticator and authorizer."""
        cfg = self.config
        handlers = Handlers(
            aliases=aliases,
            cbor=cfg.feature_gates.enabled(CBOR_SERVING_AND_STORAGE),
            watch_list=cfg.feature_gates.enabled(WATCH_LIST),
            compression=cfg.feature_gates.enabled(API_RESPONSE_COMPRESSION),
            unsafe_delete=cfg.feature_gates.enabled(ALLOW_UNSAFE_MALFORMED_OBJECT_DELETION),
            min_request_timeout=float(cfg.min_request_timeout),
            scheme=scheme,
            storage=self.storage,
            stores=self.stores,
            admission=self.admission,
            tables=TableConvertor(scheme.schemas),
            hub=self.hub,
            reactor=self.reactor,
            storage_prefix=cfg.storage.etcd_prefix,
        )
        for store in self.stores.values():  # the server's own writes record their owner
            store.field_manager = functools.partial(handlers.field_manager, store.resource)
        self._serve_custom_resources(scheme, handlers)
        handlers.service_accounts = serviceaccounts.build(cfg, self.stores, self.reactor)
        self.service_accounts = handlers.service_accounts
        self.service_account_key = handlers.service_accounts.signing
        handlers.authorizer = self.authorizer = self._authorizer()
        for plural in (*ROLES, *BINDINGS):
            store = self.stores[(RBAC_GROUP, "v1", plural)]
            store.guard = EscalationGuard(self.rbac_index, handlers.authorizer, plural)
        guard_param_access(self.stores, scheme.by_kind, handlers.authorizer)
        handlers.authenticator = authn.build(
            cfg,
            client_ca,
            self.stores,
            handlers.service_accounts.verifier,
            self.reactor,
            loopback.authenticator(self.loopback_token),
            handlers.service_accounts.legacy,
        )
        return handlers

    def _tls_files(self) -> tuple[str, str, str]:
        """Serving certificate, key and client CA: given, or our own PKI's."""
        cfg = self.config
        cert, key, client_ca = cfg.tls_cert_file, cfg.tls_private_key_file, cfg.client_ca_file
        self.pki_paths: pki.Paths | None = None
        if cfg.embedded_pki:
            paths = pki.ensure_pki(cfg.cert_dir, cfg.bind_address)
            cert, key = paths.serving_cert, paths.serving_key
            client_ca = client_ca or paths.ca_cert
            self.pki_paths = paths
        return cert, key, client_ca

    def _authorization_indexes(self, scheme: Scheme, aliases: Aliases) -> None:
        """The RBAC rule index (always: escalation prevention reads it) and the node graph;
        before _authorizer(), which picks up their authorizers."""
        modes = self.config.authorization_modes
        self.rbac_index = RuleIndex(self.storage, self.hub, aliases.canonical_groups)
        if "RBAC" in modes:
            self.rbac_authorizer = RBACAuthorizer(self.rbac_index)
        self.node_graph: NodeGraph | None = None
        if "Node" in modes:
            attachments = scheme.lookup("storage.platform.io", "v1", "volumeattachments")
            slices = scheme.lookup("resource.platform.io", "v1", "resourceslices")
            self.node_graph = NodeGraph(
                self.storage, self.hub, attachments is not None, slices is not None
            )
            upstream = self.config.serve_upstream_groups
            self.node_authorizer = NodeAuthorizer(self.node_graph, upstream)

    def _report_configuration(self) -> None:
        """Feature gate warnings and gauges, hidden metrics, the database size metric."""
        cfg = self.config
        for name in cfg.feature_gates.unrecognized:
            log.warn("unrecognized feature gate: {name}", name=name)
        for line in cfg.feature_gates.warnings:
            log.info("{line}", line=line)
        cfg.feature_gates.record_metrics()
        show_hidden(cfg.show_hidden_metrics_for_version)
        for endpoint, size in self.backend.database_sizes():
            watch_database(endpoint, size)

    def _serve_custom_resources(self, scheme: Scheme, handlers: Handlers) -> None:
        """The stored CRDs' types are served from the first request on."""
        equivalence = self.admission.equivalence
        self.crd_store = self.stores[(crds.GROUP, "v1", "customresourcedefinitions")]
        self.crd_installer = CRDInstaller(
            self.crd_store,
            scheme,
            self.stores,
            handlers.tables,
            make_store=self._custom_resource_store,
            on_removed=self._end_watches,
            resolver=ServiceResolver(
                self.stores[("", "v1", "services")], self.stores[("", "v1", "endpoints")]
            ),
            reactor=self.reactor,
            converters=equivalence.converters if equivalence else None,
            review_group=outbound_group(REVIEW_GROUP, self.config.serve_upstream_groups),
        )
        self.crd_installer.start()
        self.hub.subscribe(self.crd_installer)
        self.aggregation = build_aggregation(self.config, self.stores, self.reactor)
        if self.aggregation is not None:
            self._loops.append(self.aggregation.start(self.hub))

    def _filters(self, handlers: Handlers) -> Filters:
        """The filter chain's parts, instrumented for metrics and audited."""
        cfg = self.config
        assert handlers.authenticator is not None and handlers.authorizer is not None
        self.auditor = audit_options.build(cfg.audit, self.reactor, cfg.serve_upstream_groups)
        filters = Filters(
            authenticator=handlers.authenticator,
            authorizer=handlers.authorizer,
            inflight=flowcontrol.limiter(
                cfg, self.stores, self.storage, self.hub, self.reactor, self._loops
            ),
            request_timeout=cfg.request_timeout,
            reactor=self.reactor,
            remote_apiservices=self.aggregation.remote if self.aggregation else None,
            aggregator_proxy=self.aggregation.proxy if self.aggregation else None,
            browser=BrowserHeaders.of(
                cfg.strict_transport_security_directives, cfg.cors_allowed_origins
            ),
        )
        if self._shares_change_log():
            filters.catch_up = self.hub.catch_up
        if self.slot is not None:
            filters.gather_metrics = self.metrics_exchange.gather
            filters.reset_metrics = self.metrics_exchange.reset_siblings
        install_metrics(
            filters, self.storage, self.stores.values(), self.backend.storage_size, self.hub
        )
        audit_options.install(filters, self.auditor)
        if cfg.tracing is not None:  # the SDK is imported only when asked for
            from platform_api.apiserver.tracing import Tracing  # noqa: PLC0415

            self.tracing = filters.tracing = Tracing(
                cfg.tracing,
                server_id(),
                self.reactor,
                constrained_impersonation=cfg.feature_gates.enabled(CONSTRAINED_IMPERSONATION),
                fairness=cfg.enable_priority_and_fairness,
            )
        return filters

    # -- lifetime -----------------------------------------------------------------------

    def startService(self) -> None:
        super().startService()
        if self.slot is None:
            exit_on_second_signal(self.reactor)
        else:
            ignore_repeated_signals(self.reactor)
        cfg = self.config
        server, cert, key, client_ca = self.build()
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
        self.hub.start(shared=self._shares_change_log())
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
