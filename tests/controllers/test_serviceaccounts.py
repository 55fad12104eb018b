"""The serviceaccount-controller over real storage, the hub and a test clock."""

from __future__ import annotations

from pathlib import Path

from platform_api.controllers.serviceaccounts import ServiceAccountsController
from platform_api.storage.interface import ListOptions
from tests.authorization.rbac_cluster import Cluster

Obj = dict


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def accounts(cluster: Cluster, ns: str) -> list[str]:
    store = cluster.stores[("", "v1", "serviceaccounts")]
    return [s.object["metadata"]["name"] for s in store.list(ns, ListOptions()).items]


def test_every_active_namespace_gets_a_default_account(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path))
    namespaces = cluster.stores[("", "v1", "namespaces")]
    store = cluster.stores[("", "v1", "serviceaccounts")]
    cluster.run(namespaces.create("", namespace("before")))
    controller = ServiceAccountsController(namespaces, store, cluster.hub, cluster.clock)
    controller.start()
    cluster.settle()
    assert accounts(cluster, "before") == ["default"]  # at start, for existing namespaces
    cluster.run(namespaces.create("", namespace("after")))
    cluster.settle()
    assert accounts(cluster, "after") == ["default"]
    # Deleted, it comes back.
    cluster.run(store.delete("after", "default"))
    cluster.settle()
    assert accounts(cluster, "after") == ["default"]
    # A terminating namespace gets none.
    cluster.run(namespaces.delete("", "before"))
    cluster.settle()
    cluster.run(store.delete("before", "default"))
    cluster.settle()
    assert accounts(cluster, "before") == []
    controller.stop()
