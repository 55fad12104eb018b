"""Charges admission made for objects not yet stored, shared with the quota controller.

Admission charges a quota before the object is written.  A controller recount between
the two would not see the object and would give its charge back, letting the next
request through a full quota.  So each charge of a create is remembered (by the new
object's uid) until the object is seen stored or a short hold runs out (its write
failed); recounts add the charges still outstanding.  Admission and the recount of a
namespace also take turns (``locked``), so neither writes a quota from a stale read.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import DeferredLock

from platform_api.admission.quota.resources import ResourceList, add

HOLD = 10.0  # seconds: longer than any write takes after its admission


@dataclass
class Charge:
    uid: str
    delta: ResourceList
    at: float


@dataclass
class PendingCharges:
    """Outstanding charges by (namespace, quota name)."""

    clock: Callable[[], float] = time.monotonic
    charges: dict[tuple[str, str], list[Charge]] = field(default_factory=dict)
    locks: dict[str, DeferredLock] = field(default_factory=dict)

    @asynccontextmanager
    async def locked(self, namespace: str) -> AsyncIterator[None]:
        """One reader-writer of a namespace's quotas at a time (kube's per-namespace queue)."""
        lock = self.locks.setdefault(namespace, DeferredLock())
        await lock.acquire()
        try:
            yield
        finally:
            lock.release()
            if not lock.locked and not lock.waiting:
                self.locks.pop(namespace, None)

    def add(self, namespace: str, quota: str, uid: str, delta: ResourceList) -> Charge:
        charge = Charge(uid, delta, self.clock())
        self.charges.setdefault((namespace, quota), []).append(charge)
        return charge

    def discard(self, namespace: str, quota: str, charge: Charge) -> None:
        held = self.charges.get((namespace, quota), [])
        if charge in held:
            held.remove(charge)
        if not held:
            self.charges.pop((namespace, quota), None)

    def holds(self, namespace: str) -> bool:
        return any(ns == namespace for ns, _ in self.charges)

    def seen(self, namespace: str, uid: str) -> None:
        """The object was written (or deleted): its charges are no longer in flight."""
        for key in [k for k in self.charges if k[0] == namespace]:
            held = [c for c in self.charges[key] if c.uid != uid]
            if held:
                self.charges[key] = held
            else:
                del self.charges[key]

    def outstanding(self, namespace: str, quota: str, stored: Collection[str]) -> ResourceList:
        """The sum of charges whose objects are not among ``stored`` uids; the others,
        and those past their hold, are forgotten."""
        now = self.clock()
        key = (namespace, quota)
        held = [c for c in self.charges.get(key, []) if c.uid not in stored and now - c.at < HOLD]
        if held:
            self.charges[key] = held
        else:
            self.charges.pop(key, None)
        total: ResourceList = {}
        for charge in held:
            total = add(total, charge.delta)
        return total

    def next_expiry(self, namespace: str, quota: str) -> float | None:
        """Seconds until the oldest outstanding charge runs out (None: none held)."""
        held = self.charges.get((namespace, quota))
        if not held:
            return None
        return max(0.0, min(c.at for c in held) + HOLD - self.clock()) + 0.01


_SHARED: weakref.WeakKeyDictionary[Any, PendingCharges] = weakref.WeakKeyDictionary()


def pending_for(hub: Any) -> PendingCharges:
    """The one ledger of a server (its watch hub identifies it)."""
    ledger = _SHARED.get(hub)
    if ledger is None:
        ledger = _SHARED[hub] = PendingCharges()
    return ledger
