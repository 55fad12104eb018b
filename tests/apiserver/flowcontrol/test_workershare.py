"""Under ``--workers``: the server's seats lent between workers by demand (workershare.py)."""

from __future__ import annotations

import json
from pathlib import Path

from platform_api.apiserver.flowcontrol.borrowing import PERIOD
from platform_api.apiserver.flowcontrol.workershare import WorkerShare, worker_seats
from tests.apiserver.flowcontrol.conftest import World


def test_seats_follow_demand_above_a_floor() -> None:
    assert worker_seats(600, 1, 0.0, []) == 600
    assert worker_seats(600, 2, 0.0, [0.0]) == 300  # nobody asks: the even split
    assert worker_seats(600, 2, 90.0, [0.0]) == 525  # all of it but the idle one's floor
    assert worker_seats(600, 2, 0.0, [90.0]) == 75  # a quarter of the even split
    assert worker_seats(600, 2, 30.0, [30.0]) == 300
    assert worker_seats(600, 4, 10.0, [30.0, 0.0, 0.0]) == 38 + 112  # a quarter of the rest
    assert worker_seats(3, 2, 5.0, [0.0]) == 2  # at least one seat each


def test_workers_read_each_others_reports_and_forget_the_stale(tmp_path: Path) -> None:
    now = [1000.0]
    folder = str(tmp_path / "run" / "apf")
    one = WorkerShare(folder, 0, 2, 600, lambda: now[0], PERIOD)
    two = WorkerShare(folder, 1, 2, 600, lambda: now[0], PERIOD)
    assert one.seats(0.0) == 300
    assert two.seats(40.0) == 525
    assert one.seats(0.0) == 75
    assert json.loads((tmp_path / "run" / "apf" / "worker-1.json").read_text())["demand"] == 40
    now[0] += 3 * PERIOD + 1  # the second worker stopped reporting
    assert one.seats(0.0) == 300
    (tmp_path / "run" / "apf" / "worker-1.json").write_text("not json")
    assert one.seats(5.0) == 525  # an unreadable report counts as none


def test_a_period_rescales_the_levels_to_the_workers_share(world: World) -> None:
    asked: list[float] = []

    def share(demand: float) -> int:
        asked.append(demand)
        return 150

    world.config.share = share
    before = {name: level.nominal for name, level in world.config.levels.items()}
    world.clock.advance(PERIOD)
    assert asked == [0.0]
    assert world.config.server_limit == 150
    after = {name: level.nominal for name, level in world.config.levels.items()}
    assert sum(after.values()) < sum(before.values())
    assert after["workload-low"] < before["workload-low"]
    # the period's borrowing then shared out the new seats, not the old ones
    limits = [lv.queues.limit for lv in world.config.levels.values() if lv.queues is not None]
    assert sum(limits) <= 150 + len(limits)
