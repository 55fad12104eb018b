"""The benchmarks' accounting of a server's processes: found by role, CPU per request."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from benchmarks.proctree import Usage, per_request, roles, snapshot

# A parent that starts children named as a server's tree is (a worker, a writer), then
# waits; each child spins for 0.3 s of CPU so it has CPU to count, says so, then sleeps.
# One write(2) of a whole line: print() under PYTHONUNBUFFERED writes "spun" and "\n"
# apart, and the two children's words then interleave on their shared pipe.
SPIN = (
    "import os, time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    "os.write(1, b'spun\\n')\ntime.sleep(30)"
)
PARENT = f"""
import subprocess, sys, time
print("started", flush=True)  # before the children's words, which share this stdout
kids = [
    subprocess.Popen([sys.executable, "-c", {SPIN!r}, "worker"]),
    subprocess.Popen([sys.executable, "-c", {SPIN!r}, "-m", "platform_api.storage.lmdb_writer"]),
]
time.sleep(30)
"""


@pytest.fixture
def tree() -> Iterator[subprocess.Popen[bytes]]:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE)
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline() == b"started\n"
        yield parent
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(parent.pid)], check=False)
        parent.kill()
        parent.wait()


def settled(root: int) -> dict[int, str]:
    """The tree's roles once both children run their own programs."""
    deadline = time.monotonic() + 30
    while sorted((found := roles(root)).values()) != ["serving", "writers"]:
        assert time.monotonic() < deadline, found
        time.sleep(0.01)
    return found


def test_the_tree_is_found_by_role_and_a_supervisor_left_out(
    tree: subprocess.Popen[bytes],
) -> None:
    found = settled(tree.pid)
    assert tree.pid not in found  # two serving processes: the root is their supervisor


def test_cpu_per_request_adds_up_each_roles_processes(tree: subprocess.Popen[bytes]) -> None:
    found = settled(tree.pid)
    before = {pid: (kind, Usage(0.0)) for pid, kind in found.items()}
    assert tree.stdout is not None
    assert [tree.stdout.readline(), tree.stdout.readline()] == [b"spun\n", b"spun\n"]
    spent = per_request(before, snapshot(found), requests=100)
    assert list(spent) == [
        "serving CPU ms",
        "writers CPU ms",
        "etcd CPU ms",
        "serving waited for a core ms",
        "serving put on a core",
        "serving preemptions",
    ]
    # Each child spun 0.3 s of its own CPU clock, which counts what schedstat counts:
    # at least 3 ms for each of the 100 requests (and its start-up on top).
    assert 3.0 <= spent["serving CPU ms"] < 30.0
    assert 3.0 <= spent["writers CPU ms"] < 30.0
    assert math.isnan(spent["etcd CPU ms"])  # no etcd in this tree
    assert spent["serving waited for a core ms"] >= 0
    assert spent["serving put on a core"] >= 0.01  # it ran: at least once
    assert spent["serving preemptions"] >= 0


def test_usage_adds_and_subtracts_field_by_field() -> None:
    a, b = Usage(1.5, 0.25, 10, 3), Usage(0.5, 0.25, 4, 1)
    assert a + b == Usage(2.0, 0.5, 14, 4)
    assert a - b == Usage(1.0, 0.0, 6, 2)


def test_a_process_that_is_gone_is_left_out() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert snapshot({gone.pid: "serving"}) == {}
