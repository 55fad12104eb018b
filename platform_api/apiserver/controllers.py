"""The controllers the API server runs in its own process, as ``--controllers`` selects.

kube runs these in kube-controller-manager; users of this server want a cluster that
behaves without one, so the server runs them after it is ready.  The apiextensions
controllers are part of the API server itself, as in kube, and always run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from platform_api.apiextensions.finalizer import CRDFinalizer
from platform_api.apiextensions.naming import NamingController
from platform_api.apiextensions.serving import CRDInstaller
from platform_api.apiserver.config import ServerConfig
from platform_api.authorization.rbac.index import RuleIndex
from platform_api.controllers.aggregation import ClusterRoleAggregation
from platform_api.controllers.base import Controller
from platform_api.controllers.gc import GarbageCollector
from platform_api.controllers.namespace import NamespaceController
from platform_api.controllers.resourcequota import ResourceQuotaController, pending_for
from platform_api.controllers.serviceaccounts import ServiceAccountsController
from platform_api.registry.store import Store
from platform_api.storage.watch import WatchHub

Stores = dict[tuple[str, str, str], Store]


def build_controllers(
    config: ServerConfig,
    stores: Stores,
    crd_store: Store,
    crd_installer: CRDInstaller,
    rbac_index: RuleIndex,
    hub: WatchHub,
    reactor: Any,
) -> list[Controller]:
    """The controllers to start, not yet started."""
    every: Iterable[Store] = stores.values()  # live: custom resource stores come and go
    namespaces = stores[("", "v1", "namespaces")]
    wanted = config.controllers
    controllers: list[Controller] = [
        NamingController(crd_store, hub, reactor),
        CRDFinalizer(crd_store, crd_installer.store_for, hub, reactor),
    ]
    if "namespace-controller" in wanted:
        controllers.append(NamespaceController(namespaces, every, hub, reactor))
    if "garbage-collector-controller" in wanted:
        controllers.append(GarbageCollector(every, hub, reactor))
    if "serviceaccount-controller" in wanted:
        accounts = stores[("", "v1", "serviceaccounts")]
        controllers.append(ServiceAccountsController(namespaces, accounts, hub, reactor))
    if "clusterrole-aggregation-controller" in wanted:
        clusterroles = stores[("rbac.authorization.platform.io", "v1", "clusterroles")]
        controllers.append(ClusterRoleAggregation(clusterroles, rbac_index.informer, hub, reactor))
    if "resourcequota-controller" in wanted:
        quotas = stores[("", "v1", "resourcequotas")]
        pending = pending_for(hub)  # shared with the ResourceQuota admission plugin
        controllers.append(ResourceQuotaController(quotas, every, pending, hub, reactor))
    return controllers
