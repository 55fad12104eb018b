"""Metadata timestamps as kube writes and reads them: ``metav1.Time`` (RFC 3339 to the
second, UTC) and ``MicroTime`` (six fractional digits); every write stamps one."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

from platform_api.gotext import go_time


def format_time(value: datetime, micro: bool = False) -> str:
    """A metav1.Time (MicroTime, with ``micro``) as Go writes it."""
    return go_time(value, f".{value.microsecond:06d}" if micro else "")


def format_timestamp(timestamp: float) -> str:
    """A unix time as RFC 3339 to the second (metadata timestamps)."""
    return _format_second(int(timestamp // 1))


def parse_timestamp(text: object) -> float | None:
    """An RFC 3339 time (a stored metav1.Time) as a unix time; None when it is not one
    (no offset, or not a time): callers say what an unreadable time means to them."""
    try:
        when = datetime.fromisoformat(str(text).replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return when.timestamp() if when.tzinfo is not None else None


@functools.lru_cache(maxsize=4)
def _format_second(second: int) -> str:
    """Each second formatted once: every write stamps the current one."""
    return format_time(datetime.fromtimestamp(second, UTC))
