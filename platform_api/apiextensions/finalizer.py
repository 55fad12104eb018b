"""Deleting a CRD deletes its instances first: kube's CRD finalizer controller.

A CRD being deleted carries the ``customresourcecleanup`` finalizer.  This controller
marks it ``Terminating`` (instance deletion in progress), deletes every instance
(their own finalizers honoured, so it may take several rounds), then records the
outcome and drops the finalizer, which lets the CRD go and its routes disappear.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api import errors
from platform_api.apiextensions import crd as crds
from platform_api.controllers.base import Controller
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event, ListOptions

Obj = dict[str, Any]
RETRY = 0.5  # seconds until instances that are still finalizing are looked at again


class CRDFinalizer(Controller):
    name = "crd-finalizer"
    queue = "crd_finalizer"
    manager = APISERVER  # kube runs it inside the API server

    def __init__(
        self, crd_store: Store, instances: Callable[[str], Store | None], *args: Any
    ) -> None:
        super().__init__(*args)
        self.crd_store = crd_store
        self.prefix = crd_store.prefix
        self.instances = instances

    def resync(self) -> None:
        for stored in self.crd_store.list("", ListOptions()).items:
            self._consider(stored.object)

    def observe(self, event: Event) -> None:
        if event.stored is not None and event.type != DELETED:
            self._consider(event.stored.object)

    def _consider(self, crd: Obj) -> None:
        if _cleaning_up(crd):
            self.enqueue(crd["metadata"]["name"])

    async def sync(self, name: str) -> float | None:
        try:
            crd = self.crd_store.get("", name).object
        except errors.StatusError:
            return None
        if not _cleaning_up(crd):
            return None
        condition = crds.find_condition(crd, crds.TERMINATING) or {}
        progress = ("True", "InstanceDeletionInProgress", "CustomResource deletion is in progress")
        if condition.get("reason") != progress[1] and not await self._write_condition(
            name, progress
        ):
            return None
        if crds.is_true(crd, crds.ESTABLISHED):
            store = self.instances(name)
            try:
                if store is not None and await self._delete_instances(store):
                    return RETRY
            except errors.StatusError as e:  # kube's condition; the work queue retries
                failed = ("True", "InstanceDeletionFailed", f"could not issue all deletes: {e}")
                await self._write_condition(name, failed)
                return RETRY
            outcome = ("False", "InstanceDeletionCompleted", "removed all instances")
        else:
            outcome = ("False", "NeverEstablished", "resource was never established")
        await self._release(name, outcome)
        return None

    async def _delete_instances(self, store: Store) -> int:
        """Delete what is left; returns how many instances are still there.  A failed
        delete (a conversion webhook down, say) does not stop the others; the first
        failure is raised once all were tried."""
        items = store.list("", ListOptions()).items
        failures: list[errors.StatusError] = []
        for stored in items:
            meta = stored.object["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            try:
                await store.delete(meta.get("namespace", ""), meta["name"])
            except errors.StatusError as e:
                if e.code != 404:
                    failures.append(e)
        if failures:
            raise failures[0]
        return store.storage.count(store.prefix) if items else 0

    async def _write_condition(self, name: str, condition: tuple[str, str, str]) -> bool:
        def update(existing: Obj | None) -> Obj:
            assert existing is not None
            crds.set_condition(existing, crds.TERMINATING, *condition)
            return existing

        return await self._write(name, update)

    async def _release(self, name: str, outcome: tuple[str, str, str]) -> None:
        def update(existing: Obj | None) -> Obj:
            assert existing is not None
            crds.set_condition(existing, crds.TERMINATING, *outcome)
            meta = existing["metadata"]
            left = [f for f in meta.get("finalizers") or [] if f != crds.CLEANUP_FINALIZER]
            if left:
                meta["finalizers"] = left
            else:
                meta.pop("finalizers", None)
            return existing

        await self._write(name, update)

    async def _write(self, name: str, update: Any) -> bool:
        try:
            await self.crd_store.update("", name, update, subresource="status")
        except errors.StatusError as e:
            if e.code in (404, 409):
                return False  # gone or changed meanwhile: its next event brings it back
            raise
        return True


def _cleaning_up(crd: Obj) -> bool:
    meta = crd["metadata"]
    return bool(meta.get("deletionTimestamp")) and crds.CLEANUP_FINALIZER in (
        meta.get("finalizers") or []
    )
