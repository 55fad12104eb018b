"""kube-apiserver's stop signals: the first SIGINT or SIGTERM shuts down gracefully
(the shutdown delay and drain follow); a second exits at
once with status 1, as k8s.io/apiserver's SetupSignalContext does, so a second Ctrl-C
ends a server that is draining.

Twisted's handler only queues ``reactor.stop`` for the reactor thread, so two signals
that arrive together (``pkill`` matching a supervisor and its workers, systemd stopping
a control group) both queued one, and the second logged a critical ReactorNotRunning
traceback.  Here Twisted's handler runs for the first signal only; the handlers change
at that signal itself, or when the reactor begins to shut down for another reason.

A worker of ``--workers N`` ignores a repeated SIGTERM instead: its supervisor forwards
the stop signal the worker may have had already, and exiting on that would cut the
worker's drain short.  A second signal to the supervisor ends every worker with it.

Exiting at once loses nothing acknowledged: every acknowledged write is already on disk
(LMDB syncs each commit; etcd acknowledged it), as a kill -9 shows in the tests.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from typing import Any

from twisted.internet.error import ReactorNotRunning
from twisted.logger import Logger

log = Logger()

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

Handler = Callable[[int, Any], None]


def exit_on_second_signal(reactor: Any, before_exit: Callable[[], None] | None = None) -> None:
    """After the first stop signal, another ends the process (``before_exit`` runs first,
    to take child processes along).  A signal this process ignores stays ignored."""

    def exit_now(signum: int, frame: Any) -> None:
        if before_exit is not None:
            before_exit()
        os._exit(1)

    _on_repeat(reactor, exit_now)


def ignore_repeated_signals(reactor: Any) -> None:
    """After the first stop signal, more are logged and otherwise ignored."""

    def ignore(signum: int, frame: Any) -> None:
        log.info("Received {name} while stopping; ignoring it", name=signal.Signals(signum).name)

    _on_repeat(reactor, ignore)


def _on_repeat(reactor: Any, repeat: Handler) -> None:
    def arm() -> None:
        for signum in STOP_SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                signal.signal(signum, repeat)

    def wrap_twisteds() -> None:
        # Twisted installs its handlers during startup; this runs after them.
        for signum in STOP_SIGNALS:
            handler = signal.getsignal(signum)
            if callable(handler):
                signal.signal(signum, _once(handler, arm, repeat))

    reactor.addSystemEventTrigger("after", "startup", wrap_twisteds)
    reactor.addSystemEventTrigger("before", "shutdown", arm)


def _once(first: Handler, arm: Callable[[], None], repeat: Handler) -> Handler:
    """``first`` (Twisted's handler: it logs, queues the stop and records the signal
    for twistd to end with), then ``repeat`` for every later signal."""
    stopping = False

    def handler(signum: int, frame: Any) -> None:
        nonlocal stopping
        # Python runs a signal arriving meanwhile at a call or a loop's end: never
        # between this test and the assignment, so ``first`` runs once.
        if stopping:
            repeat(signum, frame)
            return
        stopping = True
        arm()
        first(signum, frame)

    return handler


def stop_reactor(reactor: Any) -> None:
    """Stop ``reactor`` unless it is stopping already."""
    with contextlib.suppress(ReactorNotRunning):
        reactor.stop()
