"""The audit log file: batched writes, lumberjack rotation and pruning (fake clock)."""

from __future__ import annotations

import gzip
import multiprocessing
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import orjson
from twisted.internet.task import Clock

from platform_api.apiserver.audit.logbackend import (
    MEGABYTE,
    LogBackend,
    RotatingFile,
    _compress,
)

T0 = datetime(2026, 11, 23, 16, 0, 0, 123000, tzinfo=UTC).timestamp()


class Now:
    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self) -> float:
        return self.value


def test_events_are_buffered_and_written_once_per_turn(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "audit" / "audit.log"
    backend = LogBackend.open(str(path), "json", clock)
    backend.process({"kind": "Event", "auditID": "1"})
    backend.process({"kind": "Event", "auditID": "2"})
    assert not path.exists()  # nothing written on the request path
    clock.advance(0)
    lines = path.read_bytes().splitlines()
    assert [orjson.loads(line)["auditID"] for line in lines] == ["1", "2"]
    assert os.stat(path).st_mode & 0o777 == 0o600
    backend.process({"kind": "Event", "auditID": "3"})
    backend.shutdown()  # flushes what is pending
    assert len(path.read_bytes().splitlines()) == 3


def test_legacy_format(tmp_path: Path) -> None:
    clock = Clock()
    backend = LogBackend.open(str(tmp_path / "a.log"), "legacy", clock)
    backend.process({"auditID": "x", "stage": "ResponseComplete", "user": {"username": "u"}})
    clock.advance(0)
    text = (tmp_path / "a.log").read_text()
    assert text.startswith(' AUDIT: id="x" stage="ResponseComplete"') and text.endswith("\n")


def test_rotation_renames_with_timestamp_and_keeps_appending(tmp_path: Path) -> None:
    now = Now(T0)
    path = tmp_path / "audit.log"
    path.write_bytes(b"x" * (MEGABYTE - 10))  # an existing file is appended to
    out = RotatingFile(str(path), max_size_mb=1, now=now)
    out.write(b"y" * 5)
    assert path.stat().st_size == MEGABYTE - 5
    out.write(b"z" * 20)  # would pass 1 MB: rotate first
    backup = tmp_path / "audit-2026-11-23T16-00-00.123.log"
    assert backup.stat().st_size == MEGABYTE - 5
    assert path.read_bytes() == b"z" * 20


def test_prune_by_count_and_age(tmp_path: Path) -> None:
    now = Now(T0)
    path = tmp_path / "audit.log"
    out = RotatingFile(str(path), max_size_mb=1, max_backups=2, now=now)
    for hour in range(4):
        now.value = T0 + hour * 3600
        out.write(b"a" * MEGABYTE)  # each write fills a file; the next one rotates it
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "audit-2026-11-23T18-00-00.123.log",
        "audit-2026-11-23T19-00-00.123.log",
        "audit.log",
    ]  # backups are named at rotation; the two newest kept
    aged = RotatingFile(str(path), max_size_mb=1, max_age_days=1, now=now)
    now.value = T0 + 2 * 86400
    aged.write(b"b" * MEGABYTE)  # rotates; the backups are now older than a day
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "audit-2026-11-25T16-00-00.123.log",
        "audit.log",
    ]


def test_max_size_zero_never_rotates(tmp_path: Path) -> None:
    """kube 1.36: --audit-log-maxsize=0 writes one growing file (no lumberjack)."""
    path = tmp_path / "audit.log"
    out = RotatingFile(str(path), max_size_mb=0, max_backups=1)
    for _ in range(3):
        out.write(b"a" * MEGABYTE)
    assert [p.name for p in tmp_path.iterdir()] == ["audit.log"]
    assert path.stat().st_size == 3 * MEGABYTE


