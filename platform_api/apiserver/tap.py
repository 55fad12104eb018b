"""``twistd platform-apiserver``: its command-line options and service."""

from __future__ import annotations

import gc
import io
import os
import signal
import sys
from types import ModuleType
from typing import Any

from twisted.application.service import IService

from platform_api import timers
from platform_api.apiserver import deprecatedflags
from platform_api.apiserver.config import ServerConfig, from_flags
from platform_api.apiserver.flagoptions import FlagOptions, parameters
from platform_api.apiserver.inertflags import INERT
from platform_api.apiserver.serverflags import BOOL_FLAGS, FLAGS, GATHERED
from platform_api.apiserver.workerslot import WORKER_ENV

# New objects between collections of the youngest generation (CPython's default: 700).
GC_YOUNG = 10_000


class Options(FlagOptions):
    longdesc = "A Kubernetes-compatible cluster control plane API server, on Twisted and LMDB."
    optParameters = parameters(FLAGS)
    FLAGS = FLAGS
    BOOL_FLAGS = BOOL_FLAGS
    GATHERED = GATHERED

    def rewrite(self, args: list[str]) -> list[str]:
        self.taken: dict[str, str] = {}
        tables = (deprecatedflags.DEPRECATED, INERT)
        # A worker's supervisor has named the deprecated and ignored flags already.
        out = io.StringIO() if os.environ.get(WORKER_ENV) else None
        return deprecatedflags.extract(args, out, tables=tables, taken=self.taken)

    def configure(self, given: dict[str, str | None]) -> None:
        self.config: ServerConfig = from_flags(given)
        # As given, for /flagz: kube shows every flag, the ones this server ignores too.
        named = {name: value for name, value in given.items() if value is not None}
        self.config.flags_given = {**getattr(self, "taken", {}), **named}


def makeService(options: Any) -> IService:
    from platform_api.apiserver.workerslot import WorkerSlot  # noqa: PLC0415

    timers.install()  # before anything imports the reactor: timers on the monotonic clock
    slot = WorkerSlot.from_environment()
    if slot is None and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started with SIGINT ignored (a shell starts background commands so): kube-apiserver
        # stops on it all the same (Go's signal.Notify installs a handler), while Twisted
        # installs its own only over Python's default.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if slot is None and options.config.workers > 1:
        # The supervisor serves nothing itself, but imports the server once so that the
        # workers it forks start with it imported (forkedworker.py).
        from platform_api.apiserver.workers import WorkerSupervisor  # noqa: PLC0415

        _import_server()
        gc.freeze()  # the imported heap stays in pages the workers share
        return WorkerSupervisor(options.config, sys.argv, worker_service)
    if slot is not None:
        # Ctrl-C reaches the whole process group; the supervisor then stops each worker
        # with SIGTERM.  A worker that also stopped on the SIGINT got two stop signals,
        # and Twisted logged the second as a critical ReactorNotRunning.  (Twisted keeps
        # a SIGINT disposition it finds set.)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    service = _import_server()
    # A collection every 700 new objects (CPython's default) walks a large answer's
    # objects again and again while it is built: a Table of 3000 pods took 350 ms, 200
    # with collections every 10,000 (benchmarks/clusterscale-style probe, one sitting).
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
    return service.APIServerService(options.config, freeze_heap=True, slot=slot)


def worker_service(argv: list[str]) -> IService:
    """A forked worker's service, from the flags a worker is started with."""
    options = Options()
    options.parseOptions(argv)
    return makeService(options)


def _import_server() -> ModuleType:
    """The server's modules, imported here so that ``twistd platform-apiserver --help``
    stays fast.  The import builds ~70k long-lived objects; collecting garbage meanwhile
    finds none and costs ~0.1 s of the start (measured with benchmarks/fixturebench.py)."""
    gc.disable()
    try:
        from platform_api.apiserver import service  # noqa: PLC0415
    finally:
        gc.enable()
    return service
