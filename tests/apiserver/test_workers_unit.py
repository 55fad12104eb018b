"""The parts of --workers that need no second process: locks, slots, states, argv."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest
from twisted.internet.defer import CancelledError
from twisted.internet.task import Clock

from platform_api.apiserver.assembly import ServerAssembly
from platform_api.apiserver.config import ConfigError, from_flags
from platform_api.apiserver.processlock import ProcessLock
from platform_api.apiserver.storagebackend import EtcdBackend, LMDBBackend
from platform_api.apiserver.tap import Options
from platform_api.apiserver.workers import plugin_arguments
from platform_api.apiserver.workerslot import (
    WAKE_GAP,
    WORKER_ENV,
    WakeSiblings,
    WorkerSlot,
    WorkerStates,
)


def test_one_holder_at_a_time_and_the_next_waits(tmp_path: Path) -> None:
    clock = Clock()
    first = ProcessLock(str(tmp_path / "lock"), clock)
    second = ProcessLock(str(tmp_path / "lock"), clock)
    assert first.try_acquire() and first.held
    ran: list[str] = []
    second.when_acquired(lambda: ran.append("second"))
    clock.advance(1)
    assert ran == [] and not second.held
    first.release()
    clock.advance(0.05)
    assert ran == ["second"] and second.held
    second.release()


def test_a_waiting_acquire_can_be_cancelled(tmp_path: Path) -> None:
    clock = Clock()
    holder = ProcessLock(str(tmp_path / "lock"), clock)
    assert holder.try_acquire()
    waiter = ProcessLock(str(tmp_path / "lock"), clock)
    d = waiter.acquire()
    d.cancel()
    failure = []
    d.addErrback(failure.append)
    assert failure[0].check(CancelledError)
    holder.release()
    clock.advance(1)
    assert not waiter.held


def test_release_cancels_a_pending_when_acquired(tmp_path: Path) -> None:
    clock = Clock()
    holder = ProcessLock(str(tmp_path / "lock"), clock)
    assert holder.try_acquire()
    waiter = ProcessLock(str(tmp_path / "lock"), clock)
    waiter.when_acquired(lambda: pytest.fail("must not run"))
    waiter.release()
    holder.release()
    clock.advance(5)
    assert not waiter.held


def test_the_slot_comes_from_the_environment() -> None:
    env = {
        "PLATFORM_APISERVER_WORKER": "1/3",
        "PLATFORM_APISERVER_FDS": "3,4,5",
        "PLATFORM_APISERVER_WAKE_PORTS": "1000,1001,1002",
    }
    slot = WorkerSlot.from_environment(env)
    assert slot == WorkerSlot(1, 3, 3, 4, 5, (1000, 1001, 1002))
    assert WorkerSlot.from_environment({}) is None


class Sent:
    """A datagram transport that keeps what was written, with when."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.sent: list[tuple[float, bytes, object]] = []

    def write(self, data: bytes, address: object) -> None:
        self.sent.append((self.clock.seconds(), data, address))


def test_commits_close_together_share_one_wake_per_sibling() -> None:
    clock = Clock()
    clock.advance(100)
    siblings = WakeSiblings(WorkerSlot(0, 3, 3, 4, 5, (1000, 1001, 1002)), lambda: None, clock)
    siblings.transport = transport = Sent(clock)  # type: ignore[assignment]
    siblings.notify()  # the first commit wakes every sibling at once
    assert transport.sent == [
        (100, b"!", ("127.0.0.1", 1001)),
        (100, b"!", ("127.0.0.1", 1002)),
    ]
    clock.advance(WAKE_GAP / 4)
    siblings.notify()  # within the gap: one wake is due at its end, for both commits
    clock.advance(WAKE_GAP / 4)
    siblings.notify()
    assert len(transport.sent) == 2
    clock.advance(WAKE_GAP / 2)
    assert [when for when, _, _ in transport.sent[2:]] == pytest.approx([100 + WAKE_GAP] * 2)
    clock.advance(WAKE_GAP * 10)
    siblings.notify()  # long after the last wake: at once again
    assert [when for when, _, _ in transport.sent[4:]] == pytest.approx([100 + WAKE_GAP * 11] * 2)


