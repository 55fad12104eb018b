"""Large YAML request bodies parsed on a thread before the handler runs.

The handlers decode bodies synchronously (``endpoints/body.py``); a YAML body of a few
megabytes takes PyYAML seconds, during which the reactor would serve nobody.  Such a
body is parsed on the reactor's thread pool first and its outcome left for the
handler's ``parse_yaml`` (``codec/yamlahead.py``): the GIL still passes to the reactor
while the thread parses.  JSON is parsed by orjson in milliseconds and stays inline.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool
from twisted.web.server import Request

from platform_api.codec import yamlahead
from platform_api.codec.text import parse_yaml_now
from platform_api.endpoints.negotiation import APPLY_PATCH_YAML, YAML

# Smaller bodies parse in under ~20 ms: the hand-off to a thread would cost more.
THRESHOLD = 64 * 1024
# One thread, per reactor: with the GIL two parses take no less time than one after the
# other, and each holds a large body's objects; more would only multiply the memory.
_POOLS: dict[int, ThreadPool] = {}


def _pool(reactor: Any) -> ThreadPool:
    pool = _POOLS.get(id(reactor))
    if pool is None:
        pool = _POOLS[id(reactor)] = ThreadPool(0, 1, "yaml-bodies")
        pool.start()
        reactor.addSystemEventTrigger("during", "shutdown", _stop, reactor)
    return pool


def _stop(reactor: Any) -> None:
    pool = _POOLS.pop(id(reactor), None)
    if pool is not None:
        pool.stop()


def _parse(data: bytes) -> yamlahead.Parsed:
    try:
        return yamlahead.Parsed(data, parse_yaml_now(data))
    except Exception as e:  # raised again where the handler parses: its Status then
        return yamlahead.Parsed(data, error=e)


async def parse_ahead(request: Request, reactor: Any) -> None:
    """Parse ``request``'s body on a thread when it is YAML its handler will parse and
    large enough to stall the reactor."""
    content_type = request.getHeader(b"content-type")
    if content_type is None:
        return
    media = content_type.split(b";", 1)[0].strip().lower().decode("latin-1")
    if media not in (YAML, APPLY_PATCH_YAML) or request.content is None:
        return
    request.content.seek(0)
    data: bytes = request.content.read()
    if len(data) < THRESHOLD:
        return
    if media == APPLY_PATCH_YAML and data.lstrip()[:1] == b"{":
        return  # JSON, which the apply handler parses as JSON first
    parsed = await deferToThreadPool(reactor, _pool(reactor), _parse, data)
    yamlahead.remember(parsed)
