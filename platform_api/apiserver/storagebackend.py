"""The storage the server runs on, opened and closed in one place: LMDB under
``--data-dir`` (the default) or etcd (``--storage-backend=etcd3``).

Both give the registry the same ``Storage``; what differs is what they need around them
(LMDB: the environment and its writer process, a thread when values are encrypted;
etcd: the client and the watch that keeps the cache current). Their health check keeps
kube's name, ``etcd``, on either: probes (``/livez/etcd``) and upstream's e2e ask for it
by that name, as k3s keeps it over SQLite.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from typing import Any

from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.sharedwriter import WRITER_ENV
from platform_api.apiserver.storageoptions import ETCD3
from platform_api.privatefiles import private_dir
from platform_api.storage.lmdb_connection import WriterConnection
from platform_api.storage.lmdb_link import FramedWriter
from platform_api.storage.lmdb_process import WriterProcess
from platform_api.storage.lmdb_space import INITIAL_MAP_SIZE
from platform_api.storage.lmdb_store import LMDBStorage, open_environment


class Backend:
    """An open storage backend."""

    storage: Any
    # Whether worker processes learn of each other's commits only from a shared change
    # log, so a commit must wake them (LMDB); etcd's watch tells every replica itself.
    wake_siblings = True
    # Whether each process keeps its own change history (etcd's watch cache), which each
    # then trims; LMDB's change log is shared, and trimmed by the leader alone.
    history_per_process = False

    def start(self) -> None:
        """Begin following changes (etcd's watch); LMDB commits feed the hub directly."""

    def hear_siblings(self, heard: Callable[[], None]) -> bool:
        """Have ``heard`` called when other workers commit, where this backend's writer
        tells of them; False: the workers must wake each other."""
        return False

    def close(self) -> None: ...

    def storage_size(self) -> tuple[str, int] | None:
        """``apiserver_storage_size_bytes``: (``storage_cluster_id``, bytes), or None
        while the size is unknown (kube then leaves the sample out)."""
        return None

    def database_sizes(self) -> list[tuple[str, Callable[[], float]]]:
        """(endpoint, bytes) for kube's hidden ``apiserver_storage_db_total_size_in_bytes``."""
        return []

    def watch_cache(self) -> Any:
        """The watch cache whose history sizes kube's ``watch_cache_capacity``
        reports (etcd's; LMDB keeps none: its change log is the history)."""
        return None

    def check(self) -> str | None:
        """The health check: None when the storage answers."""
        try:
            self.storage.current_revision()
        except Exception as e:
            return str(e)
        return None


def _daemon_thread(*args: Any, **kwargs: Any) -> threading.Thread:
    return threading.Thread(*args, daemon=True, **kwargs)


class _WriterPool(ThreadPool):
    """The LMDB writer's thread, a daemon: a server whose start failed after the pool
    started must still be able to exit (it hung in interpreter shutdown).  A normal stop
    joins it first; a write cut short is never acknowledged, so nothing is lost."""

    threadFactory = staticmethod(_daemon_thread)  # type: ignore[assignment]


class LMDBBackend(Backend):
    def __init__(self, cfg: ServerConfig, reactor: Any, transformer: Any) -> None:
        private_dir(cfg.data_dir, ours=False)
        # A modest map that grows on demand up to --lmdb-map-size (storage/lmdb_space.py).
        initial = min(cfg.lmdb_map_size, INITIAL_MAP_SIZE)
        path = os.path.join(cfg.data_dir, "db")
        self.env = open_environment(path, initial, cfg.lmdb_map_size)
        self._data_file = os.path.abspath(os.path.join(path, "data.mdb"))
        self.pool: ThreadPool | None = None
        self.writer: FramedWriter | None = None
        shared = os.environ.get(WRITER_ENV)
        if transformer is None:
            if shared:  # the supervisor's, for all its workers (sharedwriter.py)
                self.writer = WriterConnection(reactor, shared)
            else:
                self.writer = WriterProcess(reactor, path, initial, cfg.lmdb_map_size)
            self.storage = LMDBStorage(
                self.env, None, map_ceiling=cfg.lmdb_map_size, writer=self.writer
            )
            return
        # The keys (and a KMS plugin's connection) live in this process: the encrypting
        # writer is a thread of it.
        self.pool = _WriterPool(1, 1, "lmdb-writer")
        self.pool.start()
        pool = self.pool
        self.storage = LMDBStorage(
            self.env,
            lambda work: deferToThreadPool(reactor, pool, work),
            map_ceiling=cfg.lmdb_map_size,
            transformer=transformer,
        )

    def hear_siblings(self, heard: Callable[[], None]) -> bool:
        # The workers' shared writer sends each the newest revision with its answers,
        # and alone to a worker with none coming (lmdb_serve.NEWS_GAP): under load no
        # worker is woken for another's commit.
        if not isinstance(self.writer, WriterConnection):
            return False
        self.writer.on_news = heard
        return True

    def check(self) -> str | None:
        if self.writer is not None and not self.writer.running:
            return "the LMDB writer is restarting"
        return super().check()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.stop()
        if self.pool is not None:
            self.pool.stop()
        self.env.close()

    def _allocated(self) -> int | None:
        """The data file's allocated blocks in bytes (None: it cannot be read)."""
        try:
            return os.stat(self._data_file).st_blocks * 512
        except OSError:
            return None

    def database_sizes(self) -> list[tuple[str, Callable[[], float]]]:
        def size() -> float:
            allocated = self._allocated()
            return -1.0 if allocated is None else float(allocated)

        return [(self._data_file, size)]

    def storage_size(self) -> tuple[str, int] | None:
        # The label names the file, as one etcd cluster's would name the cluster.
        size = self._allocated()
        if size is None:
            return None
        return hashlib.sha256(self._data_file.encode()).hexdigest()[:16], size


class EtcdBackend(Backend):
    wake_siblings = False
    history_per_process = True

    def __init__(self, cfg: ServerConfig, reactor: Any, transformer: Any) -> None:
        # Imported only here: the etcd client costs start time LMDB servers skip.
        from platform_api.apiserver.enablement import keyed_resources  # noqa: PLC0415
        from platform_api.storage.etcd.client import EtcdClient  # noqa: PLC0415
        from platform_api.storage.etcd.layout import KeyLayout  # noqa: PLC0415
        from platform_api.storage.etcd.monitor import SizeMonitor  # noqa: PLC0415
        from platform_api.storage.etcd.store import EtcdStorage  # noqa: PLC0415
        from platform_api.storage.etcd.transport import RETRY_FOR, TLSConfig  # noqa: PLC0415

        options = cfg.storage
        tls = TLSConfig.from_files(options.etcd_cafile, options.etcd_certfile, options.etcd_keyfile)
        self.endpoints = list(options.etcd_servers)
        # A request waits out an etcd restart, as kube's (its timeouts end it first).
        self.client = EtcdClient(options.etcd_servers, reactor, tls=tls, retry_for=RETRY_FOR)
        layout = KeyLayout(options.etcd_prefix, keyed_resources())
        self.storage = EtcdStorage(
            self.client, layout, reactor, transformer=transformer, media_type=options.media_type
        )
        self.storage.load()  # blocks: the cache is filled before anything is served
        self.monitor = SizeMonitor(self.client, reactor)

    def start(self) -> None:
        self.storage.start()
        self.monitor.start()

    def close(self) -> None:
        self.monitor.stop()
        self.storage.stop()
        self.client.close()

    def storage_size(self) -> tuple[str, int] | None:
        size = self.monitor.size
        return None if size is None else (self.monitor.cluster_id, size)

    def database_sizes(self) -> list[tuple[str, Callable[[], float]]]:
        # kube polls each endpoint's Status; the members' databases differ little, so
        # each is labelled with the size the monitor last read (0 before it has one).
        def size() -> float:
            return float(self.monitor.size or 0)

        return [(endpoint, size) for endpoint in self.endpoints]

    def watch_cache(self) -> Any:
        return self.storage.cache

    def check(self) -> str | None:
        return self.storage.problem()


def open_backend(cfg: ServerConfig, reactor: Any, transformer: Any = None) -> Backend:
    if cfg.storage.backend == ETCD3:
        return EtcdBackend(cfg, reactor, transformer)
    return LMDBBackend(cfg, reactor, transformer)
