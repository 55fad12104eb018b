"""Watch streams indexed by one field's value: kube's watch-cache triggers.

A kubelet watches the pods of its Node (``fieldSelector=spec.nodeName=<node>``); with
every watcher handed every pod event, each of a few hundred Nodes' watchers decoded
and tested every event, ~7 us apiece, and a pod create cost 2 ms more CPU with 300 of
them.  kube's pod storage registers ``spec.nodeName`` as a trigger: the watch cache
sends an event only to the watchers whose value the object has, before or after the
change.  A stream that declares a ``trigger`` (the field, its getter, the value it
selects) is indexed so here; it still tests what it is given against its whole
selector.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from platform_api.storage.interface import Event

Obj = dict[str, Any]
# (field name, how to read it from an object, the value the watcher selects)
Trigger = tuple[str, Callable[[Obj], Any], str]


class Triggered(Protocol):
    """What the index needs of a subscription."""

    @property
    def prefixes(self) -> tuple[bytes, ...]: ...

    @property
    def trigger(self) -> Trigger | None: ...


class TriggerIndex:
    """The subscriptions of one audience that declare a trigger, by field and value."""

    def __init__(self, subscriptions: Iterable[Triggered]) -> None:
        # (first prefix, field) -> (getter, value -> subscriptions)
        self._fields: dict[tuple[bytes, str], tuple[Callable[[Obj], Any], dict[str, list[Any]]]]
        self._fields = {}
        for sub in subscriptions:
            if sub.trigger is None:
                continue
            name, getter, value = sub.trigger
            _, by_value = self._fields.setdefault((sub.prefixes[0], name), (getter, {}))
            by_value.setdefault(value, []).append(sub)

    def __bool__(self) -> bool:
        return bool(self._fields)

    def pick(self, events: list[Event]) -> dict[int, list[Event]]:
        """The events each indexed subscription (by ``id``) may want, in order."""
        picked: dict[int, list[Event]] = {}
        for getter, by_value in self._fields.values():
            for event in events:
                for value in _values(getter, event):
                    for sub in by_value.get(value, ()):
                        if event.key.startswith(sub.prefixes):
                            picked.setdefault(id(sub), []).append(event)
        return picked


def _values(getter: Callable[[Obj], Any], event: Event) -> set[str]:
    """The field's values in the object after and before the change."""
    found: set[str] = set()
    for stored in (event.stored, event.prev):
        if stored is not None:
            try:
                found.add(str(getter(stored.object)))
            except Exception:  # an object of another kind in a mixed batch
                continue
    return found
