"""The controllers' view of a remote cluster: the Store and WatchHub surface, over HTTP.

In the API server a controller reads registry ``Store``s synchronously and hears the
``WatchHub``; in ``twistd platform-controller-manager`` the same classes get a
``RemoteStore`` per discovered resource (reads from an informer's copy, synchronously,
as client-go listers do; writes over HTTP with the manager's identity) and a
``RemoteHub`` that turns the informers' changes into storage-style ``Event``s keyed by
the same ``/<group>/<plural>/<namespace>/<name>`` scheme, so ``key`` and
``name_of_key`` mean what they mean in-process.  ``RemoteCluster`` discovers every
listable resource (custom ones too), informs each, and re-discovers periodically.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, cast

import orjson
from twisted.internet.defer import Deferred, DeferredList, ensureDeferred
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api import errors
from platform_api.client.informer import Informer
from platform_api.client.rest import Resource, RESTClient
from platform_api.gotext import right_sized
from platform_api.registry.store import Store, resource_prefix
from platform_api.scheme.types import ResourceType, rebrand_group
from platform_api.storage.interface import DELETED, Event, ListOptions, ListResult, Stored

log = Logger()
Obj = dict[str, Any]
StoreKey = tuple[str, str, str]
REDISCOVER = 30.0  # seconds between discoveries (kube's garbage collector: 30 s)
UPDATE_ATTEMPTS = 5


def _revision(obj: Obj | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def stored(key: bytes, obj: Obj) -> Stored:
    return Stored(key, _revision(obj), right_sized(orjson.dumps(obj)))  # informers keep it


class CacheStorage:
    """The one storage read a controller makes directly: counting under a prefix."""

    def __init__(self, informer: Informer) -> None:
        self.informer = informer

    def count(self, prefix: bytes) -> int:
        return sum(1 for key in list(self.informer.objects) if key.startswith(prefix))


async def cached_or_fetched(store: Any, namespace: str, name: str) -> Obj | None:
    """kube's lookups with ``fetchOnCacheMiss``: the informer's copy, else the server's
    (an object made a moment ago may not have reached the informer yet); None when
    neither has it.  The server's own stores are current already."""
    try:
        return cast(Obj, store.get(namespace, name).object)
    except errors.StatusError as e:
        if e.code != 404:
            raise
    if not isinstance(store, RestWrites):
        return None
    try:
        return await store.read_current(namespace, name)
    except errors.StatusError as e:
        if e.code != 404:
            raise
        return None


class RestWrites:
    """A registry Store's writes, made over HTTP (read-modify-write for updates); the
    subclass supplies ``key``."""

    def __init__(self, resource: ResourceType, client: RESTClient) -> None:
        self.resource = resource
        self.client = client
        self.rest = Resource(resource.group, resource.version, resource.plural, resource.namespaced)

    def key(self, namespace: str, name: str) -> bytes:
        raise NotImplementedError

    def _key_of(self, obj: Obj) -> bytes:
        meta = obj.get("metadata") or {}
        return self.key(meta.get("namespace", ""), meta.get("name", ""))

    async def read_current(self, namespace: str, name: str) -> Obj:
        """The object as the server has it now, not as an informer last saw it: what an
        update starts from (a conflict makes it read again) and what a controller checks
        before acting on a surprise (kube asks the API then)."""
        return await self.client.get(self.rest, namespace, name)

    async def create(self, namespace: str, obj: Obj, **_: Any) -> Stored:
        answer = await self.client.create(self.rest, namespace, obj)
        return stored(self._key_of(answer), answer)

    async def update(
        self,
        namespace: str,
        name: str,
        updated: Callable[[Obj | None], Any],
        *,
        subresource: str = "",
        **_: Any,
    ) -> tuple[Stored, bool]:
        """Read, change, write back; a conflict on what we read is retried with a fresh
        read (as the registry's guaranteed update), one on a version the function pinned
        is the caller's."""
        for attempt in range(UPDATE_ATTEMPTS):
            current = await self.read_current(namespace, name)
            read_version = current["metadata"].get("resourceVersion")
            obj = updated(current)
            if inspect.isawaitable(obj):
                obj = await obj
            try:
                answer = await self.client.update(self.rest, namespace, obj, subresource)
            except errors.StatusError as e:
                pinned = obj.get("metadata", {}).get("resourceVersion")
                if e.code == 409 and pinned == read_version and attempt + 1 < UPDATE_ATTEMPTS:
                    continue
                raise
            return stored(self.key(namespace, name), answer), False
        raise AssertionError("unreachable")

    async def delete(
        self,
        namespace: str,
        name: str,
        *,
        propagation: str | None = None,
        preconditions: Any = None,
        grace_period: int | None = None,
        **_: Any,
    ) -> tuple[Stored, bool]:
        options: Obj = {}
        if propagation:
            options["propagationPolicy"] = propagation
        if grace_period is not None:
            options["gracePeriodSeconds"] = grace_period
        if preconditions is not None:
            options["preconditions"] = {
                k: v
                for k, v in (
                    ("uid", preconditions.uid),
                    ("resourceVersion", preconditions.resource_version),
                )
                if v
            }
        answer = await self.client.delete(self.rest, namespace, name, options)
        return stored(self.key(namespace, name), answer), answer.get("kind") == "Status"


