"""kube's serviceaccount-controller: every active namespace has a ``default`` ServiceAccount.

Created when a namespace appears (or at start, for namespaces without one) and again when
someone deletes it; a terminating namespace gets none, as in kube.  Clients and operators
count on it: pods name it by default, and upstream's e2e framework waits for it in every
namespace it makes.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event, ListOptions

DEFAULT = "default"
Obj = dict[str, Any]


class ServiceAccountsController(Controller):
    name = "serviceaccount-controller"

    def __init__(self, namespaces: Store, accounts: Store, *args: Any) -> None:
        super().__init__(*args)
        self.namespaces = namespaces
        self.accounts = accounts

    def resync(self) -> None:
        for stored in self.namespaces.list("", ListOptions()).items:
            self.enqueue(stored.object["metadata"]["name"])

    def watched(self) -> tuple[bytes, ...]:
        return (self.namespaces.prefix, self.accounts.prefix)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.namespaces.prefix):
            if event.type != DELETED:
                self.enqueue(self.namespaces.name_of_key(event.key))
        elif (
            event.key.startswith(self.accounts.prefix)
            and event.type == DELETED
            and event.prev is not None
            and self.accounts.name_of_key(event.key) == DEFAULT
        ):
            self.enqueue(event.prev.object["metadata"].get("namespace", ""))

    async def sync(self, namespace: str) -> float | None:
        try:
            ns = self.namespaces.get("", namespace).object
        except errors.StatusError:
            return None  # gone
        if (
            ns["metadata"].get("deletionTimestamp")
            or ns.get("status", {}).get("phase") == "Terminating"
        ):
            return None
        try:
            self.accounts.get(namespace, DEFAULT)
            return None
        except errors.StatusError as e:
            if e.code != 404:
                raise
        account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT}}
        try:
            await self.accounts.create(namespace, account)
        except errors.StatusError as e:
            if e.code != 409:  # someone made it meanwhile: that is the goal
                raise
        return None
