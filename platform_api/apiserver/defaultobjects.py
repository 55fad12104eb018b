"""The objects every cluster starts with, as kube-apiserver's bootstrap controller and
post-start hooks make them: the system namespaces, the ``kubernetes`` Service in
``default`` that in-cluster clients (and upstream's e2e suite) look the API server up
by, the system PriorityClasses, kubeadm's cluster-info, and the default RBAC roles.

Creation is idempotent and tolerates another process sharing the data directory
creating the same object first.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from twisted.logger import Logger

from platform_api import errors
from platform_api.apiserver.clusterinfo import ensure_cluster_info
from platform_api.apiserver.config import ServerConfig
from platform_api.authorization.rbac.reconcile import ensure_defaults
from platform_api.controllers.aggregation import fill_aggregated_roles
from platform_api.registry.scheduling import SYSTEM_CLASSES, system_class
from platform_api.registry.store import Store

log = Logger()
NAMESPACES = ("default", "platform-system", "platform-public", "platform-node-lease")


async def _ensure(store: Store, namespace: str, obj: dict[str, Any]) -> bool:
    """Create ``obj`` unless it exists; False (logged) when that fails otherwise."""
    name = obj["metadata"]["name"]
    try:
        store.get(namespace, name)
        return True
    except errors.StatusError:
        pass
    try:
        await store.create(namespace, obj)
    except errors.StatusError as e:
        if e.code != 409:
            log.error(
                "creating {kind} {name}: {error}", kind=obj["kind"], name=name, error=e.message
            )
            return False
    return True


async def ensure_namespaces(namespaces: Store) -> bool:
    for name in NAMESPACES:
        obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        if not await _ensure(namespaces, "", obj):
            return False
    return True


def kubernetes_service(service_cidr: str, secure_port: int) -> dict[str, Any]:
    """kube's ``default/kubernetes`` Service: the first address of the service range,
    port 443 to the server's secure port."""
    network = ipaddress.ip_network(service_cidr.split(",", 1)[0].strip(), strict=False)
    first = str(network.network_address + 1)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": secure_port}],
            "clusterIP": first,
            "clusterIPs": [first],
            "type": "ClusterIP",
            "sessionAffinity": "None",
            "ipFamilies": ["IPv6" if network.version == 6 else "IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        },
    }


async def ensure_kubernetes_service(services: Store, service_cidr: str, secure_port: int) -> bool:
    return await _ensure(services, "default", kubernetes_service(service_cidr, secure_port))


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
    if not await ensure_namespaces(stores[("", "v1", "namespaces")]):
        return None
    services = stores[("", "v1", "services")]
    if not await ensure_kubernetes_service(services, cfg.service_cluster_ip_range, cfg.secure_port):
        return None
    await ensure_priority_classes(stores)
    if "bootstrap-signer-controller" in cfg.controllers:
        await ensure_cluster_info(stores, cfg)  # kubeadm's, for joins
    # kube's post-start hook rbac/bootstrap-roles: the default roles and bindings.
    reconciled = await ensure_defaults(stores, reactor, upstream=cfg.serve_upstream_groups)
    if "clusterrole-aggregation-controller" in cfg.controllers:
        # Filled before ready, not by the controller a moment later: clients see no
        # burst of writes in their first second.
        await fill_aggregated_roles(
            stores[("rbac.authorization.platform.io", "v1", "clusterroles")]
        )
    return reconciled
