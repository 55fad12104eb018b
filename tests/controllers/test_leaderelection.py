"""Leader election on a Lease, with a Clock: acquire, renew, lose, take over."""

from __future__ import annotations

import copy
from typing import Any

from twisted.internet.defer import ensureDeferred
from twisted.internet.task import Clock

from platform_api import errors
from platform_api.client.rest import Resource
from platform_api.controllers.leaderelection import LeaderElector, micro_time

Obj = dict[str, Any]


class Leases:
    """A server's Lease semantics that election relies on: 404, 409 on create and on a
    stale resourceVersion; ``down`` makes every request fail as an unreachable server."""

    def __init__(self) -> None:
        self.lease: Obj | None = None
        self.version = 0
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise ConnectionRefusedError("connection refused")

    async def get(self, resource: Resource, namespace: str, name: str) -> Obj:
        self._check()
        if self.lease is None:
            raise errors.not_found("leases", "coordination.platform.io", name)
        return copy.deepcopy(self.lease)

    async def create(self, resource: Resource, namespace: str, obj: Obj) -> Obj:
        self._check()
        if resource.plural == "events":
            return obj
        if self.lease is not None:
            raise errors.already_exists("leases", "coordination.platform.io", name=namespace)
        return self._write(obj)

    async def update(self, resource: Resource, namespace: str, obj: Obj) -> Obj:
        self._check()
        assert self.lease is not None
        if obj["metadata"]["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
            raise errors.StatusError(409, "Conflict", "the object has been modified")
        return self._write(obj)

    def _write(self, obj: Obj) -> Obj:
        self.version += 1
        self.lease = copy.deepcopy(obj)
        self.lease["metadata"]["resourceVersion"] = str(self.version)
        return copy.deepcopy(self.lease)


class Candidate:
    def __init__(self, name: str, leases: Leases, clock: Clock) -> None:
        self.events: list[str] = []
        self.elector = LeaderElector(
            leases,
            clock,
            "platform-system",
            "platform-controller-manager",
            name,
            on_started=lambda: self.events.append("started"),
            on_stopped=lambda: self.events.append("stopped"),
            jitter=lambda: 0.0,
        )
        self.elector.start()


def spec(leases: Leases) -> Obj:
    assert leases.lease is not None
    result: Obj = leases.lease["spec"]
    return result


def test_acquire_creates_the_lease_and_renews_it() -> None:
    clock, leases = Clock(), Leases()
    clock.advance(1000)
    a = Candidate("host_a", leases, clock)
    clock.advance(0)
    assert a.events == ["started"] and a.elector.leading
    first = dict(spec(leases))
    assert first == {
        "holderIdentity": "host_a",
        "leaseDurationSeconds": 15,
        "acquireTime": micro_time(1000),
        "renewTime": micro_time(1000),
        "leaseTransitions": 0,
    }
    clock.advance(2)
    assert spec(leases)["renewTime"] == micro_time(1002)
    assert spec(leases)["acquireTime"] == first["acquireTime"]
    assert spec(leases)["leaseTransitions"] == 0
    assert leases.lease is not None
    assert leases.lease["apiVersion"] == "coordination.platform.io/v1"


def test_a_held_lease_is_not_taken_while_renewed() -> None:
    clock, leases = Clock(), Leases()
    a = Candidate("host_a", leases, clock)
    clock.advance(0)
    b = Candidate("host_b", leases, clock)
    for _ in range(30):
        clock.advance(1)
    assert b.events == [] and not b.elector.leading
    assert spec(leases)["holderIdentity"] == "host_a"
    assert a.events == ["started"]


def test_takeover_after_lease_duration_and_the_old_leader_stops() -> None:
    clock, leases = Clock(), Leases()
    a = Candidate("host_a", leases, clock)
    clock.advance(0)
    b = Candidate("host_b", leases, clock)
    clock.advance(1)
    a.elector.stop()  # a dies: no more renewals
    last_renew = clock.seconds()
    while not b.elector.leading:
        clock.advance(0.5)
    waited = clock.seconds() - last_renew
    assert 15 <= waited <= 15 + 2
    assert spec(leases)["holderIdentity"] == "host_b"
    assert spec(leases)["leaseTransitions"] == 1
    assert spec(leases)["acquireTime"] == micro_time(clock.seconds())


def test_leader_that_cannot_renew_within_the_deadline_stops() -> None:
    clock, leases = Clock(), Leases()
    a = Candidate("host_a", leases, clock)
    clock.advance(0)
    leases.down = True
    clock.advance(9.9)
    assert a.events == ["started"]
    clock.advance(0.2)
    assert a.events == ["started", "stopped"]
    assert not a.elector.leading and not a.elector.running
    assert clock.getDelayedCalls() == []


def test_conflicting_writes_let_only_one_candidate_win() -> None:
    clock, leases = Clock(), Leases()
    a = Candidate("host_a", leases, clock)
    b = Candidate("host_b", leases, clock)
    clock.advance(0)
    assert [a.elector.leading, b.elector.leading].count(True) == 1
    assert spec(leases)["leaseTransitions"] == 0


def test_a_released_lease_is_taken_at_the_next_try_not_after_it_lapses() -> None:
    """client-go's ReleaseOnCancel: a server that stops gives its Lease up (no holder, 1 s),
    so the replica started in its place leads within a retry, not a lease duration."""
    clock, leases = Clock(), Leases()
    clock.advance(1000)
    a = Candidate("host_a", leases, clock)
    clock.advance(0)
    b = Candidate("host_b", leases, clock)
    clock.advance(1)
    transitions = spec(leases)["leaseTransitions"]
    a.elector.stop()
    ensureDeferred(a.elector.release())  # the in-memory Leases answer at once
    assert spec(leases) == {
        "holderIdentity": "",
        "leaseDurationSeconds": 1,
        "acquireTime": micro_time(1001),
        "renewTime": micro_time(1001),
        "leaseTransitions": transitions,
    }
    assert not a.elector.leading
    clock.advance(2)  # b's next try
    assert b.events == ["started"] and spec(leases)["holderIdentity"] == "host_b"
    assert spec(leases)["leaseTransitions"] == transitions + 1


def test_releasing_a_lease_another_holds_writes_nothing() -> None:
    clock, leases = Clock(), Leases()
    a = Candidate("host_a", leases, clock)
    clock.advance(0)
    a.elector.stop()
    assert leases.lease is not None
    leases.lease["spec"]["holderIdentity"] = "host_b"  # taken over meanwhile
    version = leases.version
    ensureDeferred(a.elector.release())
    assert leases.version == version


def test_a_release_that_fails_is_logged_and_stopping_goes_on() -> None:
    clock, leases = Clock(), Leases()
    a = Candidate("host_a", leases, clock)
    clock.advance(0)
    a.elector.stop()
    leases.down = True  # etcd unreachable while stopping
    done = ensureDeferred(a.elector.release())
    assert done.called and not a.elector.leading  # no error reaches the caller
    leases.down = False
    assert spec(leases)["holderIdentity"] == "host_a"  # it lapses as before