class RemoteStore(RestWrites):
    """A registry Store's surface for one remote resource."""

    def __init__(self, resource: ResourceType, client: RESTClient, reactor: Any) -> None:
        super().__init__(resource, client)
        self.prefix = resource_prefix(resource)
        self.informer = Informer(client, self.rest, reactor, self._key_of)
        self.storage = CacheStorage(self.informer)

    # The key scheme is the registry Store's (kept in step with it).
    def key(self, namespace: str, name: str) -> bytes:
        return Store.key(cast(Store, self), namespace, name)

    def list_prefix(self, namespace: str) -> bytes:
        return Store.list_prefix(cast(Store, self), namespace)

    def name_of_key(self, key: bytes) -> str:
        return Store.name_of_key(cast(Store, self), key)

    def namespace_of_key(self, key: bytes) -> str:
        return Store.namespace_of_key(cast(Store, self), key)

    def _missing(self, name: str) -> errors.StatusError:
        return errors.not_found(self.resource.plural, self.resource.group, name)

    # -- reads: the informer's copy -------------------------------------------------------

    def get(self, namespace: str, name: str) -> Stored:
        key = self.key(namespace, name)
        obj = self.informer.objects.get(key)
        if obj is None:
            raise self._missing(name)
        return stored(key, obj)

    def list(self, namespace: str, options: ListOptions) -> ListResult:
        prefix = self.list_prefix(namespace)
        items = [
            stored(key, obj)
            for key, obj in sorted(self.informer.objects.items())
            if key.startswith(prefix) and (options.predicate is None or options.predicate(obj))
        ]
        revision = int(self.informer.resource_version or 0)
        return ListResult(items=items, revision=revision, continue_key=None, remaining=None)


class RemoteHub:
    """The WatchHub surface: subscribers get the informers' changes as Events."""

    def __init__(self) -> None:
        self.subscribers: dict[Any, tuple[bytes, ...]] = {}  # -> the prefixes it wants

    def subscribe(
        self, subscriber: Any, streamed: bool = False, under: tuple[bytes, ...] = ()
    ) -> None:
        """WatchHub.subscribe's arguments; there are no watch streams here."""
        self.subscribers[subscriber] = under or (subscriber.prefix,)

    def unsubscribe(self, subscriber: Any) -> None:
        self.subscribers.pop(subscriber, None)

    def take_in(self) -> None:
        """Nothing is held back here: the informers deliver each change as it comes."""

    def changed(self, key: bytes, old: Obj | None, new: Obj | None) -> None:
        """An informer listener: one change, as the storage would have reported it."""
        if new is None:
            last = stored(key, old or {})
            event = Event(DELETED, last.revision, key, last, last)
        else:
            now = stored(key, new)
            prev = stored(key, old) if old is not None else None
            event = Event("ADDED" if old is None else "MODIFIED", now.revision, key, now, prev)
        for subscriber, prefixes in list(self.subscribers.items()):
            if key.startswith(prefixes):
                subscriber.deliver([event])


