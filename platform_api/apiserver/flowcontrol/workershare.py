"""Under ``--workers N``: the server's seats lent between the workers by their demand.

The in-flight flags budget the server, as one kube-apiserver's.  A worker serves the
connections it was handed, and a client's connection (over HTTP/2, every request of a
client-go process) stays on one worker: an even split would hold a busy worker to 1/N
of the seats while the others idle.  So, each borrowing period (kube's 10 s), every
worker writes its seat demand (the high watermark of the seats its limited levels used
and waited for in the period: what kube's own borrowing reads) to
``<data-dir>/run/apf/worker-<i>.json``, and takes the part of the server's seats that
its demand is of all the workers' together, above a floor (a quarter of the even split)
so that an idle worker serves its first requests at once.  Reports older than three
periods (a worker stopped) do not count; with no demand anywhere the split is even.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable

from twisted.logger import Logger

from platform_api.privatefiles import FILE_MODE, private_dir

log = Logger()
STALE_PERIODS = 3


def worker_seats(total: int, count: int, mine: float, others: list[float]) -> int:
    """This worker's seats of ``total`` among ``count`` workers, by demand."""
    if count <= 1:
        return total
    floor = max(1, math.ceil(total / count / 4))
    demand = mine + sum(others)
    if demand <= 0:
        return math.ceil(total / count)
    spare = max(0, total - floor * count)
    return floor + math.ceil(spare * mine / demand)


class WorkerShare:
    """One worker's report and reading of its siblings' (see the module docstring)."""

    def __init__(
        self,
        folder: str,
        index: int,
        count: int,
        total: int,
        clock: Callable[[], float],
        period: float,
    ) -> None:
        self.folder, self.index, self.count, self.total = folder, index, count, total
        self.clock, self.period = clock, period

    def seats(self, demand: float) -> int:
        """Publish this period's ``demand``; the seats to hold in the next one."""
        now = self.clock()
        try:
            private_dir(self.folder)
            self._write(demand, now)
            others = self._read(now)
        except OSError as e:  # unshared, the even split
            log.warn("priority and fairness: worker demand not shared: {e}", e=e)
            return worker_seats(self.total, self.count, 0.0, [])
        return worker_seats(self.total, self.count, demand, others)

    def _path(self, index: int) -> str:
        return os.path.join(self.folder, f"worker-{index}.json")

    def _write(self, demand: float, now: float) -> None:
        path = self._path(self.index)
        temporary = f"{path}.{os.getpid()}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w") as f:
            json.dump({"demand": demand, "at": now}, f)
        os.replace(temporary, path)  # a sibling reads it whole or not at all

    def _read(self, now: float) -> list[float]:
        demands = []
        for index in range(self.count):
            if index == self.index:
                continue
            try:
                with open(self._path(index)) as f:
                    report = json.load(f)
            except (OSError, ValueError):
                continue
            if now - float(report.get("at", 0)) <= STALE_PERIODS * self.period:
                demands.append(max(0.0, float(report.get("demand", 0))))
        return demands
