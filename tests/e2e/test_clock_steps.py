"""A step of the machine's wall clock moves none of the server's timers
(platform_api/timers.py), as Go's monotonic timers do not move in kube-apiserver.

The server runs with ``stepped_clock/sitecustomize.py``: its ``time.time`` jumps when
the test says so, the machine's clock and the monotonic one do not."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import session_for, start_server

SITE = Path(__file__).parent / "stepped_clock"


@pytest.mark.parametrize("step_by", [3600.0, -3600.0], ids=["ahead", "behind"])
def test_a_watch_ends_after_its_timeout_whatever_the_wall_clock_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step_by: float
) -> None:
    """An hour ahead, a wall-clock timer would fire at once; an hour behind, it would wait
    an hour more."""
    steps = tmp_path / "wall-step"
    steps.write_text("0")
    monkeypatch.setenv("PYTHONPATH", str(SITE))
    monkeypatch.setenv("PLATFORM_TEST_WALL_STEP_FILE", str(steps))
    server = start_server(tmp_path / "data")
    assert server.process is not None
    try:
        admin = session_for(server, cert=server.admin_cert)
        url = server.url + "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=6"

        def step(seconds: float) -> None:
            steps.write_text(str(seconds))
            server.process.send_signal(signal.SIGUSR2)  # type: ignore[union-attr]

        started = time.monotonic()
        with admin.get(url, stream=True, timeout=30) as watch:
            assert watch.status_code == 200
            lines = watch.iter_lines()
            time.sleep(1)
            step(step_by)
            assert list(lines) == []  # nothing was written meanwhile; the watch ended
        lasted = time.monotonic() - started
        assert 5.5 < lasted < 10, lasted
        # The server answers on after both steps.
        assert admin.get(server.url + "/api/v1/namespaces/default").status_code == 200
    finally:
        server.stop()
