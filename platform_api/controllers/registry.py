"""The one table of controllers, by kube-controller-manager's names, for both homes.

The API server runs them in-process (``--controllers`` of the server) and
``twistd platform-controller-manager`` runs the same classes against a remote server;
both read this table, so a name means the same controller in either.  A builder gets a
``ControllerContext`` (stores by (group, version, plural), a live view of every store,
the watch hub, the reactor and a few shared pieces) and returns a controller, not yet
started, or None when this home cannot run it.

To add a controller: ``register("foo-controller", build_foo, default_on=True,
aliases=("foo",))`` below, beside the others.  Builders import their controller
when called: config.py reads the names table without loading every controller.
"""

# ruff: noqa: PLC0415

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from platform_api.controllers import credentials, workloads

if TYPE_CHECKING:  # config.py reads the table before (or without) any controller
    from platform_api.controllers.base import Controller

StoreKey = tuple[str, str, str]  # (group, version, plural)


@dataclass
class ControllerContext:
    """What a builder may use; every home fills what it has."""

    stores: Mapping[StoreKey, Any]  # registry Store, or RemoteStore in the manager
    every: Iterable[Any]  # a live view: custom resource stores come and go
    hub: Any  # WatchHub, or RemoteHub: subscribe/unsubscribe, deliver(events)
    reactor: Any
    rbac_informer: Any = None  # the server's RBAC informer (None: the controller makes one)
    pending: Any = None  # resourcequota's ledger of in-flight charges
    root_ca: bytes | None = None  # the cluster CA bundle, for root-ca publishing
    upstream_names: bool = False  # the server serves kube's group names too
    signing: Any = None  # SigningOptions: the CA files of the built-in certificate signers
    review: Any = None  # async (SubjectAccessReview spec) -> allowed
    loopback: Callable[[Any], Any] | None = None  # store -> one writing through the API
    service_account_key: Any = None  # signs Secret-based service-account tokens (None: none)
    extra: dict[str, Any] = field(default_factory=dict)  # home-specific pieces

    def store(self, group: str, version: str, plural: str) -> Any:
        return self.stores[(group, version, plural)]

    def through_api(self, group: str, version: str, plural: str) -> Any:
        """The store for writes a client would make (a workload controller's pods): they
        pass the request chain, admission included.  The manager's stores write over the
        API already; in the server, the loopback client does (tests: the plain store)."""
        store = self.store(group, version, plural)
        return self.loopback(store) if self.loopback is not None else store


Builder = Callable[[ControllerContext], "Controller | None"]


@dataclass(frozen=True)
class Entry:
    name: str
    builder: Builder
    default_on: bool
    aliases: tuple[str, ...] = ()


REGISTRY: dict[str, Entry] = {}


def register(
    name: str, builder: Builder, default_on: bool = True, aliases: tuple[str, ...] = ()
) -> None:
    """Add (or replace) a controller under kube's name; ``aliases`` are older names."""
    REGISTRY[name] = Entry(name, builder, default_on, aliases)


def names() -> dict[str, str]:
    """Every accepted name (aliases too) -> the controller's name."""
    out: dict[str, str] = {}
    for entry in REGISTRY.values():
        out[entry.name] = entry.name
        for alias in entry.aliases:
            out[alias] = entry.name
    return out


def default_on() -> frozenset[str]:
    return frozenset(e.name for e in REGISTRY.values() if e.default_on)


GARBAGE_COLLECTOR = "garbage-collector-controller"


def with_garbage_collector(controllers: frozenset[str], enabled: bool) -> frozenset[str]:
    """--enable-garbage-collector=false (kube-apiserver's and kube-controller-manager's,
    which must agree): the garbage collector does not run, whatever --controllers says."""
    return controllers if enabled else controllers - {GARBAGE_COLLECTOR}


def parse(text: str) -> frozenset[str]:
    """kube-controller-manager's ``--controllers``: ``*`` (every default-on one), ``foo``
    (on), ``-foo`` (off; wins over the rest); empty, or ``-*``, selects none.  Raises
    ValueError with kube's wording for an unknown name."""
    known = names()
    items = [i.strip() for i in text.split(",") if i.strip()]
    on: set[str] = set()
    off: set[str] = set()
    for item in items:
        if item in ("*", "-*"):
            continue
        name = item.lstrip("-")
        if name not in known:
            raise ValueError(f'"{name}" is not in the list of known controllers')
        (off if item.startswith("-") else on).add(known[name])
    if "-*" in items:
        return frozenset()
    if "*" in items:
        on |= default_on()
    return frozenset(on - off)


def build(context: ControllerContext, wanted: Iterable[str]) -> list[Controller]:
    """The wanted controllers this home can run, in the table's order, not yet started."""
    chosen = set(wanted)
    out: list[Controller] = []
    for entry in REGISTRY.values():
        if entry.name in chosen:
            controller = entry.builder(context)
            if controller is not None:
                out.append(controller)
    return out


# -- the built-in controllers ---------------------------------------------------------------


