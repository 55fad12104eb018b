"""A request's YAML body parsed ahead of its handler, off the reactor.

PyYAML builds about a megabyte of a flat mapping a second (a 3 MiB list takes three):
parsed on the reactor, one such body would stall every request the server is serving.
The endpoints parse a large YAML body on a thread first (``endpoints/yamlbodies.py``) and
leave the outcome here, in the request's context; ``parse_yaml`` takes it instead of
parsing the same bytes again.  It is taken once: the caller owns (and may change) it.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Parsed:
    """The outcome of parsing ``data``: ``parse_yaml``'s value, or what it raised."""

    data: bytes
    value: Any = None
    error: Exception | None = None


_AHEAD: ContextVar[Parsed | None] = ContextVar("yaml_parsed_ahead", default=None)


def remember(parsed: Parsed) -> None:
    _AHEAD.set(parsed)


def take(data: bytes) -> Parsed | None:
    """The outcome parsed ahead for these bytes, once; None when there is none."""
    parsed = _AHEAD.get()
    if parsed is None or parsed.data != data:
        return None
    _AHEAD.set(None)
    return parsed
