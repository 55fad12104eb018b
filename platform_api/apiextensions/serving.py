"""Serving custom resources: a CRD's types appear and go without a restart.

The installer follows the CRD objects through the watch hub (synchronously, in
revision order).  A CRD whose names are accepted gets one store per served version,
sharing one key prefix; versions other than the storage version read and write
through a ``StorageView`` that converts at the storage boundary.  Then the scheme
learns the types, and discovery, OpenAPI and the routes follow.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from twisted.logger import Logger

from platform_api.apiextensions import crd as crds
from platform_api.apiextensions.conversion import coerced, converter_for, schema_for
from platform_api.apiextensions.printers import printer_for
from platform_api.apiextensions.resource import CustomResourceStrategy
from platform_api.apiextensions.schema.compiled import CompiledSchema
from platform_api.apiextensions.webhookconversion import (
    REVIEW_GROUP,
    WebhookConverter,
    webhook_converter_for,
)
from platform_api.endpoints.tables import TableConvertor
from platform_api.registry.serviceresolver import ServiceResolver
from platform_api.registry.store import Store, resource_prefix
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import DELETED, Event, ListOptions, Storage
from platform_api.storage.view import AsyncStorageView, StorageView

log = Logger()
Obj = dict[str, Any]
Key = tuple[str, str, str]
AsyncConvert = Callable[[Obj, str], Awaitable[Obj]]


@dataclass
class Installed:
    fingerprint: bytes  # what the served types were built from
    keys: list[Key]


def _fingerprint(crd: Obj) -> bytes:
    """What serving depends on: the spec and the accepted names (not conditions)."""
    status = crd.get("status", {})
    return orjson.dumps(
        [crd["metadata"].get("uid"), crd["spec"], status.get("acceptedNames")],
        option=orjson.OPT_SORT_KEYS,
    )


def serves(crd: Obj) -> bool:
    """kube's handler serves a CRD whose names are accepted or that is established."""
    names = crd.get("status", {}).get("acceptedNames") or {}
    ready = crds.is_true(crd, crds.NAMES_ACCEPTED) or crds.is_true(crd, crds.ESTABLISHED)
    return ready and bool(names.get("plural")) and bool(names.get("kind"))