def _namespace(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.namespace import NamespaceController

    namespaces = ctx.store("", "v1", "namespaces")
    return NamespaceController(namespaces, ctx.every, ctx.hub, ctx.reactor)


def _gc(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.gc import GarbageCollector

    return GarbageCollector(ctx.every, ctx.hub, ctx.reactor)


def _serviceaccount(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.serviceaccounts import ServiceAccountsController

    namespaces = ctx.store("", "v1", "namespaces")
    accounts = ctx.store("", "v1", "serviceaccounts")
    return ServiceAccountsController(namespaces, accounts, ctx.hub, ctx.reactor)


def _aggregation(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.aggregation import ClusterRoleAggregation

    clusterroles = ctx.store("rbac.authorization.platform.io", "v1", "clusterroles")
    return ClusterRoleAggregation(clusterroles, ctx.rbac_informer, ctx.hub, ctx.reactor)


def _resourcequota(ctx: ControllerContext) -> Controller:
    from platform_api.admission.quota.catalog import Registry
    from platform_api.admission.quota.deviceclaims import CLASSES, classes_in
    from platform_api.admission.quota.pending import pending_for
    from platform_api.controllers.resourcequota import ResourceQuotaController

    quotas = ctx.store("", "v1", "resourcequotas")
    pending = ctx.pending if ctx.pending is not None else pending_for(ctx.hub)
    registry = Registry(device_classes=classes_in(ctx.stores.get(CLASSES)))
    return ResourceQuotaController(
        quotas, ctx.every, pending, ctx.hub, ctx.reactor, registry=registry
    )


register("namespace-controller", _namespace, aliases=("namespace",))
register(GARBAGE_COLLECTOR, _gc, aliases=("garbagecollector",))
register("clusterrole-aggregation-controller", _aggregation, aliases=("clusterrole-aggregation",))
register("serviceaccount-controller", _serviceaccount, aliases=("serviceaccount",))
register(
    "serviceaccount-token-controller",
    credentials.serviceaccount_token,
    aliases=("serviceaccount-token",),
)
register(
    "legacy-serviceaccount-token-cleaner-controller",
    credentials.legacy_token_cleaner,
    aliases=("legacy-service-account-token-cleaner",),
)
register("resourcequota-controller", _resourcequota, aliases=("resourcequota",))


def _ttl_after_finished(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.ttlafterfinished import TTLAfterFinished

    return TTLAfterFinished(ctx.store("batch", "v1", "jobs"), ctx.hub, ctx.reactor)


register("bootstrap-signer-controller", credentials.bootstrap_signer, False, ("bootstrapsigner",))
register("token-cleaner-controller", credentials.token_cleaner, False, ("tokencleaner",))
register(
    "root-ca-certificate-publisher-controller",
    credentials.root_ca_publisher,
    True,
    ("root-ca-cert-publisher",),
)
register("ttl-after-finished-controller", _ttl_after_finished, True, ("ttl-after-finished",))


def _pvc_protection(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.protection import PVCProtection

    claims, pods = ctx.store("", "v1", "persistentvolumeclaims"), ctx.store("", "v1", "pods")
    return PVCProtection(claims, pods, ctx.hub, ctx.reactor)


def _pv_protection(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.protection import PVProtection

    return PVProtection(ctx.store("", "v1", "persistentvolumes"), ctx.hub, ctx.reactor)


def _vac_protection(ctx: ControllerContext) -> Controller | None:
    from platform_api.controllers.protection import VACProtection

    classes = ctx.stores.get(("storage.platform.io", "v1", "volumeattributesclasses"))
    if classes is None:  # --runtime-config turned storage.platform.io/v1 off
        return None
    claims = ctx.store("", "v1", "persistentvolumeclaims")
    volumes = ctx.store("", "v1", "persistentvolumes")
    return VACProtection(classes, claims, volumes, ctx.hub, ctx.reactor)


def _service_cidr(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.servicecidr import ServiceCIDRController

    cidrs = ctx.store("networking.platform.io", "v1", "servicecidrs")
    addresses = ctx.store("networking.platform.io", "v1", "ipaddresses")
    return ServiceCIDRController(cidrs, addresses, ctx.hub, ctx.reactor)


register("service-cidr-controller", _service_cidr, True)
register("persistentvolumeclaim-protection-controller", _pvc_protection, True, ("pvc-protection",))
register("persistentvolume-protection-controller", _pv_protection, True, ("pv-protection",))
register("volumeattributesclass-protection-controller", _vac_protection, True)


register(
    "certificatesigningrequest-approving-controller",
    credentials.csr_approving,
    True,
    ("csrapproving",),
)
register(
    "certificatesigningrequest-signing-controller", credentials.csr_signing, True, ("csrsigning",)
)
register(
    "certificatesigningrequest-cleaner-controller", credentials.csr_cleaner, True, ("csrcleaner",)
)


def _endpointslice_mirroring(ctx: ControllerContext) -> Controller | None:
    from platform_api.controllers.endpointslicemirroring import EndpointSliceMirroring

    slices = ctx.stores.get(("discovery.platform.io", "v1", "endpointslices"))
    if slices is None:  # --runtime-config turned discovery.platform.io/v1 off
        return None
    endpoints, services = ctx.store("", "v1", "endpoints"), ctx.store("", "v1", "services")
    return EndpointSliceMirroring(endpoints, services, slices, ctx.hub, ctx.reactor)


def _endpoints(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.endpoints import EndpointsController

    services, pods = ctx.store("", "v1", "services"), ctx.store("", "v1", "pods")
    endpoints = ctx.store("", "v1", "endpoints")
    return EndpointsController(services, pods, endpoints, ctx.hub, ctx.reactor)


def _endpointslices(ctx: ControllerContext) -> Controller | None:
    from platform_api.controllers.endpointslices import EndpointSliceController

    slices = ctx.stores.get(("discovery.platform.io", "v1", "endpointslices"))
    if slices is None:
        return None
    services, pods = ctx.store("", "v1", "services"), ctx.store("", "v1", "pods")
    nodes = ctx.store("", "v1", "nodes")
    return EndpointSliceController(services, pods, nodes, slices, ctx.hub, ctx.reactor)


def _podgc(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.podgc import PodGC

    pods, nodes = ctx.store("", "v1", "pods"), ctx.store("", "v1", "nodes")
    return PodGC(pods, nodes, ctx.hub, ctx.reactor)


register("endpoints-controller", _endpoints, True, ("endpoint",))
register("pod-garbage-collector-controller", _podgc, True, ("podgc",))
register("endpointslice-controller", _endpointslices, True, ("endpointslice",))
register(
    "endpointslice-mirroring-controller",
    _endpointslice_mirroring,
    True,
    ("endpointslicemirroring",),
)


def _vap_status(ctx: ControllerContext) -> Controller | None:
    from platform_api.controllers.vapstatus import GROUP, VAPStatusController

    scheme = ctx.extra.get("scheme")  # schemas and kinds: only the server's own home has them
    if scheme is None:
        return None
    policies = ctx.store(GROUP, "v1", "validatingadmissionpolicies")
    return VAPStatusController(policies, scheme, ctx.hub, ctx.reactor)


register(
    "validatingadmissionpolicy-status-controller",
    _vap_status,
    True,
    ("validatingadmissionpolicy-status",),
)


register(
    "replicaset-controller",
    workloads.workload("REPLICA_SET", "apps", "replicasets"),
    True,
    ("replicaset",),
)
register(
    "replicationcontroller-controller",
    workloads.workload("REPLICATION_CONTROLLER", "", "replicationcontrollers"),
    True,
    ("replicationcontroller",),
)
register("deployment-controller", workloads.deployment, True, ("deployment",))
register("cronjob-controller", workloads.cronjob, True, ("cronjob",))
register("job-controller", workloads.job, True, ("job",))
register("statefulset-controller", workloads.statefulset, True, ("statefulset",))
register("daemonset-controller", workloads.daemonset, True, ("daemonset",))
register("disruption-controller", workloads.disruption, True, ("disruption",))


def _node_lifecycle(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.nodelifecycle import NodeLifecycle
    from platform_api.scheme import namespaces, nodetaints

    return NodeLifecycle(
        ctx.store("", "v1", "nodes"),
        ctx.store("coordination.platform.io", "v1", "leases"),
        ctx.store("", "v1", "pods"),
        ctx.store("", "v1", "events"),
        namespaces.names(namespaces.NODE_LEASE, ctx.upstream_names),
        ctx.hub,
        ctx.reactor,
        keys=nodetaints.keys(ctx.upstream_names),
    )


register("node-lifecycle-controller", _node_lifecycle, True, ("nodelifecycle",))


def _taint_eviction(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.tainteviction import TaintEviction

    pods, nodes = ctx.store("", "v1", "pods"), ctx.store("", "v1", "nodes")
    return TaintEviction(pods, nodes, ctx.store("", "v1", "events"), ctx.hub, ctx.reactor)


register("taint-eviction-controller", _taint_eviction, True, ("taint-eviction",))


def _resource_claim(ctx: ControllerContext) -> Controller | None:
    from platform_api.controllers.resourceclaim import ResourceClaimController

    group = "resource.platform.io"
    claims = ctx.stores.get((group, "v1", "resourceclaims"))
    templates = ctx.stores.get((group, "v1", "resourceclaimtemplates"))
    if claims is None or templates is None:  # --runtime-config turned resource.platform.io/v1 off
        return None
    return ResourceClaimController(
        ctx.store("", "v1", "pods"),
        ctx.through_api(group, "v1", "resourceclaims"),
        templates,
        ctx.store("", "v1", "events"),
        ctx.hub,
        ctx.reactor,
    )


# kube's name, and the alias its descriptor lists (DynamicResourceAllocation is GA, on)
register("resourceclaim-controller", _resource_claim, True, ("resource-claim-controller",))
