"""Where an APIService's Service points: kube-aggregator's two service resolvers.

By default kube routes to the Service's cluster IP (an ExternalName Service to its
external name); ``--enable-aggregator-routing`` picks a ready endpoint from the
Service's EndpointSlices instead.  This server runs no cluster network, so a cluster IP
is only reachable where something else routes it: an aggregated server on this machine
is reached through an ExternalName Service (``localhost``) or, with endpoint routing, a
Service whose EndpointSlice holds its address.  TLS is verified for
``<name>.<namespace>.svc`` either way, as kube does.
"""

from __future__ import annotations

import random
from typing import Any

from platform_api import errors
from platform_api.registry.serviceresolver import Address, ResolveError
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions

Obj = dict[str, Any]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
_ROUTED_TYPES = ("ClusterIP", "LoadBalancer", "NodePort")


class AggregatorResolver:
    def __init__(
        self,
        services: Store,
        slices: Store,
        endpoint_routing: bool = False,
    ) -> None:
        self.services = services
        self.slices = slices
        self.endpoint_routing = endpoint_routing

    def resolve(self, namespace: str, name: str, port: int) -> Address:
        """The address to call, or ResolveError in kube's words."""
        try:
            service = self.services.get(namespace, name).object
        except errors.StatusError:
            raise ResolveError(f'service "{name}" not found') from None
        spec = service.get("spec") or {}
        kind = spec.get("type") or "ClusterIP"
        server_name = f"{name}.{namespace}.svc"
        if self.endpoint_routing:
            if kind not in _ROUTED_TYPES:
                raise ResolveError(f'unsupported service type "{kind}"')
            port_name = _port_name(service, port)
            host, number = self._random_endpoint(namespace, name, port_name)
            return Address(host, number, server_name)
        if kind == "ClusterIP" and spec.get("clusterIP") == "None":
            raise ResolveError('cannot route to service with ClusterIP "None"')
        if kind in _ROUTED_TYPES:
            _port_name(service, port)
            return Address(str(spec.get("clusterIP") or ""), port, server_name)
        if kind == "ExternalName":
            return Address(str(spec.get("externalName") or ""), port, server_name)
        raise ResolveError(f'unsupported service type "{kind}"')

    def _random_endpoint(self, namespace: str, service: str, port_name: str) -> tuple[str, int]:
        """kube's RandomEndpoint: slices in random order, from a random offset in each,
        the first ready endpoint of a slice that has the named port."""
        slices = [
            s.object
            for s in self.slices.list(namespace, ListOptions()).items
            if (s.object["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == service
        ]
        random.shuffle(slices)
        for slice_ in slices:
            for entry in slice_.get("ports") or []:
                if (entry.get("name") or "") != port_name or entry.get("port") is None:
                    continue
                endpoints = slice_.get("endpoints") or []
                offset = random.randrange(len(endpoints)) if endpoints else 0
                for i in range(len(endpoints)):
                    endpoint = endpoints[(i + offset) % len(endpoints)]
                    if (endpoint.get("conditions") or {}).get("ready") is False:
                        continue
                    return endpoint["addresses"][0], int(entry["port"])
        raise ResolveError(f'no endpoints available for service "{service}"')


def _port_name(service: Obj, port: int) -> str:
    """The name of the Service port numbered ``port`` (kube's findServicePort)."""
    for entry in (service.get("spec") or {}).get("ports") or []:
        if entry.get("port") == port:
            return str(entry.get("name") or "")
    name = service["metadata"]["name"]
    raise ResolveError(f'no service port {port} found for service "{name}"')
