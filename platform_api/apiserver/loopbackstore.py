"""The stores loopback-writing controllers get: reads from this server's own stores,
writes over HTTPS through the whole request chain (loopback.py says why and as whom)."""

from __future__ import annotations

from typing import Any

from platform_api.client.kubeconfig import Connection
from platform_api.client.rest import RESTClient
from platform_api.controllers.remote import RestWrites
from platform_api.registry.store import Store

Obj = dict[str, Any]


class LoopbackStore(RestWrites):
    """A registry store whose reads stay in memory and whose writes take the API."""

    def __init__(self, store: Store, client: RESTClient) -> None:
        super().__init__(store.resource, client)
        self.local = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.local, name)

    def key(self, namespace: str, name: str) -> bytes:
        return self.local.key(namespace, name)

    async def read_current(self, namespace: str, name: str) -> Obj:
        """An update starts from this server's own copy: no request for it (one that
        lags only costs a conflict and another read).  A private one: the update edits it."""
        return self.local.get(namespace, name).copy()


class Loopback:
    """Wraps stores for controllers; one client (one connection pool) for them all."""

    def __init__(self, conn: Connection, reactor: Any, connections: int = 16) -> None:
        self.client = RESTClient(conn, reactor, connections=connections)

    def __call__(self, store: Store) -> LoopbackStore:
        return LoopbackStore(store, self.client)
