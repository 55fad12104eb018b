"""The server process collects young garbage less often than CPython's default."""

from __future__ import annotations

import gc
from pathlib import Path
from types import SimpleNamespace

import pytest

from platform_api.apiserver import tap
from platform_api.apiserver.workerslot import WORKER_ENV


def test_a_server_process_sets_the_young_generation_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(WORKER_ENV, raising=False)
    options = tap.Options()
    options.parseOptions(["--data-dir", str(tmp_path)])
    before = gc.get_threshold()
    try:
        service = tap.makeService(SimpleNamespace(config=options.config))
        assert gc.get_threshold() == (tap.GC_YOUNG, *before[1:])
        assert type(service).__name__ == "APIServerService"
    finally:
        gc.set_threshold(*before)
