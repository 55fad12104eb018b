"""``--audit-log-path``: events as JSON lines (or kube's legacy lines) in a rotated file.

Rotation follows lumberjack, which kube uses: before a write that would pass
``--audit-log-maxsize`` MB (0: never, as kube 1.36) the file is renamed to
``<name>-<UTC 2006-01-02T15-04-05.000>.<ext>`` and a new one started; then backups past
``--audit-log-maxbackup`` (0: all kept) or older than ``--audit-log-maxage`` days are
removed, and with ``--audit-log-compress`` the rest are gzipped to ``<backup>.gz`` on a
thread (a 100 MB file takes seconds).  Events are buffered and written in one batch per
reactor turn, so a request never waits on the disk.

With ``--workers N`` every worker appends to the same file.  Each batch is written under
an exclusive ``flock`` on the file's directory (where the rotation's rename happens), and
a worker whose file was rotated by a sibling reopens the path first; so the size checked
is the file's, not one worker's share, and no two workers rotate the same file.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import IO, Any

import orjson
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from platform_api.apiserver.audit.event import legacy_line
from platform_api.apiserver.auditmetrics import AUDIT_ERRORS

log = Logger()
MEGABYTE = 1024 * 1024
_STAMP = "%Y-%m-%dT%H-%M-%S"
GZ = ".gz"
FORMATS = ("json", "legacy")
MODES = ("blocking", "blocking-strict", "batch")


def _in_thread(work: Callable[[], None]) -> None:
    threading.Thread(target=work, name="audit-log-compress", daemon=True).start()


class RotatingFile:
    """A lumberjack.Logger: append-only file, size-based rotation, backup pruning and
    compression.  ``background`` runs the compression (a thread; tests run it inline)."""

    def __init__(
        self,
        path: str,
        max_size_mb: int = 0,
        max_backups: int = 0,
        max_age_days: int = 0,
        now: Callable[[], float] | None = None,
        compress: bool = False,
        background: Callable[[Callable[[], None]], None] = _in_thread,
    ) -> None:
        self.path = path
        self.max_bytes = max_size_mb * MEGABYTE  # 0: the file is never rotated
        self.max_backups = max_backups
        self.max_age = max_age_days * 86400.0
        self.now = now or (lambda: datetime.now(UTC).timestamp())
        self.compress = compress
        self.background = background
        self.file: IO[bytes] | None = None
        self.size = 0

    def write(self, data: bytes) -> None:
        with self._exclusive():
            if self.file is None and self.max_bytes:
                self.mill()  # lumberjack tidies the backups when it opens the file
            self._follow()
            if self.max_bytes and self.size + len(data) > self.max_bytes and self.size > 0:
                self.rotate()
            assert self.file is not None
            self.file.write(data)
            self.file.flush()
            self.size += len(data)

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """Hold the directory's lock: siblings' appends and rotations wait their turn."""
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the last descriptor releases the lock

    def _follow(self) -> None:
        """Open the path if this writer has no file or a sibling rotated it away."""
        if self.file is not None:
            try:
                moved = os.stat(self.path).st_ino != os.fstat(self.file.fileno()).st_ino
            except FileNotFoundError:
                moved = True
            if not moved:
                self.size = os.fstat(self.file.fileno()).st_size  # siblings' lines count too
                return
            self.file.close()
        self.file = open(self.path, "ab")  # noqa: SIM115 - held open across writes
        os.chmod(self.path, 0o600)
        self.size = self.file.tell()

    def rotate(self) -> None:
        """Rename the current file to its timestamped backup, start anew, prune."""
        if self.file is not None:
            self.file.close()
        if os.path.exists(self.path):
            os.rename(self.path, self.backup_name(self.now()))
        self.file = open(self.path, "ab")  # noqa: SIM115 - appends, as siblings do
        os.chmod(self.path, 0o600)
        self.size = 0
        self.mill()

    def backup_name(self, when: float) -> str:
        base, ext = os.path.splitext(self.path)
        stamp = datetime.fromtimestamp(when, UTC)
        return f"{base}-{stamp.strftime(_STAMP)}.{stamp.microsecond // 1000:03d}{ext}"

    def backups(self) -> list[tuple[float, str]]:
        """(time in the name, path) of this file's backups, gzipped or not, newest first."""
        folder = os.path.dirname(os.path.abspath(self.path))
        base, ext = os.path.splitext(os.path.basename(self.path))
        out = []
        for name in os.listdir(folder):
            plain = name[: -len(GZ)] if name.endswith(GZ) else name
            if not (plain.startswith(base + "-") and plain.endswith(ext)):
                continue
            stamp = plain[len(base) + 1 : len(plain) - len(ext) if ext else None]
            try:
                when = datetime.strptime(stamp, _STAMP + ".%f").replace(tzinfo=UTC)
            except ValueError:
                continue
            out.append((when.timestamp(), os.path.join(folder, name)))
        return sorted(out, reverse=True)

    def mill(self) -> None:
        """lumberjack's millRunOnce: prune, then compress what is left in the background."""
        kept = self.prune()
        if self.compress:
            plain = [path for _, path in kept if not path.endswith(GZ)]
            if plain:
                self.background(lambda: _compress_all(plain))

    def prune(self) -> list[tuple[float, str]]:
        """Remove the backups past the count or age limits; the ones kept.  A backup
        caught half compressed (both forms on disk) counts once, as lumberjack's."""
        backups, kept, names = self.backups(), [], set[str]()
        cutoff = self.now() - self.max_age if self.max_age > 0 else None
        for when, path in backups:
            name = path.removesuffix(GZ)
            if self.max_backups > 0 and name not in names and len(names) >= self.max_backups:
                doomed = True
            else:
                names.add(name)
                doomed = cutoff is not None and when < cutoff
            if not doomed:
                kept.append((when, path))
                continue
            try:
                os.remove(path)
            except OSError as e:
                log.warn("removing old audit log {path}: {e}", path=path, e=e)
        return kept

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def _compress_all(paths: list[str]) -> None:
    for path in paths:
        _compress(path)