class CRDInstaller:
    """A hub subscriber keeping the served custom types in step with the CRDs."""

    def __init__(
        self,
        crd_store: Store,
        scheme: Scheme,
        stores: dict[Key, Store],
        tables: TableConvertor,
        make_store: Callable[[ResourceType, Storage, CustomResourceStrategy], Store] = Store,
        on_removed: Callable[[bytes], None] = lambda prefix: None,
        resolver: ServiceResolver | None = None,
        reactor: Any = None,
        converters: dict[tuple[str, str], AsyncConvert] | None = None,
        review_group: str = REVIEW_GROUP,
    ) -> None:
        self.crd_store = crd_store
        self.prefix = crd_store.prefix
        self.scheme = scheme
        self.stores = stores
        self.tables = tables
        self._make_store = make_store
        # Told the instances' key prefix when types are removed or rebuilt (kube closes
        # their watches then; clients watch again).
        self._on_removed = on_removed
        self.resolver = resolver  # conversion webhooks named by Service
        self.reactor = reactor  # drives conversion webhook calls
        self.review_group = review_group  # the group of the ConversionReviews sent
        # (group, plural) -> the CRD's converter, for admission's matchPolicy Equivalent.
        self.converters = converters if converters is not None else {}
        self.installed: dict[str, Installed] = {}

    def start(self) -> None:
        """Serve every CRD already stored (before the first request), then follow."""
        for stored in self.crd_store.list("", ListOptions()).items:
            self.reconcile(stored.object)

    def deliver(self, events: list[Event]) -> None:
        for event in events:
            if event.stored is None:
                continue
            try:
                if event.type == DELETED:
                    self.uninstall(event.stored.object["metadata"]["name"])
                else:
                    self.reconcile(event.stored.object)
            except Exception:
                log.failure("serving the custom resources of {key}", key=event.key)

    def reconcile(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        if not serves(crd):
            self.uninstall(name)
            return
        fingerprint = _fingerprint(crd)
        current = self.installed.get(name)
        if current is not None and current.fingerprint == fingerprint:
            terminating = crds.is_true(crd, crds.TERMINATING)
            for key in current.keys:  # conditions change without a rebuild
                strategy = self.stores[key].strategy
                if isinstance(strategy, CustomResourceStrategy):
                    strategy.terminating = terminating
            if any(rt.terminating != terminating for rt in self.scheme.installed(name)):
                # discovery's verbs follow; the stores (and their watches) stay
                self.scheme.install(
                    name,
                    crds.served_types(crd),
                    crds.definitions(crd),
                    crds.published_definitions(crd),
                )
            return
        self.install(crd, fingerprint)

    def install(self, crd: Obj, fingerprint: bytes) -> None:
        name = crd["metadata"]["name"]
        self._drop_stores(name)
        types = crds.served_types(crd)
        storage = self.crd_store.storage
        keys: list[Key] = []
        for rt in types:
            strategy = CustomResourceStrategy(rt, crd)
            store = self._make_store(rt, self._view(crd, rt, strategy, storage), strategy)
            key = (rt.group, rt.version, rt.plural)
            self.stores[key] = store
            self.tables.custom[key] = printer_for(crd, rt.version)
            keys.append(key)
        self.installed[name] = Installed(fingerprint, keys)
        if types:
            self.converters[(types[0].group, types[0].plural)] = self._converter(crd)
        self.scheme.install(name, types, crds.definitions(crd), crds.published_definitions(crd))
        log.info(
            "Serving {crd} ({versions})", crd=name, versions=",".join(crds.served_versions(crd))
        )

    def uninstall(self, name: str) -> None:
        if name not in self.installed:
            return
        self._drop_stores(name)
        del self.installed[name]
        self.scheme.uninstall(name)
        log.info("No longer serving {crd}", crd=name)

    def _drop_stores(self, name: str) -> None:
        current = self.installed.get(name)
        prefixes = set()
        for key in current.keys if current is not None else ():
            self.converters.pop((key[0], key[2]), None)
            store = self.stores.pop(key, None)
            self.tables.custom.pop(key, None)
            if store is not None:
                prefixes.add(store.prefix)
        for prefix in prefixes:
            self._on_removed(prefix)

    def store_for(self, name: str) -> Store | None:
        """A store of the CRD's instances (any served version: they share one prefix)."""
        current = self.installed.get(name)
        if current is None or not current.keys:
            return None
        return self.stores.get(current.keys[0])

    def _converter(self, crd: Obj) -> AsyncConvert:
        """One object to another served version, as the CRD converts (a webhook too)."""
        webhook = webhook_converter_for(crd, self.resolver, self.reactor, self.review_group)
        convert = converter_for(crd)

        async def to(obj: Obj, api_version: str) -> Obj:
            if webhook is not None:
                return (await webhook.convert([obj], api_version, obj))[0]
            return convert(obj, api_version) or obj

        return to

    def _view(
        self, crd: Obj, rt: ResourceType, strategy: CustomResourceStrategy, storage: Storage
    ) -> Storage:
        """The raw storage when objects are served as stored, else a converting view."""
        served = rt.api_version
        storage_version = f"{rt.group}/{crds.storage_version(crd)}"
        webhook = webhook_converter_for(crd, self.resolver, self.reactor, self.review_group)
        if webhook is not None:
            stored_as = schema_for(crd, crds.storage_version(crd))
            return _webhook_view(storage, webhook, strategy, stored_as, served, storage_version)
        convert = converter_for(crd)
        if served == storage_version and not strategy.has_defaults:
            return storage
        stored_as = schema_for(crd, crds.storage_version(crd))

        def out(obj: Obj) -> Obj | None:
            converted = convert(obj, served)
            if converted is not None:
                converted = coerced(converted, strategy.compiled)
            defaulted = strategy.default_on_read(converted or obj)
            return defaulted or converted

        def into(obj: Obj) -> Obj:
            converted = convert(obj, storage_version)
            return obj if converted is None else coerced(converted, stored_as)

        return StorageView(storage, out, into)


def _webhook_view(
    storage: Storage,
    webhook: WebhookConverter,
    strategy: CustomResourceStrategy,
    stored_as: CompiledSchema,
    served: str,
    storage_version: str,
) -> AsyncStorageView:
    kind = strategy.resource.kind

    async def out_many(objs: list[Obj]) -> list[Obj]:
        # kube decodes a list's items one by one: a failure names an item's kind
        what = {"apiVersion": objs[0].get("apiVersion", ""), "kind": kind}
        converted = await webhook.convert(objs, served, what)
        shaped = [coerced(obj, strategy.compiled) for obj in converted]
        return [strategy.default_on_read(obj) or obj for obj in shaped]

    async def into(obj: Obj) -> Obj:
        return coerced((await webhook.convert([obj], storage_version, obj))[0], stored_as)

    return AsyncStorageView(storage, out_many, into)


def instance_prefix(crd: Obj) -> bytes:
    """Where a CRD's instances live, whatever version serves them."""
    spec = crd["spec"]
    rt = ResourceType(
        group=spec["group"],
        version="",
        kind=spec["names"]["kind"],
        plural=spec["names"]["plural"],
        singular="",
        namespaced=spec.get("scope") == "Namespaced",
    )
    return resource_prefix(rt)
