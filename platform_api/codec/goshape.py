"""Built-in objects in the shape kube's Go types give them as JSON.

kube decodes every write into its Go struct and encodes what it stores and answers from
that struct, so a field the writer left out comes back as Go writes its zero value:
``"status": {}`` for a struct, ``null`` for a time or a list without ``omitempty``, ``""``
for a string without it; an empty list or map with ``omitempty`` is left out.  A CronJob
created without status reads back with ``"status": {}``; an operator that indexes
``obj["status"]`` relies on it.

``shape`` makes an object about to be stored so, from the same field table
and the same rule (``go_absent``) as the Protobuf decoder: an object stored as JSON then
reads as one stored as Protobuf does, and replicas on etcd answer alike whether they
wrote the object or decoded it.  Custom resources have no Go type and are left as sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.codec.protobuf_decode import go_absent
from platform_api.codec.protobuf_schema import OMITEMPTY, OMITZERO, fields, message_for, special

Shaper = Callable[[dict[str, Any]], None]
# One field's step: (JSON name, the value Go writes when it is absent or None,
# how to shape a present value or None, how a present value holds messages,
# whether Go leaves the field out when it is an empty list or map)
Step = tuple[str, Callable[[], Any] | None, Shaper | None, str, bool]


def shape(obj: dict[str, Any]) -> None:
    """Give ``obj`` (in place) the fields Go's JSON writes for its kind where they are
    absent, and drop the empty lists and maps Go leaves out."""
    message = message_for(obj.get("apiVersion") or "", obj.get("kind") or "")
    if message is not None:
        shaper(message)(obj)


def shaper(message: str) -> Shaper:
    """The shaping walk of one message, built once; recursive types (JSONSchemaProps)
    refer to their own walk, which is registered before its steps are filled in."""
    known = _SHAPERS.get(message)
    if known is not None:
        return known
    steps: list[Step] = []
    inline: list[Shaper] = []
    walk = _SHAPERS[message] = _walker(steps, inline)
    for f in fields(message):
        if f.inline:  # an embedded struct's fields are this object's
            inline.append(shaper(f.ref))
            continue
        child, holds = None, ""
        if f.kind == "map" and f.ref not in _SCALARS and not special(f.ref):
            child, holds = shaper(f.ref), "values"
        elif f.kind == "message" and not special(f.ref):
            child, holds = shaper(f.ref), "items" if f.repeated else "one"
        collection = f.kind == "map" or f.repeated or special(f.ref) == "list"
        omits = collection and bool(f.flags & (OMITEMPTY | OMITZERO)) and not f.pointer
        steps.append((f.json, go_absent(message, f), child, holds, omits))
    return walk


_SHAPERS: dict[str, Shaper] = {}
_SCALARS = frozenset({"string", "bytes", "bool", "int32", "int64", "double"})


def _walker(steps: list[Step], inline: list[Shaper]) -> Shaper:
    def walk(obj: dict[str, Any]) -> None:
        for name, absent, child, holds, omits in steps:
            value = obj.get(name)
            if value is None:
                if absent is not None and name not in obj:
                    obj[name] = absent()
                continue
            if omits and not value and isinstance(value, list | dict):
                del obj[name]  # ``omitempty``: Go writes no empty list or map
                continue
            if child is None:
                continue
            if holds == "one":
                if isinstance(value, dict):
                    child(value)
            elif holds == "items":
                for item in value if isinstance(value, list) else ():
                    if isinstance(item, dict):
                        child(item)
            elif isinstance(value, dict):
                for item in value.values():
                    if isinstance(item, dict):
                        child(item)
        for embedded in inline:
            embedded(obj)

    return walk
