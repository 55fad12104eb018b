"""The namespace controller: empties a terminating namespace, then lets it go.

As kube's namespaced-resources deleter: every namespaced object in the namespace is
deleted (finalizers honoured, so it may take several rounds), then the ``kubernetes``
finalizer is removed through ``/finalize`` and the namespace itself deleted.  Each round
writes kube's deletion conditions to the namespace's status (namespaceconditions.py):
what is left, and which finalizers hold it, is what a user reads of a namespace stuck
Terminating.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.controllers.namespaceconditions import Remaining, with_conditions
from platform_api.registry.namespaces import KUBERNETES_FINALIZER
from platform_api.registry.store import Store
from platform_api.storage.interface import Event, ListOptions
from platform_api.timestamps import format_timestamp

RETRY = 1.0  # seconds until a namespace whose content is still going is looked at again


class NamespaceController(Controller):
    name = "namespace-controller"

    def __init__(self, namespaces: Store, stores: Iterable[Store], *args: Any) -> None:
        super().__init__(*args)
        self.namespaces = namespaces
        self.prefix = namespaces.prefix
        self._stores = stores  # a live view: custom resource stores come and go

    @property
    def stores(self) -> list[Store]:
        """The namespaced stores now, one per key prefix (a CRD's versions share one)."""
        seen: dict[bytes, Store] = {}
        for store in list(self._stores):
            if store.resource.namespaced:
                seen.setdefault(store.prefix, store)
        return list(seen.values())

    def resync(self) -> None:
        for stored in self.namespaces.list("", ListOptions()).items:
            if stored.object["metadata"].get("deletionTimestamp"):
                self.enqueue(stored.object["metadata"]["name"])

    def observe(self, event: Event) -> None:
        if event.stored is not None and event.type != "DELETED":
            meta = event.stored.object["metadata"]
            if meta.get("deletionTimestamp"):
                self.enqueue(meta["name"])

    async def sync(self, name: str) -> float | None:
        try:
            namespace = self.namespaces.get("", name).object
        except errors.StatusError:
            return None  # already gone
        if not namespace["metadata"].get("deletionTimestamp"):
            return None
        if KUBERNETES_FINALIZER in (namespace.get("spec", {}).get("finalizers") or []):
            remaining = await self._delete_content(name)
            await self._report(name, remaining)
            if remaining.resources:
                return RETRY
            await self._finalize(name)
        try:
            await self.namespaces.delete("", name)
        except errors.StatusError as e:
            if e.code != 404:
                raise
        return None

    async def _delete_content(self, namespace: str) -> Remaining:
        """Delete what is left; returns what is still there (a pod terminating for its
        grace period, an object held by finalizers)."""
        remaining = Remaining()
        for store in self.stores:
            items = store.list(namespace, ListOptions()).items
            for stored in items:
                if stored.object["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    name = stored.object["metadata"]["name"]
                    # as kube's namespace deleter: dependents go too (a Job's pods)
                    await store.delete(namespace, name, propagation="Background")
                except errors.StatusError as e:
                    if e.code != 404:
                        raise
            if items:  # one more look: what had no finalizers is gone already
                left = store.list(namespace, ListOptions()).items
                remaining.count(store.resource, [s.object for s in left])
        return remaining

    async def _report(self, name: str, remaining: Remaining) -> None:
        """Write the deletion conditions when they changed (kube's UpdateStatus)."""
        now = format_timestamp(float(self.reactor.seconds()))

        def report(existing: dict[str, Any] | None) -> dict[str, Any]:
            assert existing is not None
            return with_conditions(existing, remaining, now) or existing

        current = self.namespaces.get("", name).object
        if with_conditions(current, remaining, now) is not None:
            await errors.tolerating(
                self.namespaces.update("", name, report, subresource="status"), 404, 409
            )

    async def _finalize(self, name: str) -> None:
        def drop_finalizer(existing: dict[str, Any] | None) -> dict[str, Any]:
            assert existing is not None
            spec = existing.setdefault("spec", {})
            spec["finalizers"] = [
                f for f in spec.get("finalizers") or [] if f != KUBERNETES_FINALIZER
            ]
            return existing

        await self.namespaces.update("", name, drop_finalizer, subresource="finalize")
