"""kube-apiserver's identity Lease and its garbage collector (the post-start hooks
``start-kube-apiserver-identity-lease-controller`` and ``...-garbage-collector``).

Every API server holds a Lease named by its identity (identity.py) in the system
namespace, labelled ``apiserver.kubernetes.io/identity=kube-apiserver`` and with its host
name, renewed every 10 s for an hour's duration: the list of those Leases is the list of
live API servers that tools (and kube's storage-version controllers) read.  A renewal
writes over the last Lease it wrote (no read first), and only on a conflict reads it
again, as client-go's lease controller does; the holder stays whoever created it.  Every
server also deletes, every hour, the identity Leases not renewed within their duration:
servers that are gone.
"""

from __future__ import annotations

import datetime
import socket
import uuid
from typing import Any

from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api import errors
from platform_api.apiserver.identity import COMPONENT, server_id
from platform_api.apiserver.periodic import every
from platform_api.apiserver.periodic import stop as stop_loop
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions

log = Logger()
Obj = dict[str, Any]
IDENTITY_LABEL = "apiserver.kubernetes.io/identity"
HOSTNAME_LABEL = "kubernetes.io/hostname"
PEER_ADDRESS = "kubernetes.io/peer-advertise-address"
DURATION = 3600  # kube's IdentityLeaseDurationSeconds
RENEW = 10.0  # IdentityLeaseRenewIntervalPeriod
GC_PERIOD = 3600.0  # IdentityLeaseGCPeriod
_UPDATE_TRIES = 5  # client-go's maxUpdateRetries


def micro_time(seconds: float) -> str:
    """A ``metav1.MicroTime``: RFC 3339 with microseconds, in UTC."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def expired(lease: Obj, now: float) -> bool:
    """Not renewed within its duration (a Lease without either never was)."""
    spec = lease.get("spec") or {}
    renewed, duration = spec.get("renewTime"), spec.get("leaseDurationSeconds")
    if not renewed or duration is None:
        return True
    at = datetime.datetime.fromisoformat(renewed).timestamp()
    return now > at + int(duration)


def _as(obj: Obj) -> Any:
    """An update function that writes ``obj`` as it is (a PUT of it)."""
    return lambda _current: obj


class IdentityLease:
    def __init__(
        self,
        leases: Store,
        namespace: str,
        name: str,
        holder: str,
        labels: dict[str, str],
        annotations: dict[str, str],
        reactor: IReactorTime,
    ) -> None:
        self.leases = leases
        self.namespace = namespace
        self.name = name
        self.holder = holder
        self.labels = labels
        self.annotations = annotations
        self.reactor = reactor
        self.latest: Obj | None = None  # the Lease as last written
        self._loop: LoopingCall | None = None

    def start(self) -> None:
        self._loop = every(self.reactor, RENEW, self.sync, "identity lease")

    def stop(self) -> None:
        stop_loop(self._loop)

    async def sync(self) -> None:
        try:
            if self.latest is not None and await self._renew(self.latest):
                return
            lease, created = await self._ensure()
            self.latest = lease
            if lease is not None and not created:
                await self._renew(lease)
        except Exception as e:
            log.error("identity lease {name}: {error}", name=self.name, error=e)

    def _new(self, base: Obj | None) -> Obj:
        if base is None:
            lease: Obj = {
                "apiVersion": "coordination.platform.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": {"holderIdentity": self.holder, "leaseDurationSeconds": DURATION},
            }
        else:
            lease = {**base, "metadata": dict(base["metadata"]), "spec": dict(base["spec"])}
        lease["spec"]["renewTime"] = micro_time(self.reactor.seconds())
        meta = lease["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), **self.labels}
        if self.annotations:
            meta["annotations"] = {**(meta.get("annotations") or {}), **self.annotations}
        return lease

    async def _ensure(self) -> tuple[Obj | None, bool]:
        try:
            return self.leases.get(self.namespace, self.name).copy(), False
        except errors.StatusError as e:
            if e.code != 404:
                raise
        track = self.leases.tracker(APISERVER)
        stored = await self.leases.create(self.namespace, self._new(None), track=track)
        return stored.copy(), True

    async def _renew(self, base: Obj) -> bool:
        """Write the renewal over ``base``; on a conflict read the Lease and try again."""
        for _ in range(_UPDATE_TRIES):
            try:
                stored, _ = await self.leases.update(
                    self.namespace,
                    self.name,
                    _as(self._new(base)),
                    track=self.leases.tracker(APISERVER),
                )
            except errors.StatusError as e:
                log.error("Failed to update lease {name}: {error}", name=self.name, error=e)
                if e.code != 409:
                    continue
                found, _ = await self._ensure()
                if found is None:
                    return False
                base = found
                continue
            self.latest = stored.copy()
            return True
        return False


class IdentityLeaseCollector:
    """Deletes identity Leases that lapsed: each is read again before it goes, since
    another server's collector (or its holder, come back) may have got there first."""

    def __init__(
        self, leases: Store, namespace: str, reactor: IReactorTime, period: float = GC_PERIOD
    ) -> None:
        self.leases = leases
        self.namespace = namespace
        self.reactor = reactor
        self.period = period
        self._loop: LoopingCall | None = None

    def start(self) -> None:
        self._loop = every(self.reactor, self.period, self.collect, "identity lease collector")

    def stop(self) -> None:
        stop_loop(self._loop)

    def _identity(self, lease: Obj) -> bool:
        return (lease["metadata"].get("labels") or {}).get(IDENTITY_LABEL) == COMPONENT

    async def collect(self) -> None:
        now = self.reactor.seconds()
        found = self.leases.list(self.namespace, ListOptions(predicate=self._identity))
        for stored in found.items:
            name = stored.object["metadata"]["name"]
            if not expired(stored.object, now):
                continue
            try:
                fresh = self.leases.get(self.namespace, name).object
                if expired(fresh, now):
                    await self.leases.delete(self.namespace, name)
            except errors.StatusError as e:
                if e.code != 404:  # gone already: another server collected it
                    log.error("deleting lease {name}: {error}", name=name, error=e)


def _host_port(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def for_server(
    leases: Store,
    namespace: str,
    advertised: str | None,
    port: int,
    peer_proxy: bool,
    reactor: IReactorTime,
) -> tuple[IdentityLease, IdentityLeaseCollector]:
    """This server's identity Lease (with the address peers would proxy to, kube's
    ``peer-advertise-address``, when that feature is on) and the collector."""
    name = server_id()
    labels = {IDENTITY_LABEL: COMPONENT, HOSTNAME_LABEL: socket.gethostname()}
    annotations = {PEER_ADDRESS: _host_port(advertised, port)} if peer_proxy and advertised else {}
    holder = f"{name}_{uuid.uuid4()}"
    lease = IdentityLease(leases, namespace, name, holder, labels, annotations, reactor)
    return lease, IdentityLeaseCollector(leases, namespace, reactor)
