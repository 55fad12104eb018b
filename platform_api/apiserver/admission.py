"""Assembling the admission chain: kube's plugins --enable/--disable-admission-plugins
leave on, in kube's order, then the webhook and policy plugins behind them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.admission import plugins as admission_plugins
from platform_api.admission.allocation import Share
from platform_api.admission.authorizer import authorize_with
from platform_api.admission.chain import AdmissionChain
from platform_api.admission.clusterip import ClusterIPAllocation
from platform_api.admission.config import load_plugin_settings
from platform_api.admission.equivalence import Equivalence
from platform_api.admission.interface import AdmissionPlugin
from platform_api.admission.nodeports import NodePortAllocation
from platform_api.admission.plugins import PluginContext, build_plugin
from platform_api.admission.policy.build import build_mutating_policies, build_policies
from platform_api.admission.webhook.build import build_webhooks
from platform_api.apiserver.config import ServerConfig
from platform_api.authorization.interface import Authorizer
from platform_api.registry.store import Store
from platform_api.scheme.catalog import Scheme
from platform_api.storage.interface import Storage
from platform_api.storage.watch import WatchHub

Stores = dict[tuple[str, str, str], Store]
NETWORKING = "networking.platform.io"


def _plugins(ctx: PluginContext, share: Share) -> list[AdmissionPlugin]:
    built = [
        build_plugin(name, ctx)
        for name in ctx.config.admission_plugins
        if name not in admission_plugins.CHAIN_PARTS
    ]
    # Not kube admission plugins (kube allocates in the Service store): always on, and run
    # after every mutation, the webhooks' and policies' too (their ``allocates``).
    services = ctx.stores[("", "v1", "services")]
    cluster_ips = ClusterIPAllocation(
        ctx.stores[(NETWORKING, "v1", "ipaddresses")],
        ctx.stores[(NETWORKING, "v1", "servicecidrs")],
        ctx.config.service_cluster_ip_range,
        share,
    )
    services.after_delete.append(cluster_ips.service_deleted)
    built.append(cluster_ips)
    node_ports = ctx.config.service_node_port_range
    built.append(NodePortAllocation(ctx.storage, ctx.hub, services.prefix, node_ports, share))
    return built


def build_admission(
    cfg: ServerConfig,
    storage: Storage,
    hub: WatchHub,
    scheme: Scheme,
    stores: Stores,
    reactor: Any,
    authorizer: Callable[[], Authorizer | None],
    share: Share = (0, 1),
) -> AdmissionChain:
    """The chain; ``authorizer`` is looked up per check (it is built after admission);
    ``share`` is this worker's (index, count) under --workers, for the allocators."""
    authorize = authorize_with(authorizer)
    plugins = cfg.admission_plugins
    equivalence = Equivalence(scheme)
    webhooks = build_webhooks(
        plugins,
        storage,
        hub,
        stores,
        reactor,
        authorize,
        cfg.serve_upstream_groups,
        cfg.admission_control_config_file,
        equivalence,
    )
    policies = build_policies(plugins, storage, hub, scheme, stores, authorize, equivalence)
    mutating = build_mutating_policies(
        plugins, storage, hub, scheme, stores, authorize, equivalence
    )
    config_file = cfg.admission_control_config_file
    settings = load_plugin_settings(config_file) if config_file else {}
    ctx = PluginContext(cfg, storage, hub, stores, reactor, authorize, settings)
    built = _plugins(ctx, share)
    return AdmissionChain(built, webhooks, policies, mutating, equivalence, enabled=plugins)
