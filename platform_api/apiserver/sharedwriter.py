"""The LMDB writer a ``--workers`` supervisor runs for all its workers.

Each server process used to commit through a writer process of its own; two workers'
writers then took turns at LMDB's write lock (lmdb_serve.py has the figures).  The
supervisor runs one writer instead, on an abstract Unix socket (no file, so no path
length limit or stale file; a name with a random part, so no other user can take it
first), and tells the workers its name (``PLATFORM_APISERVER_LMDB_WRITER``); their
writes share its transactions.  A writer that dies is started again (the workers answer
the writes it held as lost, read what it committed from the change log, and connect
again); it stops once the workers have, when the supervisor closes its input.  With
encryption at rest each worker keeps its writer thread: the keys live in the workers.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.storageoptions import LMDB
from platform_api.storage.lmdb_process import RestartingWriter
from platform_api.storage.lmdb_space import INITIAL_MAP_SIZE
from platform_api.storage.lmdb_writer import writer_command

WRITER_ENV = "PLATFORM_APISERVER_LMDB_WRITER"  # the writer's socket name, for the workers


def shares_writer(cfg: ServerConfig) -> bool:
    """Whether this supervisor's workers commit through one writer."""
    return cfg.storage.backend == LMDB and not cfg.encryption_provider_config


class SharedWriter(RestartingWriter):
    def __init__(self, reactor: Any, cfg: ServerConfig, name: str | None = None) -> None:
        self.socket = name or f"platform-apiserver-lmdb-writer-{os.getpid()}-{secrets.token_hex(8)}"
        initial = min(cfg.lmdb_map_size, INITIAL_MAP_SIZE)
        path = os.path.join(cfg.data_dir, "db")
        args = writer_command(path, initial, cfg.lmdb_map_size, "--listen", self.socket)
        super().__init__(reactor, args)
