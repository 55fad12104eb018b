"""The object cache both informers keep: objects by key, and listeners told of changes.

The server's own informer (``controllers/informer.py``, fed by the watch hub) and the
REST informer (``client/informer.py``, fed by list and watch over HTTPS) differ only in
where changes come from; what they keep and how listeners hear it is this one class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from twisted.logger import Logger

log = Logger()
Obj = dict[str, Any]
# (key, old or None, new or None): every change, in order.
Listener = Callable[[bytes, Obj | None, Obj | None], None]


class ObjectCache:
    """Objects by key, read-only to callers; ``_apply`` records a change and tells the
    listeners."""

    def __init__(self) -> None:
        self.objects: dict[bytes, Obj] = {}
        self.listeners: list[Listener] = []

    def add_listener(self, listener: Listener) -> None:
        """Hear every later change, after hearing the current objects as additions."""
        self.listeners.append(listener)
        for key, obj in list(self.objects.items()):
            listener(key, None, obj)

    def under(self, prefix: bytes) -> Iterator[Obj]:
        """Objects whose key starts with ``prefix`` (a scan: for cold paths only)."""
        for key, obj in list(self.objects.items()):
            if key.startswith(prefix):
                yield obj

    def _apply(self, key: bytes, obj: Obj | None) -> None:
        old = self.objects.pop(key, None) if obj is None else self.objects.get(key)
        if obj is not None:
            self.objects[key] = obj
        for listener in self.listeners:
            try:
                listener(key, old, obj)
            except Exception:
                log.failure("informer listener")