def _compress(path: str) -> None:
    """gzip ``path`` to ``path.gz`` with its mode, then remove it.  The copy is written
    under a name of this process's own and renamed: a sibling worker compressing the
    same backup, or a crash, never leaves a truncated ``.gz``."""
    partial = f"{path}{GZ}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(path, "rb") as source:
            mode = os.fstat(source.fileno()).st_mode & 0o777
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb") as out:
                shutil.copyfileobj(source, out, 1 << 20)
        os.replace(partial, path + GZ)
        os.remove(path)
    except FileNotFoundError:  # a sibling compressed (or pruned) it first
        with contextlib.suppress(OSError):
            os.remove(partial)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.remove(partial)
        log.warn("compressing audit log {path}: {e}", path=path, e=e)


class LogBackend:
    """Buffers events and writes each reactor turn's batch with one write."""

    plugin = "log"

    def __init__(self, out: RotatingFile | IO[bytes], fmt: str, reactor: IReactorTime) -> None:
        self.out = out
        self.fmt = fmt
        self.reactor = reactor
        self.lines: list[bytes] = []
        self.pending: Any = None

    @classmethod
    def open(cls, path: str, fmt: str, reactor: IReactorTime, **rotation: Any) -> LogBackend:
        if path == "-":
            return cls(sys.stdout.buffer, fmt, reactor)
        return cls(RotatingFile(path, **rotation), fmt, reactor)

    def process(self, event: dict[str, Any]) -> None:
        if self.fmt == "legacy":
            self.lines.append(legacy_line(event).encode() + b"\n")
        else:
            self.lines.append(orjson.dumps(event, option=orjson.OPT_APPEND_NEWLINE))
        if self.pending is None:
            self.pending = self.reactor.callLater(0, self.flush)

    def flush(self) -> None:
        self.pending = None
        if not self.lines:
            return
        data, count = b"".join(self.lines), len(self.lines)
        self.lines = []
        try:
            self.out.write(data)
            if not isinstance(self.out, RotatingFile):
                self.out.flush()
        except (OSError, ValueError) as e:
            AUDIT_ERRORS.labels(plugin=self.plugin).inc(count)
            log.error("Error in audit plugin 'log' affecting {n} audit events: {e}", n=count, e=e)

    def shutdown(self) -> None:
        if self.pending is not None and self.pending.active():
            self.pending.cancel()
        self.flush()
        if isinstance(self.out, RotatingFile):
            self.out.close()
