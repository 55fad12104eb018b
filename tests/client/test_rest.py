"""The REST client against a real server: CRUD, Status errors, watches."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater

from platform_api.client.kubeconfig import load
from platform_api.client.rest import Resource, RESTClient
from platform_api.errors import StatusError
from platform_api.testing import ApiServer

CONFIGMAPS = Resource("", "v1", "configmaps")
NAMESPACES = Resource("", "v1", "namespaces", namespaced=False)


def client_for(server: ApiServer) -> RESTClient:
    return RESTClient(load(str(server.kubeconfig)), reactor)


@pytest_twisted.ensureDeferred
async def test_crud_and_status_errors(live_server: ApiServer) -> None:
    client = client_for(live_server)
    await client.create(NAMESPACES, "", {"metadata": {"name": "rest"}})
    made = await client.create(CONFIGMAPS, "rest", {"metadata": {"name": "a"}, "data": {"k": "1"}})
    assert made["kind"] == "ConfigMap"
    made["data"]["k"] = "2"
    updated = await client.update(CONFIGMAPS, "rest", made)
    assert updated["data"] == {"k": "2"}
    patched = await client.patch(CONFIGMAPS, "rest", "a", {"data": {"j": "3"}})
    assert patched["data"] == {"k": "2", "j": "3"}
    listed = await client.list(CONFIGMAPS, "rest")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]

    with pytest.raises(StatusError) as stale:
        await client.update(CONFIGMAPS, "rest", made)  # made's resourceVersion is old now
    assert (stale.value.code, stale.value.reason) == (409, "Conflict")
    assert stale.value.message == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )

    await client.delete(CONFIGMAPS, "rest", "a")
    with pytest.raises(StatusError) as missing:
        await client.get(CONFIGMAPS, "rest", "a")
    assert (missing.value.code, missing.value.reason) == (404, "NotFound")
    assert missing.value.message == 'configmaps "a" not found'
    assert missing.value.details == {"name": "a", "kind": "configmaps"}


@pytest_twisted.ensureDeferred
async def test_watch_streams_events_until_stopped(live_server: ApiServer) -> None:
    client = client_for(live_server)
    await client.create(NAMESPACES, "", {"metadata": {"name": "watched"}})
    start = await client.list(CONFIGMAPS, "watched")
    events: list[dict[str, Any]] = []
    watch = await client.watch(
        CONFIGMAPS,
        events.append,
        namespace="watched",
        resource_version=start["metadata"]["resourceVersion"],
    )
    await client.create(CONFIGMAPS, "watched", {"metadata": {"name": "w"}})
    await client.delete(CONFIGMAPS, "watched", "w")
    for _ in range(100):
        if len([e for e in events if e["type"] != "BOOKMARK"]) >= 2:
            break
        await deferLater(reactor, 0.05, lambda: None)
    watch.stop()
    await watch.done
    kinds = [
        (e["type"], e["object"]["metadata"]["name"]) for e in events if e["type"] != "BOOKMARK"
    ]
    assert kinds == [("ADDED", "w"), ("DELETED", "w")]
