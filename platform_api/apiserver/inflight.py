"""--max-requests-inflight / --max-mutating-requests-inflight (kube's max-in-flight filter).

Long-running requests (watch, proxy, exec...) are not counted; ``system:masters`` is
exempt so an administrator can always get in.  Over the limit is kube's plain-text 429
with Retry-After (``refuse``, also the priority and fairness filter's).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, contextmanager
from typing import Any, NoReturn

from platform_api import errors
from platform_api.apiserver.metrics import REGISTRY
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.apiserver.timingratio import Clock, Ratio, TimingRatios
from platform_api.authentication.user import MASTERS, UserInfo

_READONLY = ("get", "list", "watch")
MESSAGE = "Too many requests, please try again later."
KINDS = {False: "readOnly", True: "mutating"}
READ_VS_WRITE = TimingRatios(
    "apiserver_flowcontrol_read_vs_write_current_requests",
    "[ALPHA] Observations, at the end of every nanosecond, of the number of requests (as a "
    "fraction of the relevant limit) waiting or in regular stage of execution",
    ["phase", "request_kind"],
    (0, 0.001, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1),
    registry=REGISTRY,
)


def refuse(retry_after: int = 1) -> NoReturn:
    """kube's 429 of a request over the limit: ``http.Error``'s plain text, not a Status
    (``StatusError.plain``), with Retry-After."""
    error = errors.too_many_requests(MESSAGE, retry_after)
    error.plain = (MESSAGE + "\n").encode()
    raise error


class InflightLimiter:
    # Told of each request refused (the metrics count them as kube's filter does).
    on_reject: Callable[[RequestInfo], None] | None = None

    def __init__(self, readonly: int, mutating: int, clock: Clock = time.time) -> None:
        self.limits = {False: readonly, True: mutating}
        self.current = {False: 0, True: 0}
        # requests executing over the limit, by kind (kube's watermark observers)
        self.executing_share: dict[bool, Ratio] = {
            mutating: READ_VS_WRITE.child("executing", kind, clock=clock)
            for mutating, kind in KINDS.items()
        }
        for kind, limit in self.limits.items():
            if limit:
                self.executing_share[kind].set_denominator(limit)

    def running(self, mutating: bool, delta: int) -> None:
        """One more (or fewer) request of the kind executing."""
        count = self.current[mutating] = self.current[mutating] + delta
        self.executing_share[mutating].set(count)

    def admit(
        self, request: Any, info: RequestInfo, user: UserInfo
    ) -> AbstractAsyncContextManager[Callable[[], None] | None]:
        """``slot`` for ``async with``: the priority and fairness filter, which may make
        a request wait, takes this method's place when it is on.  Entering gives what a
        watch calls once it has sent its initial state (None: nothing waits for that)."""
        return _AsyncSlot(self.slot(info, user))

    @contextmanager
    def slot(self, info: RequestInfo, user: UserInfo) -> Iterator[None]:
        if info.long_running or MASTERS in user.groups:
            yield
            return
        mutating = info.verb not in _READONLY
        limit = self.limits[mutating]
        if limit > 0 and self.current[mutating] >= limit:
            if self.on_reject is not None:
                self.on_reject(info)
            refuse()
        self.running(mutating, 1)
        try:
            yield
        finally:
            self.running(mutating, -1)


class _AsyncSlot:
    __slots__ = ("slot",)

    def __init__(self, slot: AbstractContextManager[None]) -> None:
        self.slot = slot

    async def __aenter__(self) -> None:
        self.slot.__enter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        return self.slot.__exit__(*exc)
