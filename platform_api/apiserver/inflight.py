"""--max-requests-inflight / --max-mutating-requests-inflight (kube's max-in-flight filter).

Long-running requests (watch, proxy, exec...) are not counted; ``system:masters`` is
exempt so an administrator can always get in.  Over the limit is kube's plain-text 429
with Retry-After (``refuse``, also the priority and fairness filter's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, contextmanager
from typing import Any, NoReturn

from platform_api import errors
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.authentication.user import MASTERS, UserInfo

_READONLY = ("get", "list", "watch")
MESSAGE = "Too many requests, please try again later."


def refuse(retry_after: int = 1) -> NoReturn:
    """kube's 429 of a request over the limit: ``http.Error``'s plain text, not a Status
    (``StatusError.plain``), with Retry-After."""
    error = errors.too_many_requests(MESSAGE, retry_after)
    error.plain = (MESSAGE + "\n").encode()
    raise error


class InflightLimiter:
    # Told of each request refused (the metrics count them as kube's filter does).
    on_reject: Callable[[RequestInfo], None] | None = None

    def __init__(self, readonly: int, mutating: int) -> None:
        self.limits = {False: readonly, True: mutating}
        self.current = {False: 0, True: 0}

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
        self.current[mutating] += 1
        try:
            yield
        finally:
            self.current[mutating] -= 1


class _AsyncSlot:
    __slots__ = ("slot",)

    def __init__(self, slot: AbstractContextManager[None]) -> None:
        self.slot = slot

    async def __aenter__(self) -> None:
        self.slot.__enter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        return self.slot.__exit__(*exc)
