"""Imported at interpreter start by a server process a test starts with this directory
on PYTHONPATH: its ``time.time`` then runs ``PLATFORM_TEST_WALL_STEP_FILE``'s seconds
ahead (or behind) of the machine's, re-read on SIGUSR2 as a step of the wall clock (NTP,
``date -s``) would move it, without touching the machine's clock or the monotonic one."""

import os
import signal
import time

_FILE = os.environ.get("PLATFORM_TEST_WALL_STEP_FILE")

if _FILE:
    _machine = time.time
    _step = [0.0]

    def _stepped() -> float:
        return _machine() + _step[0]

    def _read(signum: int, frame: object) -> None:
        with open(_FILE) as f:
            _step[0] = float(f.read() or 0)

    time.time = _stepped
    signal.signal(signal.SIGUSR2, _read)