def test_compressed_backups_keep_their_mode_and_count_for_pruning(tmp_path: Path) -> None:
    now = Now(T0)
    path = tmp_path / "audit.log"
    jobs: list[Callable[[], None]] = []
    out = RotatingFile(
        str(path), max_size_mb=1, max_backups=2, now=now, compress=True, background=jobs.append
    )
    for hour in range(3):
        now.value = T0 + hour * 3600
        out.write(bytes([97 + hour]) * MEGABYTE)
    assert len(jobs) == 2  # two rotations, each compressing what is plain, on a thread
    for job in jobs:
        job()  # the second finds the first backup compressed already
    jobs.clear()
    first = tmp_path / "audit-2026-11-23T17-00-00.123.log.gz"
    assert gzip.decompress(first.read_bytes()) == b"a" * MEGABYTE
    assert first.stat().st_mode & 0o777 == 0o600
    assert not (tmp_path / "audit-2026-11-23T17-00-00.123.log").exists()
    now.value = T0 + 3 * 3600
    out.write(b"d" * MEGABYTE)  # a third backup: the oldest (compressed) one goes
    while jobs:
        jobs.pop()()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "audit-2026-11-23T18-00-00.123.log.gz",
        "audit-2026-11-23T19-00-00.123.log.gz",
        "audit.log",
    ]
    assert path.read_bytes() == b"d" * MEGABYTE


def test_a_backup_compressed_by_a_sibling_is_left_alone(tmp_path: Path) -> None:
    backup = tmp_path / "audit-2026-11-23T16-00-00.123.log"
    backup.write_bytes(b"x")
    _compress(str(backup))
    _compress(str(backup))  # a second worker, too late: nothing to do, nothing broken
    assert sorted(p.name for p in tmp_path.iterdir()) == [backup.name + ".gz"]


def test_write_errors_are_counted_not_raised(tmp_path: Path) -> None:
    clock = Clock()
    (tmp_path / "dir").mkdir()
    backend = LogBackend.open(str(tmp_path / "dir"), "json", clock)  # a directory: cannot open
    backend.process({"auditID": "1"})
    clock.advance(0)  # logged and counted, the reactor goes on


def test_a_sibling_writer_follows_a_rotation_and_counts_every_line(tmp_path: Path) -> None:
    """Two workers on one file: sizes are the file's, and the rotated file is left alone."""
    now = Now(T0)
    path = tmp_path / "audit.log"
    first = RotatingFile(str(path), max_size_mb=1, now=now)
    second = RotatingFile(str(path), max_size_mb=1, now=now)
    first.write(b"a" * (MEGABYTE // 2))
    second.write(b"b" * (MEGABYTE // 2 - 10))  # the file holds both halves
    first.write(b"c" * 20)  # 20 more would pass 1 MB: the first rotates
    backup = tmp_path / "audit-2026-11-23T16-00-00.123.log"
    assert backup.stat().st_size == MEGABYTE - 10
    second.write(b"d" * 5)  # the second writes to the new file, not into the backup
    assert backup.stat().st_size == MEGABYTE - 10
    assert path.read_bytes() == b"c" * 20 + b"d" * 5


def _append_lines(path: str, writer: int, count: int) -> None:
    out = RotatingFile(path, max_size_mb=1)
    for i in range(count):
        out.write(orjson.dumps({"writer": writer, "i": i, "pad": "x" * 400}) + b"\n")
    out.close()


def test_concurrent_processes_lose_no_line_and_keep_files_within_the_limit(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "audit.log")
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_append_lines, args=(path, w, 3000)) for w in range(2)]
    for p in writers:
        p.start()
    for p in writers:
        p.join(60)
        assert p.exitcode == 0
    seen = set()
    files = list(tmp_path.iterdir())
    assert len(files) >= 3  # ~2.6 MB of lines: at least two rotations
    for file in files:
        assert file.stat().st_size <= MEGABYTE
        for line in file.read_bytes().splitlines():
            event = orjson.loads(line)  # whole lines only: no two writes interleaved
            seen.add((event["writer"], event["i"]))
    assert seen == {(w, i) for w in range(2) for i in range(3000)}