def test_a_stopping_worker_sends_no_wake_left_due() -> None:
    clock = Clock()
    siblings = WakeSiblings(WorkerSlot(0, 2, 3, 4, 5, (1000, 1001)), lambda: None, clock)
    siblings.transport = transport = Sent(clock)  # type: ignore[assignment]
    siblings.notify()
    siblings.notify()
    siblings.stop()
    clock.advance(1)
    assert len(transport.sent) == 1
    assert not clock.getDelayedCalls()


def test_news_heard_as_a_worker_stops_reads_no_log() -> None:
    """News can come in the turn the worker stops, and its storage is closed next: the
    log read it made due is cancelled, and news after that is not heard."""
    clock = Clock()
    woken: list[int] = []
    siblings = WakeSiblings(WorkerSlot(0, 2, 3, 4, 5, (1000, 1001)), lambda: woken.append(1), clock)
    siblings.heard()
    siblings.heard()  # one read per turn
    clock.advance(0)
    assert woken == [1]
    siblings.heard()
    siblings.stop()
    siblings.heard()
    clock.advance(1)
    assert woken == [1]
    assert not clock.getDelayedCalls()


def test_worker_states_are_read_from_the_supervisors_file(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    path = tmp_path / "run" / "workers.json"
    path.write_bytes(orjson.dumps({"0": {"state": "ready"}, "1": {"state": "restarting"}}))
    states = WorkerStates(str(tmp_path), 3)
    checks = states.health_checks()
    assert [c.name for c in checks] == ["worker-0", "worker-1", "worker-2"]
    assert [c.check() for c in checks] == [None, "restarting", "unknown"]
    path.write_bytes(orjson.dumps({"0": {"state": "ready"}, "1": {"state": "ready"}}))
    os.utime(path, (1, 1))  # a new mtime: re-read
    assert checks[1].check() is None


def test_a_missing_or_torn_states_file_fails_the_checks(tmp_path: Path) -> None:
    states = WorkerStates(str(tmp_path), 1)
    assert states.check(0) == "unknown"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "workers.json").write_bytes(b"{")
    assert states.check(0) == "unknown"


def test_the_workers_get_the_flags_after_the_plugin_name() -> None:
    """All of them, the inert and deprecated ones too: /flagz shows them."""
    argv = ["twistd", "-n", "--logfile", "x", "platform-apiserver", "--workers", "2", "--v", "1"]
    assert plugin_arguments(argv) == ["--workers", "2", "--v", "1"]
    assert plugin_arguments(["twistd"]) == []


def test_a_worker_does_not_repeat_the_notices(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--v=1", "--audit-webhook-batch-initial-backoff=5s"]
    Options().parseOptions(argv)
    assert "Flag --v changes nothing" in capsys.readouterr().err
    monkeypatch.setenv(WORKER_ENV, "0/2")
    options = Options()
    options.parseOptions(argv)
    assert capsys.readouterr().err == ""
    assert options.config.flags_given == {
        "v": "1",
        "audit-webhook-batch-initial-backoff": "5s",
        "audit-webhook-initial-backoff": "5s",
    }


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("0", "--workers must be at least 1"),
        ("-1", "--workers must be at least 1"),
        ("65", "--workers must be at most 64"),  # each a whole server; 100000 ran out of fds
        (
            "1.5",
            'invalid argument "1.5" for "--workers" flag: strconv.ParseInt: parsing "1.5": invalid syntax',
        ),
    ],
)
def test_workers_flag(value: str, why: str) -> None:
    assert from_flags({"workers": "4"}).workers == 4
    assert from_flags({}).workers == 1
    with pytest.raises(ConfigError) as e:
        from_flags({"workers": value})
    assert str(e.value) == why


