"""The objects every cluster starts with, as kube-apiserver's bootstrap controller and
post-start hooks make them: the system namespaces, the default ServiceCIDR, the
``kubernetes`` Service in ``default`` that in-cluster clients (and upstream's e2e suite)
look the API server up by, with its IPAddress, the system PriorityClasses, kubeadm's
cluster-info, and the default RBAC roles.

Creation is idempotent and tolerates another process sharing the data directory
creating the same object first.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from twisted.logger import Logger

from platform_api import errors
from platform_api.admission.clusterip import address_object
from platform_api.apiserver.clusterinfo import ensure_cluster_info
from platform_api.apiserver.config import ServerConfig
from platform_api.authorization.rbac.reconcile import ensure_defaults
from platform_api.controllers.aggregation import fill_aggregated_roles
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.scheduling import SYSTEM_CLASSES, system_class
from platform_api.registry.servicecidr import DEFAULT_SERVICE_CIDR, ready_condition, with_ready
from platform_api.registry.store import Store
from platform_api.scheme.namespaces import system_namespaces

log = Logger()


async def _ensure(store: Store, namespace: str, obj: dict[str, Any]) -> bool:
    """Create ``obj`` unless it exists; False (logged) when that fails otherwise."""
    name = obj["metadata"]["name"]
    try:
        store.get(namespace, name)
        return True
    except errors.StatusError:
        pass
    try:
        await store.create(namespace, obj, track=store.tracker(APISERVER))
    except errors.StatusError as e:
        if e.code != 409:
            log.error(
                "creating {kind} {name}: {error}", kind=obj["kind"], name=name, error=e.message
            )
            return False
    return True


async def ensure_namespaces(namespaces: Store, upstream: bool = False) -> bool:
    for name in system_namespaces(upstream):
        obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        if not await _ensure(namespaces, "", obj):
            return False
    return True


def kubernetes_service(service_cidr: str, secure_port: int, node_port: int = 0) -> dict[str, Any]:
    """kube's ``default/kubernetes`` Service: the first address of the service range,
    port 443 to the server's secure port; a NodePort Service on ``node_port``
    (--kubernetes-service-node-port) unless that is 0."""
    network = ipaddress.ip_network(service_cidr.split(",", 1)[0].strip(), strict=False)
    first = str(network.network_address + 1)
    port: dict[str, Any] = {"name": "https", "protocol": "TCP", "port": 443}
    port["targetPort"] = secure_port
    if node_port:
        port["nodePort"] = node_port
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "ports": [port],
            "clusterIP": first,
            "clusterIPs": [first],
            "type": "NodePort" if node_port else "ClusterIP",
            "sessionAffinity": "None",
            "ipFamilies": ["IPv6" if network.version == 6 else "IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        },
    }


async def ensure_kubernetes_service(
    services: Store, addresses: Store, service_cidr: str, secure_port: int, node_port: int = 0
) -> bool:
    """Create the Service when it is missing; one that exists is left as it is (kube
    never reconciles its ports or type, even across restarts)."""
    service = kubernetes_service(service_cidr, secure_port, node_port)
    if not await _ensure(services, "default", service):
        return False
    ip = service["spec"]["clusterIP"]
    return await _ensure(addresses, "", address_object(ip, "default", "kubernetes"))


async def ensure_service_cidr(cidrs: Store, service_cidr: str, now: str) -> bool:
    """kube's default-servicecidr controller: the ``kubernetes`` ServiceCIDR of
    ``--service-cluster-ip-range``, Ready."""
    ranges = [str(ipaddress.ip_network(c.strip(), strict=False)) for c in service_cidr.split(",")]
    obj = {
        "apiVersion": "networking.platform.io/v1",
        "kind": "ServiceCIDR",
        "metadata": {"name": DEFAULT_SERVICE_CIDR},
        "spec": {"cidrs": ranges},
    }
    if not await _ensure(cidrs, "", obj):
        return False
    try:
        made = cidrs.get("", DEFAULT_SERVICE_CIDR).object
    except errors.StatusError:
        return True  # another server made it, unseen here yet: its maker sets it Ready
    if ready_condition(made) is not None:
        return True

    def set_ready(current: dict[str, Any] | None) -> dict[str, Any]:
        if current is None:
            raise errors.not_found("servicecidrs", "networking.platform.io", DEFAULT_SERVICE_CIDR)
        return with_ready(current, "True", "", "Kubernetes default Service CIDR is ready", now)

    await errors.tolerating(
        cidrs.update("", DEFAULT_SERVICE_CIDR, set_ready, subresource="status"), 404, 409
    )
    return True


async def ensure_priority_classes(stores: dict[tuple[str, str, str], Store]) -> bool:
    """kube's scheduling/bootstrap-system-priority-classes hook: the two system classes."""
    classes = stores[("scheduling.platform.io", "v1", "priorityclasses")]
    for name in SYSTEM_CLASSES:
        if not await _ensure(classes, "", system_class(name)):
            return False
    return True


async def bootstrap(
    stores: dict[tuple[str, str, str], Store], cfg: ServerConfig, reactor: Any
) -> bool | None:
    """Create what is missing (idempotent; another process may race us), once the port is
    known: the kubernetes Service points at it.  Returns whether the RBAC defaults were
    reconciled, or None when the namespaces or the Service could not be made."""
    if not await ensure_namespaces(stores[("", "v1", "namespaces")], cfg.serve_upstream_groups):
        return None
    cidrs = stores[("networking.platform.io", "v1", "servicecidrs")]
    if not await ensure_service_cidr(cidrs, cfg.service_cluster_ip_range, cidrs.now()):
        return None
    services = stores[("", "v1", "services")]
    addresses = stores[("networking.platform.io", "v1", "ipaddresses")]
    ip_range, port = cfg.service_cluster_ip_range, cfg.secure_port
    node_port = cfg.kubernetes_service_node_port
    if not await ensure_kubernetes_service(services, addresses, ip_range, port, node_port):
        return None
    await ensure_priority_classes(stores)
    if "bootstrap-signer-controller" in cfg.controllers:
        await ensure_cluster_info(stores, cfg)  # kubeadm's, for joins
    # kube's post-start hook rbac/bootstrap-roles: the default roles and bindings.
    reconciled = await ensure_defaults(
        stores, reactor, upstream=cfg.serve_upstream_groups, gates=cfg.feature_gates.enabled
    )
    if "clusterrole-aggregation-controller" in cfg.controllers:
        # Filled before ready, not by the controller a moment later: clients see no
        # burst of writes in their first second.
        await fill_aggregated_roles(
            stores[("rbac.authorization.platform.io", "v1", "clusterroles")]
        )
    return reconciled
