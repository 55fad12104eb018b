"""What one server among those sharing the storage does while it leads (leadership.py):
compaction of the change log, kube's compaction mark, and the in-process controllers.

A worker or replica that loses leadership stops all of them; the next leader starts
them afresh, so two servers never run the same controller at once.

History trimming is a leader's duty only where the history is shared (LMDB's change
log).  On etcd every replica keeps its own watch cache, so every replica trims it
(``trim_history``): a replica that did not lead kept all its history, and a continue
token it had issued never expired.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.apiserver.periodic import every
from platform_api.apiserver.periodic import stop as stop_loop
from platform_api.controllers.base import Controller
from platform_api.controllers.informer import shared_lists

log = Logger()


class Compacting(Protocol):
    """The storage backends' housekeeping (LMDB's and etcd's stores both have it)."""

    def compact(self, older_than: float) -> Deferred[int]: ...

    def mark_compaction(self) -> Deferred[int]: ...


class LeaderDuties:
    def __init__(
        self,
        storage: Compacting,
        history_window: float,
        build_controllers: Callable[[], list[Controller]],
        reactor: Any,
        trims_history: bool = True,
    ) -> None:
        self.storage = storage
        self.trims_history = trims_history
        self.history_window = history_window
        self.build_controllers = build_controllers
        self.reactor = reactor
        self.controllers: list[Controller] = []
        self._loops: list[LoopingCall] = []

    def start(self) -> None:
        window = self.history_window
        if self.trims_history:
            self._loops.append(trim_history(self.storage, window, self.reactor))
        # kube's compactor, every --etcd-compaction-interval: old continue tokens expire.
        self._every(max(0.5, window), self._mark_compaction)
        self.controllers.extend(self.build_controllers())
        with shared_lists():
            for controller in self.controllers:
                controller.start()

    def stop(self) -> None:
        for loop in self._loops:
            stop_loop(loop)
        self._loops.clear()
        for controller in self.controllers:
            controller.stop()
        self.controllers.clear()

    def _every(self, interval: float, work: Callable[[], Any]) -> None:
        self._loops.append(every(self.reactor, interval, work, "periodic task", now=False))

    def _mark_compaction(self) -> Any:
        d = self.storage.mark_compaction()
        return d.addErrback(lambda f: log.failure("marking a compaction", f))


def trim_history(storage: Compacting, window: float, reactor: Any) -> LoopingCall:
    """Forget history older than ``window``, every tenth of it (at most every 30 s)."""

    def trim() -> Any:
        d = storage.compact(window)
        # A failed pass is logged and retried at the next tick; the timer keeps running.
        return d.addErrback(lambda f: log.failure("compacting the change log", f))

    return every(reactor, max(0.5, min(window / 10, 30.0)), trim, "periodic task", now=False)
