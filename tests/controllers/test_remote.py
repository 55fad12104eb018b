"""The remote home's stores and hub against a real server: discovery (custom resources
too), cache reads, Events in the registry's key scheme, writes with conflict retries."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater

from platform_api.client.kubeconfig import load
from platform_api.client.rest import Resource, RESTClient
from platform_api.controllers.remote import (
    RemoteCluster,
    RestWrites,
    aliases_of_served,
    cached_or_fetched,
)
from platform_api.errors import StatusError
from platform_api.storage.interface import Event, ListOptions
from platform_api.testing import ApiServer
from tests.polling import until
from tests.synchronous import run

NAMESPACES = Resource("", "v1", "namespaces", namespaced=False)
CONFIGMAPS = Resource("", "v1", "configmaps")
CRDS = Resource("apiextensions.platform.io", "v1", "customresourcedefinitions", False)
WIDGETS = ("remote.example.com", "v1", "widgets")
CRD = {
    "metadata": {"name": "widgets.remote.example.com"},
    "spec": {
        "group": "remote.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object"}},
            }
        ],
    },
}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    server = ApiServer.start(tmp_path_factory.mktemp("remote"), "--controllers=")
    yield server
    server.stop()


class Recorder:
    prefix = b"/"  # every change

    def __init__(self) -> None:
        self.events: list[Event] = []

    def deliver(self, events: list[Event]) -> None:
        self.events.extend(events)


@pytest_twisted.ensureDeferred
async def test_cluster_serves_stores_and_events_like_the_registry(live: ApiServer) -> None:
    client = RESTClient(load(str(live.kubeconfig)), reactor)
    cluster = RemoteCluster(client, reactor)
    await cluster.sync()
    try:
        namespaces = cluster.stores[("", "v1", "namespaces")]
        configmaps = cluster.stores[("", "v1", "configmaps")]
        assert namespaces.prefix == b"/core/namespaces/"
        assert configmaps.key("ns", "a") == b"/core/configmaps/ns/a"
        assert configmaps.name_of_key(b"/core/configmaps/ns/a") == "a"
        assert namespaces.get("", "default").object["metadata"]["name"] == "default"
        assert ("", "v1", "bindings") not in cluster.stores  # not listable
        assert not cluster.upstream_names

        recorder = Recorder()
        cluster.hub.subscribe(recorder)
        await client.create(NAMESPACES, "", {"metadata": {"name": "rem"}})
        made = await configmaps.create("rem", {"metadata": {"name": "a"}})
        await until(lambda: any(e.key == made.key for e in recorder.events))
        added = next(e for e in recorder.events if e.key == made.key)
        assert (added.type, added.prev) == ("ADDED", None)
        assert [
            s.object["metadata"]["name"] for s in configmaps.list("rem", ListOptions()).items
        ] == ["a"]
        assert configmaps.storage.count(configmaps.list_prefix("rem")) == 1

        # a write lost to a concurrent one is redone on the fresh state
        calls = []

        async def add_label(current: dict[str, Any]) -> dict[str, Any]:
            calls.append(current["metadata"]["resourceVersion"])
            if len(calls) == 1:  # someone else writes between our read and our write
                await client.patch(CONFIGMAPS, "rem", "a", {"metadata": {"labels": {"o": "x"}}})
            current["metadata"].setdefault("labels", {})["mine"] = "yes"
            return current

        stored, _ = await configmaps.update("rem", "a", add_label)
        assert len(calls) == 2 and calls[0] != calls[1]
        assert stored.object["metadata"]["labels"] == {"o": "x", "mine": "yes"}
        # a version the function pinned is the caller's conflict
        stale = dict(made.object)
        with pytest.raises(StatusError) as e:
            await configmaps.update("rem", "a", lambda _c: stale)
        assert e.value.code == 409

        await configmaps.delete("rem", "a")
        await until(lambda: any(e.type == "DELETED" for e in recorder.events))
        deleted = next(e for e in recorder.events if e.type == "DELETED")
        assert deleted.key == made.key and deleted.prev is not None
        with pytest.raises(StatusError) as missing:
            configmaps.get("rem", "a")
        assert (missing.value.code, missing.value.message) == (404, 'configmaps "a" not found')
    finally:
        cluster.stop()


@pytest_twisted.ensureDeferred
async def test_custom_resources_come_and_go_with_discovery(live: ApiServer) -> None:
    client = RESTClient(load(str(live.kubeconfig)), reactor)
    cluster = RemoteCluster(client, reactor)
    await cluster.sync()
    try:
        assert WIDGETS not in cluster.stores
        await client.create(CRDS, "", CRD)
        for _ in range(100):
            await cluster.sync()
            if WIDGETS in cluster.stores:
                break
            await deferLater(reactor, 0.1, lambda: None)
        store = cluster.stores[WIDGETS]
        assert store in list(cluster.every) and store.prefix == b"/remote.example.com/widgets/"
        await client.delete(CRDS, "", "widgets.remote.example.com")
        for _ in range(100):
            await cluster.sync()
            if WIDGETS not in cluster.stores:
                break
            await deferLater(reactor, 0.1, lambda: None)
        assert WIDGETS not in cluster.stores and store not in list(cluster.every)
    finally:
        cluster.stop()


def test_upstream_names_of_served_groups_are_aliases() -> None:
    groups = [
        {"name": "rbac.authorization.platform.io"},
        {"name": "rbac.authorization.k8s.io"},
        {"name": "snapshot.storage.k8s.io"},  # a CRD's group: nothing branded beside it
        {"name": "apps"},
    ]
    assert aliases_of_served(groups) == {"rbac.authorization.k8s.io"}


@pytest_twisted.ensureDeferred
async def test_upstream_groups_are_informed_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Against ``--serve-upstream-groups`` every object is listed under two group names;
    the manager informs the branded one only, and knows kube's names are served."""
    server = ApiServer.start(
        tmp_path_factory.mktemp("upstream-remote"), "--controllers=", "--serve-upstream-groups"
    )
    cluster = RemoteCluster(RESTClient(load(str(server.kubeconfig)), reactor), reactor)
    try:
        await cluster.sync()
        groups = {group for group, _, _ in cluster.stores}
        assert "rbac.authorization.platform.io" in groups
        assert not any(g.endswith(".k8s.io") for g in groups)
        assert cluster.upstream_names
    finally:
        cluster.stop()
        server.stop()


class _Lagging(RestWrites):
    """An informer that has not heard of an object the server has."""

    def __init__(self, server_has: dict[str, Any]) -> None:
        self.server_has = server_has

    def get(self, namespace: str, name: str) -> Any:
        raise StatusError(404, "NotFound", f'serviceaccounts "{name}" not found')

    async def read_current(self, namespace: str, name: str) -> dict[str, Any]:
        if name not in self.server_has:
            raise StatusError(404, "NotFound", f'serviceaccounts "{name}" not found')
        return dict(self.server_has[name])


def test_a_cache_miss_asks_the_server_before_calling_an_object_missing() -> None:
    """kube's fetchOnCacheMiss: the tokens controller must not judge a Secret orphaned
    because its account, made a moment before, has not reached the manager's informer."""
    store = _Lagging({"robot": {"metadata": {"name": "robot"}}})
    found = run(cached_or_fetched(store, "ns", "robot"))
    missing = run(cached_or_fetched(store, "ns", "ghost"))
    assert (found, missing) == ({"metadata": {"name": "robot"}}, None)
