"""Workers forked from their supervisor, which has imported the server already.

A worker exec'd as ``twistd platform-apiserver`` imported twistd and the server's ~630
modules again, every worker at once: most of a start with ``--workers``.  Forked once
the supervisor has imported them, a worker goes straight to its bootstrap.

Twisted's ``Process`` does the plumbing: the descriptor map, the pipes, reaping.  Where
it would exec, the child runs the worker instead.  The child keeps nothing live of its
parent:
- it installs a reactor of its own; the inherited one is never run, and its descriptors
  were closed with the fork (their numbers are held on /dev/null);
- it forgets the parent's child processes, signal handlers and log observers, and
  ignores SIGPIPE again as the interpreter does (Twisted's fork reset it for an exec);
- it then starts the worker's service as twistd would.
"""

from __future__ import annotations

import fcntl
import gc
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from twisted.application.app import startApplication
from twisted.application.service import Application, IService
from twisted.internet import process
from twisted.internet.interfaces import IProcessProtocol
from twisted.logger import globalLogPublisher, textFileLogObserver

from platform_api import timers

# Builds the worker's service from its command-line flags (tap.worker_service).
MakeService = Callable[[list[str]], IService]


class ForkedWorker(process.Process):
    """A child process that runs ``make_service(argv)`` rather than exec a program.

    ``environment`` replaces the child's ``os.environ``, as exec would have; ``name`` is
    the child's process name (``top``, ``ps -o comm``), its command line being its
    parent's."""

    def __init__(
        self,
        reactor: Any,
        make_service: MakeService,
        argv: list[str],
        environment: dict[str, str],
        protocol: IProcessProtocol,
        child_fds: dict[int, int | str],
        name: str,
    ) -> None:
        self._make_service = make_service
        self._name = name
        for stream in (sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()  # or the child writes what the parent buffered again
        super().__init__(
            reactor, sys.executable, argv, environment, None, protocol, None, None, child_fds
        )

    def _trySpawnInsteadOfFork(self, *args: object) -> bool:
        return False  # posix_spawn can only exec

    def _setupChild(self, fdmap: dict[int, int]) -> None:
        inherited = _open_descriptors()
        super()._setupChild(fdmap)
        _hold_closed(inherited)

    def _execChild(
        self,
        path: object,
        uid: object,
        gid: object,
        executable: object,
        args: list[str],
        environment: dict[str, str],
    ) -> NoReturn:
        # Twisted's fork wrapper reports an exception on stderr and exits 1.
        _name_process(self._name)
        os._exit(run_worker(self._make_service, args, environment))


def run_worker(make_service: MakeService, argv: list[str], environment: dict[str, str]) -> int:
    """In the forked child: the worker, until its reactor stops.  Returns the exit
    status, or ends the process with the signal that stopped it, as twistd does."""
    os.environ.clear()
    os.environ.update(environment)
    _forget_parent()
    reactor = _install_reactor()
    _log_to_stdout()
    application = Application("platform-apiserver")
    make_service(argv).setServiceParent(application)
    IService(application).privilegedStartService()
    startApplication(application, False)
    reactor.run()
    signum = getattr(reactor, "_exitSignal", None)  # twistd's way to read it
    if signum is not None:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    return 0


def _forget_parent() -> None:
    """The handlers and children the parent's reactor installed are not this process's."""
    gc.enable()  # Twisted's fork turned the collector off for the exec that never came
    signal.set_wakeup_fd(-1)
    # A worker leaves Ctrl-C to its supervisor (tap.makeService says why), from the start.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    # Twisted's fork reset what the interpreter ignores for an exec that never comes:
    # without this, a write to a peer that died (the LMDB writer, a client) kills the
    # worker with SIGPIPE instead of raising EPIPE.
    for signum in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(signum, signal.SIG_IGN)
    process.reapProcessHandlers.clear()


def _install_reactor() -> Any:
    """A new global reactor: the inherited one uninstalled, then the one a fresh
    worker's ``makeService`` installs (``timers.install``)."""
    import twisted.internet  # noqa: PLC0415

    if sys.modules.pop("twisted.internet.reactor", None) is not None:
        del twisted.internet.reactor
    timers.install()
    from twisted.internet import reactor  # noqa: PLC0415

    return reactor


def _log_to_stdout() -> None:
    """The worker logs to its standard output, which the supervisor reads, as a worker
    run by twistd with ``-n`` does; the parent's observers may write to its log file."""
    # The publisher lists its observers only privately; loggers already made hold it.
    for observer in list(globalLogPublisher._observers):
        globalLogPublisher.removeObserver(observer)
    stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    globalLogPublisher.addObserver(textFileLogObserver(stdout))


def _name_process(name: str) -> None:
    """Linux keeps 15 bytes of a process's name; elsewhere the name stays the parent's."""
    try:
        with open("/proc/self/comm", "w") as comm:
            comm.write(name[:15])
    except OSError:
        pass


def _open_descriptors() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/fd")}


def _hold_closed(inherited: set[int]) -> None:
    """Point the descriptor numbers the fork closed at /dev/null.

    Objects the child inherited still name them (sockets, the old reactor's epoll): one
    freed later would otherwise close whatever new descriptor had reused its number."""
    closed = []
    for number in inherited:
        try:
            fcntl.fcntl(number, fcntl.F_GETFD)
        except OSError:
            closed.append(number)
    null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)  # takes the lowest closed number
    for number in closed:
        if number != null:
            os.dup2(null, number, inheritable=False)
    if null not in closed:
        os.close(null)