@pytest.mark.parametrize(
    ("slot", "backend", "polls"),
    [
        (None, LMDBBackend, False),  # alone: every commit is its own
        (object(), LMDBBackend, True),  # workers share LMDB's change log
        (None, EtcdBackend, False),
        (object(), EtcdBackend, False),  # each replica has its own etcd watch
    ],
)
def test_only_workers_on_lmdb_follow_a_shared_change_log(
    slot: object, backend: type, polls: bool
) -> None:
    # On etcd the poll and the look before each request found nothing new, and cost an
    # idle replica 3% of a core.
    service = SimpleNamespace(slot=slot, backend=backend)
    assert ServerAssembly.shares_change_log(service) is polls  # type: ignore[arg-type]


def test_the_supervisor_parses_flags_without_loading_the_server() -> None:
    """Parsing the flags (and so ``--help``) stays light: the supervisor imports the
    server only once it is to start workers, which it forks with it imported.  Checking
    a config file may load more; the defaults may not load the request path, CEL, the
    resource registry, twisted.web's server or treq."""
    code = (
        "import sys\n"
        "from platform_api.apiserver.tap import Options\n"
        "from platform_api.apiserver.workers import WorkerSupervisor\n"
        "Options().parseOptions(['--workers', '2', '--data-dir', sys.argv[1]])\n"
        "heavy = ('platform_api.endpoints', 'platform_api.cel', 'platform_api.registry', "
        "'platform_api.admission.chain', 'platform_api.apiserver.service', 'twisted.web.server', "
        "'treq')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    with tempfile.TemporaryDirectory() as data_dir:
        loaded = subprocess.run(
            [sys.executable, "-c", code, data_dir], check=True, capture_output=True, text=True
        )
    assert loaded.stdout.strip() == "[]", loaded.stdout


def test_a_server_on_lmdb_without_encryption_loads_no_etcd_or_kms_client() -> None:
    """Every worker imports the whole server before it serves; the etcd client and the
    encryption providers (gRPC, PyNaCl) are ~40 ms of that, and a server on LMDB that
    does not encrypt uses neither.  The etcd package's names still resolve on use."""
    code = (
        "import sys\n"
        "import platform_api.apiserver.tap, platform_api.apiserver.service\n"
        "unused = ('grpc', 'nacl', 'platform_api.storage.encryption', "
        "'platform_api.storage.etcd.client', 'platform_api.storage.etcd.proto')\n"
        "print(sorted(m for m in sys.modules if m.startswith(unused)))\n"
        "from platform_api.storage.etcd import EtcdClient, proto, prefix_end\n"
        "print(EtcdClient.__module__, proto.__name__, prefix_end(b'a'))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    )
    assert loaded.stdout.splitlines() == [
        "[]",
        "platform_api.storage.etcd.client platform_api.storage.etcd.proto b'b'",
    ]


def test_only_a_siblings_datagrams_are_heard() -> None:
    """Any local process can send to a loopback port: a wake, a metrics question or a
    reset from one that is not a sibling's wake socket does nothing."""
    clock = Clock()
    woken: list[int] = []
    siblings = WakeSiblings(WorkerSlot(0, 2, 3, 4, 5, (1000, 1001)), lambda: woken.append(1), clock)
    messages: list[bytes] = []
    siblings.on_message = lambda data, _: messages.append(data)
    for stranger in [("127.0.0.1", 4242), ("127.0.0.1", 1000), ("10.0.0.1", 1001)]:
        for datagram in (b"!", b"?token", b"~"):
            siblings.datagramReceived(datagram, stranger)
    clock.advance(0)
    assert (woken, messages) == ([], [])
    siblings.datagramReceived(b"!", ("127.0.0.1", 1001))
    siblings.datagramReceived(b"?token", ("127.0.0.1", 1001))
    clock.advance(0)
    assert (woken, messages) == ([1], [b"?token"])
