"""The API servers' address leases (kube's ``masterleases``): which servers are alive.

Each API server keeps one record under ``/registry/masterleases/<ip>`` (an Endpoints
object holding its advertised address, as kube stores it) and renews it at every
reconcile; the ``lease`` endpoint reconciler lists the live ones to know which addresses
the ``kubernetes`` Service's Endpoints should hold.  kube gives the key an etcd lease of
the TTL; the storage interface has no TTL (LMDB has none), so the record carries its
expiry and whoever lists the leases skips the lapsed ones and deletes them.  Expiry is
read against the reader's clock, as kube's apiserver identity Leases are: replicas on
several machines need their clocks in step to within a few seconds of the TTL.
"""

from __future__ import annotations

import contextlib
from typing import Any

from twisted.internet.interfaces import IReactorTime

from platform_api.storage.interface import (
    KEY_NOT_FOUND,
    ListOptions,
    Preconditions,
    Storage,
    StorageError,
    readable,
)

# Registry keys: ``/core/masterleases/<ip>``, kept in etcd at kube's own place.
PREFIX = b"/core/masterleases/"
EXPIRES = "masterleases.platform.io/expires"  # seconds since the epoch, by the renewer's clock
TTL = 15.0  # kube's DefaultEndpointReconcilerTTL
_ALL = ListOptions()


def _expiry(obj: dict[str, Any]) -> float:
    try:
        return float((obj.get("metadata") or {}).get("annotations", {})[EXPIRES])
    except (KeyError, TypeError, ValueError):
        return 0.0  # a record of another writer's (or a damaged one): lapsed


class MasterLeases:
    def __init__(self, storage: Storage, clock: IReactorTime, ttl: float = TTL) -> None:
        self.storage = storage
        self.clock = clock
        self.ttl = ttl

    async def update(self, ip: str) -> None:
        """Create or renew this server's record (kube bumps its generation, so that every
        renewal is a write and refreshes the TTL)."""
        expires = self.clock.seconds() + self.ttl

        def renew(current: dict[str, Any] | None, _stored: Any) -> dict[str, Any]:
            meta = (current or {}).get("metadata") or {}
            return {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {
                    "name": ip,
                    "generation": int(meta.get("generation") or 0) + 1,
                    "annotations": {EXPIRES: f"{expires:.3f}"},
                },
                "subsets": [{"addresses": [{"ip": ip}]}],
            }

        await self.storage.guaranteed_update(PREFIX + ip.encode(), renew, ignore_not_found=True)

    def list_live(self) -> list[str]:
        """The addresses of the servers whose records have not lapsed."""
        now = self.clock.seconds()
        found = readable(self.storage.get_list(PREFIX, _ALL).items)
        return [s.object["metadata"]["name"] for s in found if _expiry(s.object) > now]

    async def collect(self) -> None:
        """Delete lapsed records: etcd's lease expiry, done by the servers still alive.  A
        record renewed meanwhile keeps (the delete is conditional on its version)."""
        now = self.clock.seconds()
        for stored in readable(self.storage.get_list(PREFIX, _ALL).items):
            if _expiry(stored.object) > now:
                continue
            version = Preconditions(resource_version=str(stored.revision))
            with contextlib.suppress(StorageError):  # renewed or deleted meanwhile
                await self.storage.delete(stored.key, preconditions=version)

    async def remove(self, ip: str) -> bool:
        """Delete this server's record; False when there was none."""
        try:
            await self.storage.delete(PREFIX + ip.encode())
        except StorageError as e:
            if e.code != KEY_NOT_FOUND:
                raise
            return False
        return True
