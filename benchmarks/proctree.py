"""CPU and scheduling of a server's processes, by role, read from /proc.

The machine's CPU per write (loadgen's ``server_cpu_ms``) says whether a configuration
is bound by its CPU; this says where that CPU goes: the serving processes (a single
server, or the workers under a supervisor, which serves nothing), their LMDB writer
processes, etcd.  Two workers on two cores spend more CPU on each request they serve
than one worker alone does, and this is where that shows, with how the scheduler ran
the serving processes: how often they were put on a core (a lone busy worker keeps one
for many requests), how long they waited runnable for one, and how often another
process took it from them mid-turn.

CPU comes from each thread's ``schedstat`` (nanoseconds the scheduler ran it), not from
``stat``'s clock ticks, which are sampled: a process's ticks can fall short of what it
ran by more than a short measurement's differences.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass

ROLES = ("serving", "writers", "etcd")


@dataclass(frozen=True)
class Usage:
    """So far, over a process's threads: seconds on a core, seconds runnable but waiting
    for one, times put on one, and involuntary context switches."""

    cpu: float
    waited: float = 0.0
    slices: int = 0
    preempted: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.cpu + other.cpu,
            self.waited + other.waited,
            self.slices + other.slices,
            self.preempted + other.preempted,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.cpu - other.cpu,
            self.waited - other.waited,
            self.slices - other.slices,
            self.preempted - other.preempted,
        )


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (Linux: each thread's ``children`` file)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children") as f:
                    queue.extend(int(child) for child in f.read().split())
            except OSError:
                continue
    return found


def _argv(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def roles(root: int, others: Iterable[int] = ()) -> dict[int, str]:
    """The role of each process of the server's tree under ``root`` and of ``others``
    (etcd): with workers, the root is their supervisor, which serves nothing."""
    found: dict[int, str] = {}
    for pid in [*descendants(root), *others]:
        argv = _argv(pid)
        if not argv:
            continue
        if b"platform_api.storage.lmdb_writer" in argv:
            found[pid] = "writers"
        elif os.path.basename(argv[0]) == b"etcd":
            found[pid] = "etcd"
        else:
            found[pid] = "serving"
    if sum(kind == "serving" for kind in found.values()) > 1:
        found.pop(root, None)
    return found


def usage(pid: int) -> Usage:
    """The process's threads' usage (threads that have ended are not counted)."""
    total = Usage(0.0)
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            total += _thread_usage(f"/proc/{pid}/task/{task}")
        except (OSError, StopIteration):
            continue  # the thread ended meanwhile
    return total


def _thread_usage(path: str) -> Usage:
    with open(f"{path}/schedstat") as f:
        ran, waited, slices = (int(field) for field in f.read().split()[:3])
    with open(f"{path}/status") as f:
        preempted = next(
            int(line.split()[1]) for line in f if line.startswith("nonvoluntary_ctxt_switches")
        )
    return Usage(ran / 1e9, waited / 1e9, slices, preempted)


def snapshot(found: dict[int, str]) -> dict[int, tuple[str, Usage]]:
    """Each process's role and usage now (processes that are gone are left out)."""
    out = {}
    for pid, kind in found.items():
        try:
            out[pid] = (kind, usage(pid))
        except (OSError, StopIteration):
            continue
    return out


def per_request(
    before: dict[int, tuple[str, Usage]], after: dict[int, tuple[str, Usage]], requests: int
) -> dict[str, float]:
    """CPU ms per request of each role (NaN: no such process), and how the serving
    processes were scheduled per request, over what both snapshots hold."""
    totals: dict[str, Usage] = {}
    for pid, (kind, end) in after.items():
        if pid in before:
            totals[kind] = totals.get(kind, Usage(0.0)) + (end - before[pid][1])
    per = max(requests, 1)
    out = {
        f"{kind} CPU ms": totals[kind].cpu * 1000 / per if kind in totals else math.nan
        for kind in ROLES
    }
    serving = totals.get("serving")
    out["serving waited for a core ms"] = serving.waited * 1000 / per if serving else math.nan
    out["serving put on a core"] = serving.slices / per if serving else math.nan
    out["serving preemptions"] = serving.preempted / per if serving else math.nan
    return out
