"""kube-aggregator's service resolvers over real stores: cluster IP (the default),
ExternalName, endpoint routing, and their errors in kube's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.aggregator.resolver import AggregatorResolver
from platform_api.registry.serviceresolver import Address, ResolveError
from tests.authorization.rbac_cluster import Cluster

Obj = dict[str, Any]
SLICES = ("discovery.platform.io", "v1", "endpointslices")


class Setup:
    def __init__(self, path: str, endpoint_routing: bool = False) -> None:
        self.cluster = Cluster(path)
        self.services = self.cluster.stores[("", "v1", "services")]
        self.slices = self.cluster.stores[SLICES]
        self.resolver = AggregatorResolver(self.services, self.slices, endpoint_routing)

    def service(self, name: str, **spec: Any) -> Obj:
        made = self.services.create("ns", {"metadata": {"name": name}, "spec": spec})
        return self.cluster.run(made).object  # type: ignore[no-any-return]

    def endpoint_slice(self, name: str, service: str, port: Obj, *endpoints: Obj) -> None:
        labels = {"kubernetes.io/service-name": service}
        body = {
            "metadata": {"name": name, "labels": labels},
            "addressType": "IPv4",
            "ports": [port],
            "endpoints": list(endpoints),
        }
        self.cluster.run(self.slices.create("ns", body))


PORTS = [{"name": "https", "port": 443, "targetPort": 8443}]


def test_cluster_routing_calls_the_cluster_ip(tmp_path: Path) -> None:
    s = Setup(str(tmp_path))
    ip = s.service("api", ports=PORTS, clusterIP="10.0.0.7")["spec"]["clusterIP"]
    assert s.resolver.resolve("ns", "api", 443) == Address(ip, 443, "api.ns.svc")
    with pytest.raises(ResolveError, match=r'^no service port 80 found for service "api"$'):
        s.resolver.resolve("ns", "api", 80)
    with pytest.raises(ResolveError, match=r'^service "nope" not found$'):
        s.resolver.resolve("ns", "nope", 443)


def test_external_names_and_headless_services(tmp_path: Path) -> None:
    s = Setup(str(tmp_path))
    s.service("ext", type="ExternalName", externalName="api.example.com")
    assert s.resolver.resolve("ns", "ext", 9443) == Address("api.example.com", 9443, "ext.ns.svc")
    s.service("headless", ports=PORTS, clusterIP="None")
    with pytest.raises(ResolveError, match=r'^cannot route to service with ClusterIP "None"$'):
        s.resolver.resolve("ns", "headless", 443)


def test_endpoint_routing_picks_a_ready_endpoint_with_the_port(tmp_path: Path) -> None:
    s = Setup(str(tmp_path), endpoint_routing=True)
    s.service("api", ports=PORTS)
    with pytest.raises(ResolveError, match=r'^no endpoints available for service "api"$'):
        s.resolver.resolve("ns", "api", 443)
    s.endpoint_slice("api-other", "api", {"name": "other", "port": 9}, {"addresses": ["10.0.0.9"]})
    not_ready = {"addresses": ["10.0.0.1"], "conditions": {"ready": False}}
    s.endpoint_slice("api-1", "api", {"name": "https", "port": 8443}, not_ready)
    with pytest.raises(ResolveError, match="no endpoints available"):
        s.resolver.resolve("ns", "api", 443)
    s.endpoint_slice("api-2", "api", {"name": "https", "port": 8443}, {"addresses": ["10.0.0.2"]})
    for _ in range(10):  # random order, one answer
        assert s.resolver.resolve("ns", "api", 443) == Address("10.0.0.2", 8443, "api.ns.svc")


def test_endpoint_routing_refuses_external_names(tmp_path: Path) -> None:
    s = Setup(str(tmp_path), endpoint_routing=True)
    s.service("ext", type="ExternalName", externalName="api.example.com")
    with pytest.raises(ResolveError, match=r'^unsupported service type "ExternalName"$'):
        s.resolver.resolve("ns", "ext", 443)
