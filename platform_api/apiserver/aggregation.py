"""The aggregation layer's parts for one server: the index of APIServices that name a
Service, the proxy to their servers, and their resources for discovery (aggregator/)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from twisted.internet.task import LoopingCall

from platform_api.aggregator.proxy import AggregatorProxy
from platform_api.aggregator.remote import RemoteAPIServices
from platform_api.aggregator.remotediscovery import REFRESH, RemoteDiscovery
from platform_api.aggregator.resolver import AggregatorResolver
from platform_api.apiserver.config import ServerConfig
from platform_api.registry.apiregistration import STORE_KEY as APISERVICES
from platform_api.registry.store import Store
from platform_api.storage.watch import WatchHub


@dataclass
class Aggregation:
    remote: RemoteAPIServices
    proxy: AggregatorProxy
    discovery: RemoteDiscovery

    def start(self, hub: WatchHub) -> LoopingCall:
        """Follow the APIServices; the returned loop re-fetches discovery (stop it)."""
        hub.subscribe(self.remote)
        self.discovery.changed()  # the APIServices already stored
        self.discovery.loop.start(REFRESH, now=False)
        return self.discovery.loop


def build_aggregation(
    cfg: ServerConfig, stores: dict[tuple[str, str, str], Store], reactor: Any
) -> Aggregation | None:
    """None when ``--runtime-config`` turned apiregistration off."""
    apiservices = stores.get(APISERVICES)
    if apiservices is None:
        return None
    resolver = AggregatorResolver(
        stores[("", "v1", "services")],
        stores[("discovery.platform.io", "v1", "endpointslices")],
        endpoint_routing=cfg.aggregator.endpoint_routing,
    )
    send_uid = cfg.feature_gates.enabled("RemoteRequestHeaderUID")
    proxy = AggregatorProxy(reactor, resolver, cfg.aggregator.client_pems, send_uid)
    remote = RemoteAPIServices(apiservices)
    return Aggregation(remote, proxy, RemoteDiscovery(remote, proxy, reactor))
