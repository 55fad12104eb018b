"""The objects every cluster starts with, as kube-apiserver's bootstrap controller makes them:
the system namespaces, the ``kubernetes`` Service in ``default`` that in-cluster
clients (and upstream's e2e suite) look the API server up by, and the system
PriorityClasses.

Creation is idempotent and tolerates another process sharing the data directory
creating the same object first.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from twisted.logger import Logger

from platform_api import errors
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
