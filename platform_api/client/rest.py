"""A small REST client for this server (and kube's): JSON over treq, from a kubeconfig.

The controller manager reaches the cluster only through it.  Non-2xx answers carrying
a ``Status`` come back as ``platform_api.errors.StatusError`` with the server's code,
reason, message and details, so controller code written against the in-process stores
handles both homes' errors alike.  Watches are streamed line by line and can be stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import quote, urlencode

import orjson
from twisted.internet.defer import Deferred, DeferredSemaphore
from twisted.internet.protocol import Protocol
from twisted.python.failure import Failure
from twisted.web.client import ResponseDone

from platform_api.client.kubeconfig import Connection
from platform_api.errors import StatusError

Obj = dict[str, Any]
TIMEOUT = 30.0  # seconds for one non-watch request (client-go's default is none; ours is safe)


@dataclass(frozen=True)
class Resource:
    """One served resource, as discovery names it."""

    group: str
    version: str
    plural: str
    namespaced: bool = True

    def path(self, namespace: str = "", name: str = "", subresource: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name:
            base += f"/{quote(name, safe='')}"
        if subresource:
            base += f"/{subresource}"
        return base


def status_error(code: int, body: bytes) -> StatusError:
    """The server's Status as an exception (a body that is none: the text, reasonless)."""
    try:
        status = orjson.loads(body)
    except orjson.JSONDecodeError:
        status = None
    if not isinstance(status, dict) or status.get("kind") != "Status":
        return StatusError(code, "", body.decode("utf-8", "replace").strip())
    return StatusError(
        int(status.get("code") or code),
        status.get("reason") or "",
        status.get("message") or "",
        status.get("details"),
    )


class RESTClient:
    """get/list/create/update/patch/delete/watch of any resource, as JSON.

    At most ``connections`` requests (watches aside) are in flight, each on a kept-alive
    connection of a pool that size; more wait their turn.  client-go multiplexes over one
    HTTP/2 connection; over HTTP/1.1 a burst of requests (a ReplicaSet's slow-start batch
    of 256 creates) would otherwise open a connection, and pay a TLS handshake, apiece."""

    def __init__(
        self, connection: Connection, reactor: Any, timeout: float = TIMEOUT, connections: int = 4
    ) -> None:
        self.connection = connection
        self.reactor = reactor
        self.timeout = timeout
        self.base = connection.server.rstrip("/")
        self.http = connection.client(reactor, keep_alive=connections)
        self.headers = connection.request_headers()
        self._turns = DeferredSemaphore(connections)

    def url(self, path: str, params: dict[str, Any] | None = None) -> str:
        query = {k: v for k, v in (params or {}).items() if v not in (None, "")}
        return self.base + path + (f"?{urlencode(query)}" if query else "")

    async def request(
        self,
        method: str,
        path: str,
        body: Obj | None = None,
        params: dict[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Obj:
        """One request; the decoded JSON answer, or StatusError."""
        headers = {**self.headers, "Content-Type": content_type}
        data = orjson.dumps(body) if body is not None else None
        await self._turns.acquire()
        try:
            response = await self.http.request(
                method, self.url(path, params), headers=headers, data=data, timeout=self.timeout
            )
            content = await response.content()
        finally:
            self._turns.release()
        if not 200 <= response.code < 300:
            raise status_error(response.code, content)
        answer: Obj = orjson.loads(content) if content else {}
        return answer

    async def get_path(self, path: str) -> Obj:
        return await self.request("GET", path)

    async def get(self, resource: Resource, namespace: str, name: str) -> Obj:
        return await self.request("GET", resource.path(namespace, name))

    async def list(self, resource: Resource, namespace: str = "", **params: Any) -> Obj:
        return await self.request("GET", resource.path(namespace), params=params)

    async def create(self, resource: Resource, namespace: str, obj: Obj) -> Obj:
        return await self.request("POST", resource.path(namespace), obj)

    async def update(
        self, resource: Resource, namespace: str, obj: Obj, subresource: str = ""
    ) -> Obj:
        name = obj["metadata"]["name"]
        return await self.request("PUT", resource.path(namespace, name, subresource), obj)

    async def patch(
        self,
        resource: Resource,
        namespace: str,
        name: str,
        patch: Obj,
        content_type: str = "application/merge-patch+json",
        subresource: str = "",
    ) -> Obj:
        path = resource.path(namespace, name, subresource)
        return await self.request("PATCH", path, patch, content_type=content_type)

    async def delete(
        self, resource: Resource, namespace: str, name: str, options: Obj | None = None
    ) -> Obj:
        body = {"kind": "DeleteOptions", "apiVersion": "v1", **(options or {})}
        return await self.request("DELETE", resource.path(namespace, name), body)

    async def watch(
        self,
        resource: Resource,
        on_event: Callable[[Obj], None],
        namespace: str = "",
        resource_version: str = "",
        timeout_seconds: int = 300,
    ) -> Watch:
        """Start a watch (with bookmarks); each event dict goes to ``on_event``.  The
        returned ``Watch.done`` fires when the stream ends; ``Watch.stop()`` ends it."""
        params = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "resourceVersion": resource_version,
            "timeoutSeconds": str(timeout_seconds),
        }
        response = await self.http.request(
            "GET",
            self.url(resource.path(namespace), params),
            headers=self.headers,
            timeout=self.timeout,
        )
        if response.code != 200:
            raise status_error(response.code, await response.content())
        stream = Watch(on_event)
        response.deliverBody(stream)
        return stream


class Watch(Protocol):
    """A watch response body: newline-delimited JSON events."""

    def __init__(self, on_event: Callable[[Obj], None]) -> None:
        self.on_event = on_event
        self.buffer = b""
        self.done: Deferred[None] = Deferred()
        self.stopped = False

    def dataReceived(self, data: bytes) -> None:
        self.buffer += data
        while b"\n" in self.buffer and not self.stopped:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.strip():
                self.on_event(orjson.loads(line))

    def connectionLost(self, reason: Failure = ResponseDone) -> None:  # type: ignore[assignment]
        if not self.done.called:
            self.done.callback(None)

    def stop(self) -> None:
        """End the stream: no more events are delivered."""
        self.stopped = True
        if self.transport is not None:
            cast(Any, self.transport).stopProducing()
        if not self.done.called:
            self.done.callback(None)
