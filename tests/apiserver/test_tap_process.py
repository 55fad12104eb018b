"""What makeService sets for the whole server process: the garbage collector's young
generation threshold, and SIGINT handled even when the process started with it ignored."""

from __future__ import annotations

import gc
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from platform_api.apiserver import tap
from platform_api.apiserver.workerslot import WORKER_ENV


def make(tmp_path: Path, *flags: str) -> object:
    options = tap.Options()
    options.parseOptions(["--data-dir", str(tmp_path), *flags])
    return tap.makeService(SimpleNamespace(config=options.config))


def test_a_server_process_sets_the_young_generation_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(WORKER_ENV, raising=False)
    before = gc.get_threshold()
    try:
        service = make(tmp_path)
        assert gc.get_threshold() == (tap.GC_YOUNG, *before[1:])
        assert type(service).__name__ == "APIServerService"
    finally:
        gc.set_threshold(*before)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_server_or_supervisor_started_with_sigint_ignored_handles_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    """As kube-apiserver (Go's signal.Notify): a shell starts background commands with
    SIGINT ignored; Twisted would leave it so, and ``kill -INT`` did nothing."""
    monkeypatch.delenv(WORKER_ENV, raising=False)
    saved, threshold = signal.getsignal(signal.SIGINT), gc.get_threshold()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        make(tmp_path, "--workers", workers)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, saved)
        gc.set_threshold(*threshold)
