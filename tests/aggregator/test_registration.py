"""The APIService registration controller over real storage, the hub and a test clock."""

from __future__ import annotations

from pathlib import Path

from platform_api.aggregator.registration import ALWAYS, MANAGED, APIServiceRegistration
from platform_api.registry.apiregistration import GROUP
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import ListOptions
from tests.authorization.rbac_cluster import Cluster
from tests.spying import calls_of


def widgets(group: str, *versions: str) -> list[ResourceType]:
    return [
        ResourceType(
            group,
            v,
            "Widget",
            "widgets",
            "widget",
            True,
            definition=f"{group}.{v}.Widget",
            custom=True,
        )
        for v in versions
    ]


def drain(cluster: Cluster) -> None:
    for _ in range(10):
        cluster.settle()
        if not cluster.clock.getDelayedCalls():
            return


def test_a_crd_queues_only_its_group_versions(tmp_path: Path) -> None:
    """kube's CRD registration controller queues the group versions of the CRD that
    changed; queueing every APIService made each CRD cost more than the last."""
    cluster = Cluster(str(tmp_path))
    store = cluster.stores[(GROUP, "v1", "apiservices")]
    scheme = builtin_scheme()
    controller = APIServiceRegistration(store, scheme, cluster.hub, cluster.clock)
    controller.start()
    drain(cluster)  # (the creates' own events queue each APIService once more)
    before = {s.object["metadata"]["name"] for s in store.list("", ListOptions()).items}
    assert "v1.apps" in before and len(before) > 15
    scheme.install("widgets.a.example.com", widgets("a.example.com", "v1"), {})
    drain(cluster)
    with calls_of(controller, "sync") as synced:
        scheme.install("widgets.b.example.com", widgets("b.example.com", "v1", "v2"), {})
        drain(cluster)
    # (each once for the scheme's change, once for its create's event)
    assert {c[0] for c in synced} == {"v1.b.example.com", "v2.b.example.com"}
    made = store.get("", "v2.b.example.com").object
    assert made["metadata"]["labels"] == {MANAGED: ALWAYS}
    assert made["spec"] == {
        "group": "b.example.com",
        "version": "v2",
        "groupPriorityMinimum": 1000,
        "versionPriority": 100,
    }
    # A version no longer served goes; the other group's stay.
    with calls_of(controller, "sync") as synced:
        scheme.install("widgets.b.example.com", widgets("b.example.com", "v2"), {})
        drain(cluster)
    assert {c[0] for c in synced} == {"v1.b.example.com"}
    names = {s.object["metadata"]["name"] for s in store.list("", ListOptions()).items}
    assert names == before | {"v1.a.example.com", "v2.b.example.com"}
    controller.stop()
