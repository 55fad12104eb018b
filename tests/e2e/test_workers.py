"""``--workers 2``: two server processes on one port and one data directory, for real.

Connections land on whichever worker accepts first, so the tests open many of them:
writes through some reach watchers on others only through the shared change log and
the commit datagrams.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import ON_LMDB, Server, session_for, start_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    # On LMDB under every run: many of these cases are about the workers' LMDB writer.
    running = start_server(tmp_path_factory.mktemp("workers"), ON_LMDB, "--workers", "2")
    yield running
    running.stop()


def states(server: Server) -> dict[str, dict[str, object]]:
    return json.loads((server.data_dir / "run" / "workers.json").read_text())


def fresh(server: Server) -> requests.Session:
    """A session on a new connection: the kernel picks the worker."""
    return session_for(server, cert=server.admin_cert)


def wait_until(condition, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_readyz_reports_every_worker(workers: Server) -> None:
    response = fresh(workers).get(f"{workers.base_url}/readyz?verbose")
    assert response.status_code == 200
    assert "[+]worker-0 ok\n[+]worker-1 ok\nreadyz check passed\n" in response.text
    pids = {s["pid"] for s in states(workers).values()}
    assert len(pids) == 2 and workers.process.pid not in pids


def test_each_worker_is_named_for_ps_and_top(workers: Server) -> None:
    """A forked worker's command line is its supervisor's; its process name tells it."""
    names = {
        index: Path(f"/proc/{state['pid']}/comm").read_text().strip()
        for index, state in states(workers).items()
    }
    assert names == {"0": "apiserver-w0", "1": "apiserver-w1"}


def _watch(server: Server, rv: str, seen: list[dict[str, object]], stop: threading.Event) -> None:
    url = f"{server.base_url}/api/v1/namespaces/default/configmaps"
    params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "30"}
    try:
        with fresh(server).get(url, params=params, stream=True) as response:
            for line in response.iter_lines():
                if line:
                    seen.append(json.loads(line))
                if stop.is_set():
                    return
    except requests.RequestException:
        if not stop.is_set():  # the stream ending after the test is done is no failure
            raise


def test_writes_on_any_worker_reach_watchers_on_every_worker_in_order(workers: Server) -> None:
    """Concurrent writers through both workers interleave their commit batches: every
    watcher still sees every write once, in revision order, with no gap."""
    url = f"{workers.base_url}/api/v1/namespaces/default/configmaps"
    rv = fresh(workers).get(url).json()["metadata"]["resourceVersion"]
    stop = threading.Event()
    seen: list[list[dict[str, object]]] = [[] for _ in range(6)]
    threads = [
        threading.Thread(target=_watch, args=(workers, rv, s, stop), daemon=True) for s in seen
    ]
    for t in threads:
        t.start()
    time.sleep(0.5)
    created: dict[str, str] = {}

    def writer(n: int) -> None:
        session = fresh(workers)  # a keep-alive connection of its own: one worker each
        for i in range(20):
            name = f"spread-{n}-{i}"
            response = session.post(url, json={"metadata": {"name": name}, "data": {"i": "x"}})
            assert response.status_code == 201, response.text
            created[name] = response.json()["metadata"]["resourceVersion"]

    writers = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in writers:
        t.start()
    for t in writers:
        t.join(timeout=60)
    assert len(created) == 120
    assert len(set(created.values())) == 120  # one global revision
    wait_until(lambda: all(len(s) >= 120 for s in seen))
    stop.set()
    expected = sorted(created.items(), key=lambda item: int(item[1]))
    for events in seen:
        got = [
            (e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"])  # type: ignore[index]
            for e in events[:120]
        ]
        assert got == expected


def test_optimistic_concurrency_holds_across_workers(workers: Server) -> None:
    url = f"{workers.base_url}/api/v1/namespaces/default/configmaps"
    fresh(workers).post(url, json={"metadata": {"name": "cas"}})
    current = fresh(workers).get(f"{url}/cas").json()
    first = fresh(workers).put(f"{url}/cas", json={**current, "data": {"a": "1"}})
    assert first.status_code == 200
    second = fresh(workers).put(f"{url}/cas", json={**current, "data": {"a": "2"}})
    assert second.status_code == 409
    assert second.json()["reason"] == "Conflict"
    assert second.json()["message"] == (
        'Operation cannot be fulfilled on configmaps "cas": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_services_created_at_once_on_both_workers_get_distinct_addresses(
    tmp_path: Path,
) -> None:
    """Each worker allocates from its own share of the range: concurrent creates on two
    workers, before either is stored, never get one cluster IP (a small range, where
    random picks alone collide)."""
    running = start_server(
        tmp_path / "data", "--workers", "2", "--service-cluster-ip-range", "10.96.0.0/26"
    )
    url = f"{running.base_url}/api/v1/namespaces/default/services"

    def create(client: int) -> None:
        for i in range(8):
            spec = {"type": "NodePort", "ports": [{"port": 80}], "selector": {"a": "b"}}
            body = {"metadata": {"name": f"alloc-{client}-{i}"}, "spec": spec}
            assert fresh(running).post(url, json=body).status_code == 201

    try:
        threads = [threading.Thread(target=create, args=(c,)) for c in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        specs = [s["spec"] for s in fresh(running).get(url).json()["items"]]
        specs = [s for s in specs if s["ports"][0].get("nodePort")]
        assert len(specs) == 40
        assert len({s["clusterIP"] for s in specs}) == 40
        assert len({s["ports"][0]["nodePort"] for s in specs}) == 40
    finally:
        running.stop()


def _secret_404s(session: requests.Session, server: Server) -> float:
    """apiserver_request_total for GETs of absent secrets, as one scrape reports it."""
    response = session.get(f"{server.base_url}/metrics")
    assert response.status_code == 200
    for line in response.text.splitlines():
        if line.startswith("apiserver_request_total{") and all(
            part in line for part in ('code="404"', 'resource="secrets"', 'verb="GET"')
        ):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _objects(session: requests.Session, server: Server, resource: str) -> float:
    text = session.get(f"{server.base_url}/metrics").text
    prefix = f'apiserver_storage_objects{{resource="{resource}"}} '
    return float(next(line for line in text.splitlines() if line.startswith(prefix))[len(prefix) :])


def test_workload_pods_come_through_whichever_worker_takes_the_loopback(
    workers: Server,
) -> None:
    """The leader's controllers make pods over the shared port: any worker must accept
    the loopback token (the supervisor's, handed to each)."""
    made = workers.kubectl("create", "deployment", "spread", "--image=nginx", "--replicas=6")
    assert made.stdout.strip() == "deployment.apps/spread created"
    api = fresh(workers)
    url = f"{workers.base_url}/api/v1/namespaces/default/pods?labelSelector=app%3Dspread"
    wait_until(lambda: len(api.get(url).json()["items"]) == 6)
    workers.kubectl("delete", "deployment", "spread")


def test_every_scrape_reports_the_whole_server(workers: Server) -> None:
    """Whichever worker answers /metrics, its counters hold every worker's requests, and
    the object counts (which every worker reads alike) are not doubled."""
    sessions = [fresh(workers) for _ in range(6)]  # held open: the workers share them
    for session in sessions:
        session.get(f"{workers.base_url}/version")
    board = (workers.data_dir / "run" / "connections").read_bytes()
    held = struct.unpack(f"<{len(board) // 4}i", board)
    assert all(n >= 2 for n in held), held  # both workers hold some of them
    before = {_secret_404s(s, workers) for s in sessions}
    assert len(before) == 1  # every scrape, on either worker, says the same
    for session in sessions:
        for i in range(5):
            response = session.get(f"{workers.base_url}/api/v1/namespaces/default/secrets/no-{i}")
            assert response.status_code == 404
    after = {_secret_404s(s, workers) for s in sessions}
    assert after == {before.pop() + 30}
    namespaces = len(sessions[0].get(f"{workers.base_url}/api/v1/namespaces").json()["items"])
    assert {_objects(s, workers, "namespaces") for s in sessions} == {namespaces}


def test_the_workers_lend_the_servers_seats_by_demand(workers: Server) -> None:
    """Each borrowing period every worker reports its seat demand and takes its part
    of the server's seats (workershare.py): between them, what one server's flags give."""
    folder = workers.data_dir / "run" / "apf"
    wait_until(lambda: all((folder / f"worker-{i}.json").exists() for i in range(2)))
    for i in range(2):
        assert set(json.loads((folder / f"worker-{i}.json").read_text())) == {"demand", "at"}
    text = fresh(workers).get(f"{workers.base_url}/metrics").text
    nominal = [
        float(line.rpartition(" ")[2])
        for line in text.splitlines()
        if line.startswith("apiserver_flowcontrol_nominal_limit_seats{")
    ]
    levels = len(nominal)
    assert 600 <= sum(nominal) <= 600 + 2 * levels  # each worker's levels round up


def test_delete_metrics_resets_every_worker(workers: Server) -> None:
    """DELETE /metrics reaches one worker; its siblings reset too, so the next scrape,
    on either worker, counts from zero."""
    sessions = [fresh(workers) for _ in range(6)]  # held open: the workers share them
    for session in sessions:
        response = session.get(f"{workers.base_url}/api/v1/namespaces/default/secrets/gone")
        assert response.status_code == 404
    assert min(_secret_404s(s, workers) for s in sessions) >= 6
    reset = sessions[0].delete(f"{workers.base_url}/metrics")
    assert (reset.status_code, reset.text) == (200, "metrics reset\n")
    wait_until(lambda: {_secret_404s(s, workers) for s in sessions} == {0.0})


def _leader_pid(server: Server) -> int:
    """The worker holding the leader lock, from the kernel's lock table."""
    inode = os.stat(server.data_dir / "run" / "leader.lock").st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if fields[1] == "FLOCK" and int(fields[5].split(":")[2]) == inode:
            return int(fields[4])
    raise AssertionError("nobody holds the leader lock")


def _restarted(server: Server, index: str, old_pid: object) -> bool:
    state = states(server)[index]
    return state["state"] == "ready" and state["pid"] != old_pid


def test_a_killed_worker_is_restarted_and_its_duties_move(workers: Server) -> None:
    wait_until(lambda: _leader_pid(workers) > 0)
    leader = _leader_pid(workers)
    index = next(i for i, s in states(workers).items() if s["pid"] == leader)
    os.kill(leader, signal.SIGKILL)
    # The survivor keeps serving meanwhile, and takes over the controllers.
    ns_url = f"{workers.base_url}/api/v1/namespaces"
    for _ in range(5):
        response = fresh(workers).get(f"{ns_url}/default")
        assert response.status_code == 200
    wait_until(lambda: _restarted(workers, index, leader))
    wait_until(lambda: _leader_pid(workers) != leader)
    # The namespace controller runs on the new leader: a deleted namespace goes away.
    session = fresh(workers)
    assert session.post(ns_url, json={"metadata": {"name": "after-kill"}}).status_code == 201
    cm_url = f"{ns_url}/after-kill/configmaps"
    assert session.post(cm_url, json={"metadata": {"name": "x"}}).status_code == 201
    assert session.delete(f"{ns_url}/after-kill").status_code == 200
    wait_until(lambda: fresh(workers).get(f"{ns_url}/after-kill").status_code == 404)
    response = fresh(workers).get(f"{workers.base_url}/readyz?verbose")
    assert "[+]worker-0 ok\n[+]worker-1 ok\n" in response.text


def worker_pids(server: Server) -> list[int]:
    return [int(s["pid"]) for s in states(server).values()]  # type: ignore[call-overload]


def ended(pid: int) -> bool:
    """Whether the process has ended (a zombie whose reaper is not ours has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def assert_gone(pids: list[int]) -> None:
    wait_until(lambda: all(ended(pid) for pid in pids), timeout=5)  # SIGKILL takes a moment


def assert_shut_down_once(server: Server, signum: int, pids: list[int]) -> None:
    assert server.process is not None and server.log is not None
    # twistd ends by re-raising the signal that stopped it, after a clean shutdown.
    assert server.process.wait(timeout=30) == -signum
    log = server.log.read_text()
    assert "Server Shut Down." in log.splitlines()[-1]
    assert "Traceback" not in log and "#critical" not in log
    assert_gone(pids)


def test_sigterm_stops_every_worker(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", "--workers", "2")
    pids = worker_pids(server)
    server.process.send_signal(signal.SIGTERM)
    assert_shut_down_once(server, signal.SIGTERM, pids)


def test_ctrl_c_stops_every_worker_once(tmp_path: Path) -> None:
    """A terminal's Ctrl-C sends SIGINT to the supervisor and every worker at once: the
    workers leave it to the supervisor, which stops each with SIGTERM (two stop signals
    made Twisted log a critical ReactorNotRunning traceback in a worker)."""
    server = start_server(tmp_path / "data", "--workers", "2")
    assert server.process is not None
    pids = worker_pids(server)
    for pid in [server.process.pid, *pids]:  # as the terminal signals its process group
        os.kill(pid, signal.SIGINT)
    assert_shut_down_once(server, signal.SIGINT, pids)


def test_sigterm_to_every_process_stops_each_once(tmp_path: Path) -> None:
    """``pkill -f platform-apiserver`` or systemd stopping the control group: each worker
    has SIGTERM twice, its own and its supervisor's, and drains once."""
    server = start_server(tmp_path / "data", "--workers", "2")
    assert server.process is not None and server.log is not None
    pids = worker_pids(server)
    for pid in [server.process.pid, *pids]:
        os.kill(pid, signal.SIGTERM)
    assert_shut_down_once(server, signal.SIGTERM, pids)


def test_a_second_stop_signal_ends_the_supervisor_and_its_workers_at_once(
    tmp_path: Path,
) -> None:
    server = start_server(tmp_path / "data", "--workers", "2", "--shutdown-delay-duration=30s")
    assert server.process is not None and server.log is not None
    pids = worker_pids(server)
    server.process.send_signal(signal.SIGTERM)
    wait_until(lambda: fresh(server).get(f"{server.base_url}/readyz").status_code == 503)
    started = time.monotonic()
    server.process.send_signal(signal.SIGINT)
    assert server.process.wait(timeout=10) == 1
    assert time.monotonic() - started < 5  # not the 30 s of the workers' delay
    assert_gone(pids)  # ended with it, not left to notice it is gone
    assert "Traceback" not in server.log.read_text()


def _write_while(workers: Server, during: Callable[[], None]) -> None:
    """Six clients create objects on fresh connections while ``during`` runs; every
    create acknowledged (201) must be stored as answered."""
    url = f"{workers.base_url}/api/v1/namespaces/default/configmaps"
    acknowledged: dict[str, str] = {}
    unexpected: list[tuple[int, str]] = []
    lock = threading.Lock()
    stop = threading.Event()
    tag = f"k{time.monotonic_ns()}"

    def writer(n: int) -> None:
        i = 0
        while not stop.is_set():
            name = f"{tag}-{n}-{i}"
            i += 1
            try:
                response = fresh(workers).post(url, json={"metadata": {"name": name}})
            except requests.ConnectionError:
                continue  # its worker died mid-request: not acknowledged
            answer = (response.status_code, response.json().get("reason"))
            with lock:
                if answer[0] == 201:
                    acknowledged[name] = response.json()["metadata"]["resourceVersion"]
                elif answer != (500, "InternalError"):  # 500: a dead writer held it
                    unexpected.append((response.status_code, response.text))

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(6)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    during()
    time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    stored = {
        item["metadata"]["name"]: item["metadata"]["resourceVersion"]
        for item in fresh(workers).get(url).json()["items"]
    }
    assert len(acknowledged) > 20
    missing = {n: rv for n, rv in acknowledged.items() if stored.get(n) != rv}
    assert (missing, unexpected) == ({}, [])


def test_a_worker_killed_mid_write_loses_no_acknowledged_write(workers: Server) -> None:
    victim = states(workers)["1"]["pid"]
    _write_while(workers, lambda: os.kill(int(victim), signal.SIGKILL))  # type: ignore[call-overload]
    wait_until(lambda: _restarted(workers, "1", victim))


def test_the_writer_killed_mid_write_loses_no_acknowledged_write(workers: Server) -> None:
    assert workers.process is not None
    (writer,) = lmdb_writers(workers.process.pid)
    _write_while(workers, lambda: os.kill(writer, signal.SIGKILL))
    assert lmdb_writers(workers.process.pid) not in ([], [writer])


def children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def lmdb_writers(pid: int) -> list[int]:
    return [c for c in children(pid) if b"lmdb_writer" in Path(f"/proc/{c}/cmdline").read_bytes()]


def test_a_worker_ignores_sigpipe_as_the_interpreter_does(workers: Server) -> None:
    """A forked worker never execs: Twisted's fork had put SIGPIPE back to its default,
    and a write to the LMDB writer that had just died killed the worker with it."""
    for pid in worker_pids(workers):
        status = Path(f"/proc/{pid}/status").read_text()
        ignored = int(
            next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16
        )
        assert ignored & (1 << (signal.SIGPIPE - 1)), pid


def test_the_workers_commit_through_one_writer_that_comes_back_when_killed(
    workers: Server,
) -> None:
    assert workers.process is not None
    (writer,) = lmdb_writers(workers.process.pid)  # the supervisor's, for both workers
    assert [lmdb_writers(pid) for pid in worker_pids(workers)] == [[], []]
    url = f"{workers.base_url}/api/v1/namespaces/default/configmaps"
    before = fresh(workers).post(url, json={"metadata": {"name": "shared-before"}})
    assert before.status_code == 201
    since = before.json()["metadata"]["resourceVersion"]
    watch = fresh(workers).get(
        url, params={"watch": "1", "resourceVersion": since}, stream=True, timeout=30
    )
    os.kill(writer, signal.SIGKILL)
    # Writes while the supervisor starts another wait for it and land; one in flight
    # when it died is answered with kube's 500 (its outcome unknown).
    created, attempt = None, 0
    while created is None:
        attempt += 1
        r = fresh(workers).post(url, json={"metadata": {"name": f"shared-after-{attempt}"}})
        if r.status_code == 201:
            created = r.json()["metadata"]["name"]
            continue
        assert (r.status_code, r.json()["reason"]) == (500, "InternalError")
        assert r.json()["message"].endswith("; the write's outcome is unknown")
        assert attempt < 20
    assert lmdb_writers(workers.process.pid) not in ([], [writer])
    seen = set()
    for line in watch.iter_lines():
        seen.add(json.loads(line)["object"]["metadata"]["name"])
        if created in seen:
            break
    watch.close()
    assert fresh(workers).get(f"{url}/shared-before").status_code == 200
    # Each worker links to the new writer on its own retry; until then it is unready
    # ("[-]etcd failed: reason withheld": kube's name for the storage's check), and then
    # every worker is ready again.
    wait_until(lambda: all(_storage_ready(workers) for _ in range(4)))


def _storage_ready(server: Server) -> bool:
    response = fresh(server).get(f"{server.base_url}/readyz?verbose")
    if response.status_code == 200:
        assert "[+]etcd ok\n[+]etcd-readiness ok" in response.text
        return True
    assert (response.status_code, "[-]etcd failed: reason withheld" in response.text) == (
        503,
        True,
    )
    return False


def udp_ports(pid: int) -> list[int]:
    """The local ports of the UDP sockets process ``pid`` holds (/proc's tables)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd)
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = []
    for line in Path(f"/proc/{pid}/net/udp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[9] in inodes:
            ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_a_local_process_that_is_not_a_worker_is_not_heard(workers: Server) -> None:
    """The workers' commit and metrics datagrams go over loopback UDP, which any local
    process can reach: one that is not a worker gets no answer and resets nothing."""
    session = fresh(workers)
    missing = f"{workers.base_url}/api/v1/namespaces/default/secrets/gone"
    assert session.get(missing).status_code == 404
    before = _secret_404s(session, workers)
    ports = [port for pid in worker_pids(workers) for port in udp_ports(pid)]
    assert len(ports) == 2  # each worker's wake socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
        stranger.settimeout(1.0)
        for port in ports:
            stranger.sendto(b"~", ("127.0.0.1", port))  # a metrics reset
            stranger.sendto(b"?probe", ("127.0.0.1", port))  # a metrics question
            with pytest.raises(TimeoutError):
                stranger.recvfrom(100)
    assert _secret_404s(session, workers) >= before


def test_the_data_directory_is_the_server_users_alone(workers: Server) -> None:
    """Every object (Secrets too), the keys, the workers' metrics: every directory under
    the data directory is closed to other local users (etcd keeps its data directory so),
    and so are the database's files."""
    assert workers.data_dir is not None
    fresh(workers).get(f"{workers.base_url}/metrics")  # the workers' snapshots exist
    ours = ["", "db", "pki", "run", "run/metrics"]  # (other tests keep kubectl's cache here)
    modes = {name: os.stat(workers.data_dir / name).st_mode & 0o777 for name in ours}
    assert modes == dict.fromkeys(ours, 0o700)
    for name in ("data.mdb", "lock.mdb"):
        assert os.stat(workers.data_dir / "db" / name).st_mode & 0o777 == 0o600
