"""Room in the LMDB map, and what a client sees when there is none.

- Growth: the map opens at a modest size and doubles, up to the ``--lmdb-map-size``
  ceiling, when a write transaction runs out of it.  Where LMDB sizes the file to the
  map (Windows, MDB_WRITEMAP, filesystems without sparse files) and where address space
  is short, a large ceiling then costs nothing until it is used.
  ``mdb_env_set_mapsize`` remaps the file: it must run with
  no transaction open in this process, so it runs on the reactor thread (where every
  read runs, and none is open between calls) while the writer holds no transaction;
  ``lock`` keeps the writer out for that moment.
- Other processes sharing the environment grow it too: LMDB then answers
  MDB_MAP_RESIZED when a transaction starts, and ``adopt`` maps the new size.
- A quota below the ceiling, as etcd's backend quota: creates and updates may grow the
  map up to the quota only, and are refused with etcd's "database space exceeded" when
  it is full; deletes and the change-log compaction may use the reserve above it, so
  room can be freed.  After them the map narrows again (``settle``) to the quota or the
  data's end, so creates then use free pages only (LMDB itself judges what fits).
- Disk errors (ENOSPC, EFBIG, a short write under RLIMIT_FSIZE) are named with their
  cause; LMDB aborts the transaction, reads keep working, a later write may succeed.
"""

from __future__ import annotations

import os
import resource
import threading
from typing import Any

import lmdb
from twisted.logger import Logger

from platform_api.storage.interface import NO_SPACE, UNREACHABLE, StorageError

log = Logger()

INITIAL_MAP_SIZE = 64 * 2**20
# Kept free for deletes and compaction once the quota is reached: 1/16 of the ceiling,
# at least 256 KiB (a delete logs the previous object) and at most 256 MiB.
_RESERVE_MIN = 256 * 2**10
_RESERVE_MAX = 256 * 2**20
ETCD_NO_SPACE = "etcdserver: mvcc: database space exceeded"
# strerror of what a write under a full disk or a file size limit fails with (EIO: the
# short write LMDB reports when RLIMIT_FSIZE cuts one).
_DISK_ERRORS = ("No space left on device", "File too large", "Input/output error")
_SUFFIXES = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def format_size(n: int) -> str:
    """A byte count as a flag would spell it: ``64Mi``, ``8Gi``, or plain bytes."""
    for suffix, unit in _SUFFIXES:
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def reserve_for(ceiling: int) -> int:
    return min(max(ceiling // 16, _RESERVE_MIN), _RESERVE_MAX, ceiling // 2)


class MapSpace:
    """The map size of one environment in this process: growth, adoption, the quota."""

    def __init__(self, env: lmdb.Environment, ceiling: int | None) -> None:
        self.env = env
        current = self.size()
        self.ceiling = max(ceiling or current, current)
        self.quota = self.ceiling - reserve_for(self.ceiling)
        self.page_size = env.stat()["psize"]
        # Held by the writer for each transaction, and by a remap: no write is open then.
        self.lock = threading.RLock()
        self._wide = current > self.quota  # mapped past the quota: settle() narrows it
        self.settle()

    def size(self) -> int:
        return int(self.env.info()["map_size"])

    def recover(self, error: BaseException, limit: int) -> bool:
        """Make room for a write transaction that failed with ``error``, growing the map
        up to ``limit`` at most; False if there is none to make."""
        if isinstance(error, lmdb.MapResizedError):
            self.adopt()
            return True
        return isinstance(error, lmdb.MapFullError) and self.grow(limit)

    def grow(self, limit: int) -> bool:
        """Double the map, up to ``limit``; False when it is there already.  Call on the
        reactor thread (no read open) with the writer idle."""
        size = self.size()
        if size >= limit:
            return False
        new = min(limit, size * 2)
        self._remap(new)
        self._wide = new > self.quota
        if not self._wide:
            log.info(
                "LMDB map grown from {old} to {new} (ceiling --lmdb-map-size={ceiling})",
                old=format_size(size),
                new=format_size(new),
                ceiling=format_size(self.ceiling),
            )
        return True

    def adopt(self) -> None:
        """Map the size another process grew the environment to (MDB_MAP_RESIZED)."""
        self._remap(0)
        self._wide = self.size() > self.quota
        self.settle()

    def settle(self) -> None:
        """Back to the quota (or the data's end, if past it) after deletes used the
        reserve, so creates and updates can use free pages only, never the reserve."""
        if self._wide:
            self._remap(self.quota)  # LMDB maps at least up to the last page in use
            self._wide = False

    def _remap(self, size: int) -> None:
        with self.lock:
            self.env.set_mapsize(size)

    def full(self, key: bytes = b"") -> StorageError:
        return StorageError(
            NO_SPACE, key, f"{ETCD_NO_SPACE} (--lmdb-map-size={format_size(self.ceiling)})"
        )

    def failure(self, error: BaseException, key: bytes = b"") -> StorageError:
        """The StorageError a failed write transaction answers its callers with."""
        if isinstance(error, StorageError):
            return error
        if isinstance(error, lmdb.MapFullError):
            return self.full(key)
        if isinstance(error, lmdb.DiskError) or any(e in str(error) for e in _DISK_ERRORS):
            return StorageError(NO_SPACE, key, f"database write failed: {self._disk(error)}")
        return StorageError(UNREACHABLE, key, f"storage write failed: {error}")

    def _disk(self, error: BaseException) -> str:
        """LMDB's text, and the cause when it is a full disk or a file size limit."""
        text = str(error).split(" (", 1)[0]
        path = os.path.join(self.env.path(), "data.mdb")
        try:
            size = os.stat(path).st_size
            fs = os.statvfs(path)
        except OSError:
            return text
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if limit != resource.RLIM_INFINITY and size + 2 * self.page_size > limit:
            return f"{text}: {path} reached the file size limit (RLIMIT_FSIZE={limit})"
        free = fs.f_bavail * fs.f_frsize
        if isinstance(error, lmdb.DiskError) or free < 2 * self.page_size:
            return f"{text}: no space left on the device of {path} ({free} bytes free)"
        return text


class RemappingEnvironment:
    """The environment as the store's reads see it: a read that finds the map grown by
    another process (MDB_MAP_RESIZED) maps the new size and starts again.  Write
    transactions are left to the writer's failure path, which runs on the reactor."""

    def __init__(self, env: lmdb.Environment, space: MapSpace) -> None:
        self._env = env
        self._space = space

    def begin(self, write: bool = False) -> lmdb.Transaction[bytes]:
        try:
            return self._env.begin(write=write)
        except lmdb.MapResizedError:
            if write:
                raise
            self._space.adopt()
            return self._env.begin()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)
