"""The API server's parts put together: storage, stores, admission, authentication,
authorization, custom resources and the filter chain (``ServerAssembly``)."""

from __future__ import annotations

import functools
import os
from typing import Any

from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.apiextensions import crd as crds
from platform_api.apiextensions.resource import CustomResourceStrategy
from platform_api.apiextensions.serving import CRDInstaller
from platform_api.apiextensions.webhookconversion import REVIEW_GROUP
from platform_api.apiserver import (
    authn,
    authz,
    enablement,
    flagz,
    flowcontrol,
    healthchecks,
    loopback,
    pki,
    serviceaccounts,
)
from platform_api.apiserver.admission import build_admission
from platform_api.apiserver.aggregation import build_aggregation
from platform_api.apiserver.audit import options as audit_options
from platform_api.apiserver.browserheaders import BrowserHeaders
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.discovery import Discovery
from platform_api.apiserver.encryption import build_encryption, encryption_checks
from platform_api.apiserver.features import (
    ALLOW_UNSAFE_MALFORMED_OBJECT_DELETION,
    API_RESPONSE_COMPRESSION,
    CBOR_SERVING_AND_STORAGE,
    CLEARING_NOMINATED_NODE_NAME,
    CONSTRAINED_IMPERSONATION,
    POD_TOPOLOGY_LABELS_ADMISSION,
    WATCH_LIST,
)
from platform_api.apiserver.health import HealthCheck, HealthEndpoint
from platform_api.apiserver.healthchecks import ServerState
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
from platform_api.apiserver.processlock import ProcessLock
from platform_api.apiserver.site import APIServer, Filters
from platform_api.apiserver.storagebackend import open_backend
from platform_api.apiserver.storageoptions import ETCD3
from platform_api.apiserver.workermetrics import MetricsExchange
from platform_api.apiserver.workerslot import WakeSiblings, WorkerSlot, WorkerStates
from platform_api.authorization.interface import Authorizer
from platform_api.authorization.node import NodeAuthorizer
from platform_api.authorization.nodegraph import NodeGraph
from platform_api.authorization.rbac.authorizer import RBACAuthorizer
from platform_api.authorization.rbac.index import RuleIndex
from platform_api.endpoints.scope import Handlers
from platform_api.endpoints.tables import TableConvertor
from platform_api.endpoints.watch import WatchStream
from platform_api.privatefiles import private_dir
from platform_api.registry import capabilities
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


class ServerAssembly:
    """The server's parts, put together once before it listens: storage and its watch
    hub, the resource stores, admission, authentication, authorization, the custom
    resources' types, the filter chain.  ``APIServerService`` starts and stops them."""

    auditor: Any = None  # --audit-policy-file with a backend: flushed at stop
    tracing: Any = None  # --tracing-config-file: spans exported, flushed at stop

    def __init__(self, config: ServerConfig, reactor: Any, slot: WorkerSlot | None) -> None:
        # Any: the reactor provides several interfaces (time, threads, TCP) at once.
        self.config = config
        self.reactor = reactor
        self._loops: list[LoopingCall] = []  # timers the parts start, stopped at stop
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

    def shares_change_log(self) -> bool:
        """Workers on LMDB learn of each other's commits from the shared change log (a
        wake, a poll, a look before each request); etcd replicas from their own watch."""
        return self.slot is not None and self.backend.wake_siblings

    def _custom_resource_store(
        self, rt: ResourceType, storage: Storage, strategy: CustomResourceStrategy
    ) -> Store:
        store = Store(rt, storage, strategy, gates=self.config.feature_gates.enabled)
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

    def _health(self, state: ServerState) -> dict[str, HealthEndpoint]:
        storage = HealthCheck("etcd", self.backend.check)
        workers = []
        if self.slot is not None:
            workers = WorkerStates(self.config.data_dir, self.slot.count).health_checks()
        with open(self.serving_cert_file, "rb") as f:
            loopback_check = healthchecks.loopback_certificate(f.read())
        return healthchecks.endpoints(
            state, storage, encryption_checks(self.encryption), workers, loopback_check
        )

    def build(self, state: ServerState) -> tuple[APIServer, str, str, str]:
        """Everything but the listener; returns the server and its TLS files.  ``state``
        is what the health checks read (the service)."""
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
            OpenAPI(scheme, aliases, self.reactor, self._deletes_to_object),
            self._health(state),
        )
        return server, cert, key, client_ca

    def _deletes_to_object(self, rt: ResourceType) -> bool:
        """Whether a delete of ``rt`` answers with the object (the OpenAPI documents say)."""
        store = self.stores.get((rt.group, rt.version, rt.plural))
        return store is not None and store.strategy.returns_deleted_object

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
            binding_labels=cfg.feature_gates.enabled(POD_TOPOLOGY_LABELS_ADMISSION),
            clear_nomination=cfg.feature_gates.enabled(CLEARING_NOMINATED_NODE_NAME),
            min_request_timeout=float(cfg.min_request_timeout),
            scheme=scheme,
            storage=self.storage,
            stores=self.stores,
            admission=self.admission,
            tables=TableConvertor(scheme.schemas),
            hub=self.hub,
            reactor=self.reactor,
            storage_prefix=cfg.storage.etcd_prefix,
            flags=functools.partial(flagz.shown_flags, cfg),
            flagz=cfg.feature_gates.enabled("ComponentFlagz"),
            statusz=cfg.feature_gates.enabled("ComponentStatusz"),
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
        handlers.converters = self.crd_installer.converters
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
                cfg, self.stores, self.storage, self.hub, self.reactor, self._loops, self.slot
            ),
            request_timeout=cfg.request_timeout,
            reactor=self.reactor,
            remote_apiservices=self.aggregation.remote if self.aggregation else None,
            aggregator_proxy=self.aggregation.proxy if self.aggregation else None,
            browser=BrowserHeaders.of(
                cfg.strict_transport_security_directives, cfg.cors_allowed_origins
            ),
        )
        if self.shares_change_log():
            filters.catch_up = self.hub.catch_up
        if self.slot is not None:
            filters.gather_metrics = self.metrics_exchange.gather
            filters.reset_metrics = self.metrics_exchange.reset_siblings
        install_metrics(
            filters,
            self.storage,
            self.stores.values(),
            self.backend.storage_size,
            self.hub,
            self.backend.watch_cache(),
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
