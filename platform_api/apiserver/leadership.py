"""Which of several servers runs the controllers and the compactor.

- Processes sharing one LMDB data directory (``--workers N``) are on one machine: an
  ``flock`` (processlock.py) decides, and passes at once when its holder dies.
- Replicas on etcd may be on many machines: client-go's leader election on the Lease
  ``platform-system/platform-controller-manager`` decides, the one a separate
  ``twistd platform-controller-manager`` takes too, so the in-server controllers and a
  separate manager never run at once.  A server running none of kube-controller-manager's
  controllers (``--controllers=``) elects on a Lease of its own (``SERVER_LEASE_NAME``)
  for kube-apiserver's controllers and the compactor, and leaves the manager's free.  The
  server reads and writes the Lease through its own stores (``StoreClient``), as a
  controller manager would through the API.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from twisted.logger import Logger

from platform_api.apiserver.processlock import ProcessLock
from platform_api.client.rest import Resource
from platform_api.controllers.leaderelection import LeaderElector, identity
from platform_api.registry.store import Store
from platform_api.scheme import namespaces

log = Logger()
LEASE_NAMESPACE = namespaces.SYSTEM
LEASE_NAME = "platform-controller-manager"
SERVER_LEASE_NAME = "platform-apiserver-controllers"
Obj = dict[str, Any]


class Leadership(Protocol):
    def start(self, on_started: Callable[[], None], on_stopped: Callable[[], None]) -> None: ...

    async def release(self) -> None:
        """Before stopping: let a successor lead at once."""

    def stop(self) -> None: ...


class FlockLeadership:
    def __init__(self, lock: ProcessLock) -> None:
        self.lock = lock

    def start(self, on_started: Callable[[], None], on_stopped: Callable[[], None]) -> None:
        self.lock.when_acquired(on_started)  # held until this process ends

    async def release(self) -> None:
        """The lock passes when ``stop`` lets it go (or the process ends)."""

    def stop(self) -> None:
        self.lock.release()


class StoreClient:
    """The REST client's get/create/update over this server's own stores."""

    def __init__(self, stores: dict[tuple[str, str, str], Store]) -> None:
        self.stores = stores

    def _store(self, resource: Resource) -> Store:
        return self.stores[(resource.group, resource.version, resource.plural)]

    async def get(self, resource: Resource, namespace: str, name: str) -> Obj:
        return self._store(resource).get(namespace, name).copy()

    async def create(self, resource: Resource, namespace: str, obj: Obj) -> Obj:
        return (await self._store(resource).create(namespace, obj)).copy()

    async def update(self, resource: Resource, namespace: str, obj: Obj) -> Obj:
        name = obj["metadata"]["name"]
        stored, _ = await self._store(resource).update(namespace, name, lambda _: obj)
        return stored.copy()


class LeaseLeadership:
    def __init__(
        self, stores: dict[tuple[str, str, str], Store], reactor: Any, name: str = LEASE_NAME
    ) -> None:
        self.client = StoreClient(stores)
        self.reactor = reactor
        self.name = name
        self.identity = identity()
        self.elector: LeaderElector | None = None

    def start(self, on_started: Callable[[], None], on_stopped: Callable[[], None]) -> None:
        def lost() -> None:
            log.warn("lost the controllers' Lease; standing by")
            on_stopped()
            self.start(on_started, on_stopped)  # a candidate again

        self.elector = LeaderElector(
            self.client,
            self.reactor,
            LEASE_NAMESPACE,
            self.name,
            self.identity,
            on_started=on_started,
            on_stopped=lost,
        )
        self.elector.start()

    async def release(self) -> None:
        if self.elector is not None:
            self.elector.stop()  # no renewal may follow the release
            await self.elector.release()

    def stop(self) -> None:
        if self.elector is not None:
            self.elector.stop()
