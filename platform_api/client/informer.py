"""client-go's reflector + store: a copy of one resource kept current over HTTP.

List, then watch from the list's resourceVersion (with bookmarks, so a quiet resource
still advances it); a watch that ends is resumed from the last version seen; ``410
Gone`` (the version fell out of the server's history) relists, and the differences
between the old copy and the new list are delivered as changes.  Other errors back
off exponentially (client-go: 800 ms doubling to 30 s, reset after a good list).
Listeners hear every change as ``(key, old, new)``, None for absent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.internet.task import deferLater
from twisted.logger import Logger

from platform_api.client.cache import ObjectCache
from platform_api.client.rest import Resource, RESTClient, Watch
from platform_api.errors import StatusError

log = Logger()
Obj = dict[str, Any]
KeyOf = Callable[[Obj], bytes]
BACKOFF_START = 0.8
BACKOFF_MAX = 30.0
PAGE = 500


class Gone(Exception):
    """The watch's resourceVersion is too old: relist."""


class Informer(ObjectCache):
    """Objects of one resource, by the key ``key_of`` gives them; read-only to callers."""

    def __init__(
        self,
        client: RESTClient,
        resource: Resource,
        reactor: Any,
        key_of: KeyOf,
        watch_timeout: int = 300,
    ) -> None:
        self.client = client
        self.resource = resource
        self.reactor = reactor
        self.key_of = key_of
        self.watch_timeout = watch_timeout
        super().__init__()
        self.resource_version = ""
        self.running = False
        self.synced: Deferred[None] = Deferred()
        self.lists = 0  # how many lists were made (the first, and every relist)
        self._watch: Watch | None = None
        self._task: Deferred[None] | None = None

    def start(self) -> Deferred[None]:
        """Run until stopped; the returned Deferred (``synced``) fires after the first list."""
        self.running = True
        self._task = ensureDeferred(self._run())
        return self.synced

    def stop(self) -> None:
        self.running = False
        if self._watch is not None:
            self._watch.stop()

    async def _run(self) -> None:
        delay = BACKOFF_START
        relist = True
        while self.running:
            try:
                if relist:
                    await self._list()
                    relist = False
                    delay = BACKOFF_START
                await self._watch_once()
            except Gone:
                relist = True
            except Exception as e:
                if not self.running:
                    return
                log.warn(
                    "{resource}: {error}; retrying in {delay}s",
                    resource=self.resource.plural,
                    error=e,
                    delay=delay,
                )
                relist = relist or isinstance(e, StatusError)
                await deferLater(self.reactor, delay, lambda: None)
                delay = min(delay * 2, BACKOFF_MAX)

    async def _list(self) -> None:
        """A full (paged) list; the differences from the copy are delivered as changes."""
        items: list[Obj] = []
        cont = ""
        while True:
            page = await self.client.list(self.resource, limit=PAGE, **{"continue": cont})
            kind = page.get("kind", "").removesuffix("List")
            for item in page.get("items") or []:
                item.setdefault("kind", kind)
                item.setdefault("apiVersion", page.get("apiVersion", ""))
                items.append(item)
            cont = (page.get("metadata") or {}).get("continue") or ""
            if not cont:
                break
        if not self.running:
            return
        fresh = {self.key_of(item): item for item in items}
        for key in [k for k in self.objects if k not in fresh]:
            self._apply(key, None)
        for key, item in fresh.items():
            if self.objects.get(key) != item:
                self._apply(key, item)
        self.resource_version = (page.get("metadata") or {}).get("resourceVersion", "")
        self.lists += 1
        if not self.synced.called:
            self.synced.callback(None)

    async def _watch_once(self) -> None:
        failure: list[Exception] = []

        def on_event(event: Obj) -> None:
            if failure:
                return
            try:
                self._event(event)
            except Gone as e:
                failure.append(e)
                if self._watch is not None:
                    self._watch.stop()

        self._watch = await self.client.watch(
            self.resource,
            on_event,
            resource_version=self.resource_version,
            timeout_seconds=self.watch_timeout,
        )
        if not self.running:
            self._watch.stop()
        await self._watch.done
        self._watch = None
        if failure:
            raise failure[0]

    def _event(self, event: Obj) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Gone(obj.get("message", ""))
            log.warn("{resource} watch: {message}", resource=self.resource.plural, **obj)
            raise Gone(obj.get("message", ""))  # any error: start over from a list
        version = (obj.get("metadata") or {}).get("resourceVersion", "")
        if kind == "BOOKMARK":
            self.resource_version = version or self.resource_version
            return
        key = self.key_of(obj)
        if kind == "DELETED":
            self.objects[key] = obj  # listeners hear the final state as the old one
            self._apply(key, None)
        else:
            self._apply(key, obj)
        self.resource_version = version or self.resource_version
