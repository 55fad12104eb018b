"""client-go's leader election on a ``coordination.platform.io/v1`` Lease.

Several controller managers may run; only the one holding the Lease runs controllers.
As client-go: a candidate tries every ``retry_period`` (jittered by up to 1.2x) to take
a Lease that is free, its own, or whose holder has not renewed for
``lease_duration`` as seen on this candidate's own clock (the record's renewTime is
not trusted across clocks: what counts is when this process last saw it change).  A
leader renews every ``retry_period``; if no renewal succeeds within ``renew_deadline``
it has lost, and ``on_stopped`` runs (kube-controller-manager then exits).  A takeover
by another holder sets ``acquireTime`` and adds one to ``leaseTransitions``.
"""

from __future__ import annotations

import random
import socket
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from twisted.internet.defer import ensureDeferred
from twisted.logger import Logger

from platform_api import errors
from platform_api.client.rest import Resource
from platform_api.timers import timer_clock
from platform_api.timestamps import format_time

log = Logger()
Obj = dict[str, Any]
LEASES = Resource("coordination.platform.io", "v1", "leases", namespaced=True)
EVENTS = Resource("", "v1", "events", namespaced=True)
JITTER = 1.2


def identity() -> str:
    """kube's default: ``<hostname>_<uuid>``."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def micro_time(seconds: float) -> str:
    """A MicroTime: RFC 3339 with microseconds."""
    return format_time(datetime.fromtimestamp(seconds, UTC), micro=True)


class LeaderElector:
    """Acquire, then hold, one Lease; call back when leading starts and stops."""

    def __init__(
        self,
        client: Any,
        reactor: Any,
        namespace: str,
        name: str,
        holder: str,
        on_started: Callable[[], None],
        on_stopped: Callable[[], None],
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        wall_clock: Callable[[], float] | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.reactor = reactor
        self.namespace = namespace
        self.name = name
        self.holder = holder
        self.on_started = on_started
        self.on_stopped = on_stopped
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.wall_clock = wall_clock or reactor.seconds
        self.jitter = jitter
        self.leading = False
        self.running = False
        self.observed: tuple[str, str] | None = None  # (holderIdentity, renewTime)
        self.observed_at = 0.0  # our clock when ``observed`` last changed
        self.last_renew = 0.0
        self._call: Any = None
        self._deadline: Any = None

    @property
    def lease(self) -> str:
        return f"{self.namespace}/{self.name}"

    def start(self) -> None:
        self.running = True
        log.info('"Attempting to acquire leader lease..." lock="{lease}"', lease=self.lease)
        self._schedule(0.0)

    def stop(self) -> None:
        self.running = False
        for call in (self._call, self._deadline):
            if call is not None and call.active():
                call.cancel()

    def _schedule(self, delay: float) -> None:
        if self.running:
            self._call = self.reactor.callLater(delay, self._tick)

    def _tick(self) -> None:
        d = ensureDeferred(self.try_acquire_or_renew())
        d.addErrback(self._failed)
        d.addCallback(self._after)

    def _failed(self, failure: Any) -> bool:
        """One line, as client-go: the next attempt comes after the retry period."""
        message = getattr(failure.value, "message", None) or failure.getErrorMessage()
        log.error(
            '"Error retrieving lease lock" err="{e}" lock="{lease}"', e=message, lease=self.lease
        )
        return False

    def _after(self, ok: bool) -> None:
        if not self.running:
            return
        now = timer_clock(self.reactor)()
        if ok:
            self.last_renew = now
            self._arm_deadline()
            if not self.leading:
                self.leading = True
                log.info('"Successfully acquired lease" lock="{lease}"', lease=self.lease)
                ensureDeferred(self._record_event()).addErrback(
                    lambda f: log.warn("recording the LeaderElection event: {e}", e=f.value)
                )
                self.on_started()
            self._schedule(self.retry_period)
        elif self.leading:
            self._schedule(self.retry_period)  # the deadline decides when it is lost
        else:
            self._schedule(self.retry_period * (1 + JITTER * self.jitter()))

    def _arm_deadline(self) -> None:
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = self.reactor.callLater(self.renew_deadline, self._expired)

    def _expired(self) -> None:
        if not (self.running and self.leading):
            return
        log.info(
            '"Failed to renew lease" lock="{lease}" err="context deadline exceeded"',
            lease=self.lease,
        )
        self.leading = False
        self.stop()
        self.on_stopped()

    def _spec(self, old: Obj | None) -> Obj:
        """A fresh record, as client-go writes it: acquireTime and leaseTransitions carry
        over only when we already hold it; anything else (preferredHolder, strategy) goes."""
        now = micro_time(self.wall_clock())
        spec: Obj = {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": int(self.lease_duration),
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": 0,
        }
        if old is not None and old.get("holderIdentity") == self.holder:
            spec["acquireTime"] = old.get("acquireTime") or now
            spec["leaseTransitions"] = int(old.get("leaseTransitions") or 0)
        elif old is not None:
            spec["leaseTransitions"] = int(old.get("leaseTransitions") or 0) + 1
        return spec

    async def try_acquire_or_renew(self) -> bool:
        """One attempt, as client-go's tryAcquireOrRenew."""
        now = timer_clock(self.reactor)()
        try:
            lease = await self.client.get(LEASES, self.namespace, self.name)
        except errors.StatusError as e:
            if e.code != 404:
                raise
            body: Obj = {
                "apiVersion": "coordination.platform.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(None),
            }
            try:
                await self.client.create(LEASES, self.namespace, body)
            except errors.StatusError as e2:
                if e2.code == 409:
                    return False
                raise
            self._observe(body["spec"], now)
            return True
        spec = lease.get("spec") or {}
        self._observe(spec, now)
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.holder and self.observed_at + duration > now:
            return False  # held, and renewed recently as far as we have seen
        lease["spec"] = self._spec(spec)
        try:
            answer = await self.client.update(LEASES, self.namespace, lease)
        except errors.StatusError as e:
            if e.code == 409:
                return False  # someone else wrote it first
            raise
        written: Obj = answer.get("spec") or lease["spec"]
        self._observe(written, now)
        return True

    async def release(self) -> None:
        """Give the Lease up when leading, as client-go does with ``ReleaseOnCancel``: no
        holder and a 1 s duration, so a successor need not wait the lease out."""
        if not self.leading:
            return
        self.leading = False
        try:
            lease = await self.client.get(LEASES, self.namespace, self.name)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.holder:
                return  # lost meanwhile: not ours to give
            now = micro_time(self.wall_clock())
            lease["spec"] = {  # client-go writes the empty holder, not no holder
                "holderIdentity": "",
                "leaseDurationSeconds": 1,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": int(spec.get("leaseTransitions") or 0),
            }
            await self.client.update(LEASES, self.namespace, lease)
        except Exception as e:  # stopping goes on: the Lease then lapses as before
            message = getattr(e, "message", None) or str(e)
            log.error(
                '"Failed to release lock" err="{e}" lock="{lease}"', e=message, lease=self.lease
            )

    def _observe(self, spec: Obj, now: float) -> None:
        record = (spec.get("holderIdentity") or "", spec.get("renewTime") or "")
        if record != self.observed:
            self.observed = record
            self.observed_at = now

    async def _record_event(self) -> None:
        """kube's ``LeaderElection`` Event on the Lease: ``<identity> became leader``."""
        now = micro_time(self.wall_clock())
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            # client-go's recorder names events <object>.<unix nanoseconds in hex>
            "metadata": {
                "name": f"{self.name}.{int(self.wall_clock() * 1e9):x}",
                "namespace": self.namespace,
            },
            "involvedObject": {
                "apiVersion": "coordination.platform.io/v1",
                "kind": "Lease",
                "name": self.name,
                "namespace": self.namespace,
            },
            "reason": "LeaderElection",
            "message": f"{self.holder} became leader",
            "type": "Normal",
            "source": {"component": self.name},
            "firstTimestamp": now[:19] + "Z",
            "lastTimestamp": now[:19] + "Z",
            "count": 1,
            "reportingComponent": self.name,
            "reportingInstance": self.holder,
        }
        await self.client.create(EVENTS, self.namespace, event)