def resource_types(resources: Obj, group: str, version: str) -> list[ResourceType]:
    """The listable, watchable top-level resources of one discovery document."""
    out: list[ResourceType] = []
    for item in resources.get("resources") or []:
        verbs = tuple(item.get("verbs") or ())
        if "/" in item.get("name", "") or not {"list", "watch"} <= set(verbs):
            continue
        out.append(
            ResourceType(
                group=group,
                version=version,
                kind=item.get("kind", ""),
                plural=item["name"],
                singular=item.get("singularName") or "",
                namespaced=bool(item.get("namespaced")),
                verbs=verbs,
            )
        )
    return out


def aliases_of_served(groups: list[Obj]) -> set[str]:
    """The upstream names (``*.k8s.io``) of branded groups the server also lists: the same
    objects, which one informer each must not watch twice."""
    names = {g.get("name", "") for g in groups}
    return {n for n in names if n != rebrand_group(n) and rebrand_group(n) in names}


async def discover(client: RESTClient) -> tuple[list[ResourceType], bool]:
    """Every listable resource at its group's preferred version (/api, /apis), and whether
    the server serves upstream group names too (their groups are skipped)."""
    found = resource_types(await client.get_path("/api/v1"), "", "v1")
    groups = (await client.get_path("/apis")).get("groups") or []
    aliases = aliases_of_served(groups)
    for group in groups:
        if group["name"] in aliases:
            continue
        version = (group.get("preferredVersion") or group["versions"][0])["version"]
        try:
            found += resource_types(
                await client.get_path(f"/apis/{group['name']}/{version}"), group["name"], version
            )
        except errors.StatusError as e:  # an unavailable group: skipped until it is back
            log.warn("discovery of {group}: {error}", group=group["name"], error=e.message)
    return found, bool(aliases)


class RemoteCluster:
    """Stores for every discovered resource, their informers and the hub they feed."""

    def __init__(self, client: RESTClient, reactor: Any, rediscover: float = REDISCOVER) -> None:
        self.client = client
        self.reactor = reactor
        self.rediscover = rediscover
        self.hub = RemoteHub()
        self.stores: dict[StoreKey, RemoteStore] = {}
        self.by_prefix: dict[bytes, RemoteStore] = {}
        self.every = self.by_prefix.values()  # live: controllers see new resources
        self.upstream_names = False  # the server serves kube's group names too
        self._loop: LoopingCall | None = None

    async def start(self) -> None:
        """Discover and fill every cache once; then re-discover every ``rediscover`` s."""
        await self.sync()
        self._loop = LoopingCall(self._rediscover)
        self._loop.clock = self.reactor
        self._loop.start(self.rediscover, now=False)

    def _rediscover(self) -> Deferred[None]:
        d = ensureDeferred(self.sync())
        d.addErrback(lambda f: log.failure("discovery", f))
        return d

    async def sync(self) -> None:
        """Inform newly served resources (waiting for their first list); drop gone ones."""
        types, self.upstream_names = await discover(self.client)
        wanted = {resource_prefix(rt): rt for rt in types}
        for prefix in [p for p in self.by_prefix if p not in wanted]:
            store = self.by_prefix.pop(prefix)
            store.informer.stop()
            rt = store.resource
            self.stores.pop((rt.group, rt.version, rt.plural), None)
        waits = []
        for prefix, rt in wanted.items():
            if prefix in self.by_prefix:
                continue
            store = RemoteStore(rt, self.client, self.reactor)
            store.informer.listeners.append(self.hub.changed)
            self.by_prefix[prefix] = store
            self.stores[(rt.group, rt.version, rt.plural)] = store
            waits.append(store.informer.start())
        if waits:
            await DeferredList(waits, fireOnOneErrback=True, consumeErrors=True)

    def stop(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        for store in self.by_prefix.values():
            store.informer.stop()
