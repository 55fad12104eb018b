"""The informer against a real server: list, watch, and relist after 410 Gone."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater

from platform_api.client.informer import Informer
from platform_api.client.kubeconfig import load
from platform_api.client.rest import Resource, RESTClient
from platform_api.testing import ApiServer
from tests.polling import until

CONFIGMAPS = Resource("", "v1", "configmaps")
NAMESPACES = Resource("", "v1", "namespaces", namespaced=False)
Obj = dict[str, Any]


def key_of(obj: Obj) -> bytes:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}".encode()


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_list_watch_and_relist_on_gone(live_server: ApiServer) -> None:
    client = RESTClient(load(str(live_server.kubeconfig)), reactor)
    await client.create(NAMESPACES, "", {"metadata": {"name": "inf"}})
    await client.create(CONFIGMAPS, "inf", {"metadata": {"name": "before"}})
    informer = Informer(client, CONFIGMAPS, reactor, key_of)
    changes: list[tuple[bytes, Obj | None, Obj | None]] = []
    informer.add_listener(lambda k, old, new: changes.append((k, old, new)))
    await informer.start()
    try:
        assert informer.lists == 1
        assert b"inf/before" in informer.objects
        await client.create(CONFIGMAPS, "inf", {"metadata": {"name": "watched"}})
        await until(lambda: b"inf/watched" in informer.objects)

        # A resourceVersion older than the server's history: the resumed watch gets 410.
        await deferLater(reactor, 2.5, lambda: None)  # the 1 s history has moved on
        await client.delete(CONFIGMAPS, "inf", "before")
        await client.create(CONFIGMAPS, "inf", {"metadata": {"name": "during"}})
        await deferLater(reactor, 2.5, lambda: None)
        informer.resource_version = "1"
        assert informer._watch is not None
        informer._watch.stop()
        await until(lambda: informer.lists == 2)
        assert b"inf/before" not in informer.objects
        assert b"inf/during" in informer.objects
        removed = [k for k, old, new in changes if new is None]
        assert removed == [b"inf/before"]
    finally:
        informer.stop()
