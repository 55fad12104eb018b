"""kube-apiserver's stop signals: the first SIGINT or SIGTERM shuts down gracefully
(Twisted's handlers start it, the shutdown delay and drain follow); a second exits at
once with status 1, as k8s.io/apiserver's SetupSignalContext does, so a second Ctrl-C
ends a server that is draining.  Twisted logged a second signal as a critical
ReactorNotRunning traceback and went on draining.

Exiting at once loses nothing acknowledged: every acknowledged write is already on disk
(LMDB syncs each commit; etcd acknowledged it), as a kill -9 shows in the tests.
"""

from __future__ import annotations

import os
import signal
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def exit_on_second_signal(reactor: Any) -> None:
    """Once the reactor begins to shut down, a stop signal ends the process (a signal
    this process ignores, a worker's SIGINT, stays ignored)."""
    reactor.addSystemEventTrigger("before", "shutdown", arm)


def arm() -> None:
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _exit_now)


def _exit_now(signum: int, frame: Any) -> None:
    os._exit(1)
