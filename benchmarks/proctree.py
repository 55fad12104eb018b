"""CPU and preemptions of a server's processes, by role, read from /proc.

The machine's CPU per write (loadgen's ``server_cpu_ms``) says whether a configuration
is bound by its CPU; this says where that CPU goes: the serving processes (a single
server, or the workers under a supervisor, which serves nothing), their LMDB writer
processes, etcd.  Two workers on two cores spend more CPU on each request they serve
than one worker alone does, and this is where that shows; involuntary context switches
(another process taking the core mid-turn) are counted beside it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass

ROLES = ("serving", "writers", "etcd")


@dataclass(frozen=True)
class Usage:
    """CPU seconds (user + system) and involuntary context switches so far."""

    cpu: float
    preempted: int

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.cpu - other.cpu, self.preempted - other.preempted)


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
    tick = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    with open(f"/proc/{pid}/status") as f:
        preempted = next(
            int(line.split()[1]) for line in f if line.startswith("nonvoluntary_ctxt_switches")
        )
    return Usage((int(fields[11]) + int(fields[12])) / tick, preempted)


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
    """CPU ms per request of each role (NaN: no such process), and preemptions of the
    serving processes per request, over what both snapshots hold."""
    totals: dict[str, Usage] = {}
    for pid, (kind, end) in after.items():
        if pid not in before:
            continue
        spent = end - before[pid][1]
        known = totals.get(kind, Usage(0.0, 0))
        totals[kind] = Usage(known.cpu + spent.cpu, known.preempted + spent.preempted)
    per = max(requests, 1)
    out = {
        f"{kind} CPU ms": totals[kind].cpu * 1000 / per if kind in totals else math.nan
        for kind in ROLES
    }
    serving = totals.get("serving")
    out["serving preemptions"] = serving.preempted / per if serving else math.nan
    return out
