"""Built-in objects in the shape kube's Go types give them as JSON.

kube decodes every write into its Go struct and encodes what it stores and answers from
that struct.  Decoded, a zero value (``""``, ``0``, ``false``) is no different from an
absent field, so defaulting fills both (``type: ""`` becomes ``ClusterIP``).  Encoded,
a field the writer left out comes back as Go writes its zero value: ``"status": {}``
for a struct, ``null`` for a time or a list without ``omitempty``, ``""`` for a string
without it; zero values and empty lists and maps with ``omitempty`` are left out.  Read
back from Protobuf, kube's storage encoding, an empty list or map without ``omitempty``
is nil: ``null``.  A CronJob created without status reads back with ``"status": {}``;
an operator that indexes ``obj["status"]`` relies on it.

``shape`` gives an object the shape of one of those stages, from the same field table
and the same rule (``go_absent``) as the Protobuf decoder: an object stored as JSON then
reads as one stored as Protobuf does, and replicas on etcd answer alike whether they
wrote the object or decoded it.  Custom resources have no Go type and are left as sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from platform_api.codec.protobuf_decode import go_absent
from platform_api.codec.protobuf_schema import (
    OMITEMPTY,
    OMITZERO,
    Field,
    fields,
    message_for,
    special,
)
from platform_api.validation.objectmeta import OBJECT_META_ORDER

# How far along kube's handling of a write an object is, which decides what Go makes
# of its empty and zero values:
RECEIVED = 0  # decoded into Go: a zero scalar is as absent (defaulting fills both)
DECODED = 1  # that Go value as JSON: zero values written, those omitempty left out
STORED = 2  # read back from Protobuf: empty lists and maps without omitempty are nil

# The explicitly empty lists and maps a DECODED shaping left out: (the dict that held
# one, its key, the empty value).  Go decodes ``[]`` as a non-nil empty slice, which its
# defaulting (``== nil``) and validation (``!= nil``) tell from an absent one, while its
# JSON (``omitempty``) writes neither; ``restore_empty`` and ``drop_empty`` put them
# back for the kind's defaulting and validation and take them out again.
Kept = list[tuple[dict[str, Any], str, Any]]


class Shaper(Protocol):
    def __call__(self, obj: dict[str, Any], stage: int, kept: Kept | None = None) -> None: ...


# One field's step: (JSON name, the value Go writes when it is absent or None,
# how to shape a present value or None, how a present value holds messages (one,
# items of a list, values of a map: a map's keys are sorted as stored),
# what Go makes of an empty list or map: OMIT it, NULL (nil after the Protobuf round
# trip) or KEEP it, the types and value of a non-pointer scalar's zero (else None),
# whether Go leaves that zero out)
Step = tuple[
    str, Callable[[], Any] | None, Shaper | None, str, str, tuple[type, ...] | None, Any, bool
]
OMIT, NULL, KEEP = "omit", "null", "keep"
_ZEROS: dict[str, tuple[tuple[type, ...], Any]] = {
    "string": ((str,), ""),
    "bool": ((bool,), False),
    "int32": ((int,), 0),
    "int64": ((int,), 0),
    "double": ((int, float), 0),
}


def shape(obj: dict[str, Any], stage: int = STORED, kept: Kept | None = None) -> None:
    """Give ``obj`` (in place) the shape Go gives a write of its kind at ``stage``:
    fields Go writes filled in where absent with their zero values, and the zero values
    and empty lists and maps Go leaves out dropped (RECEIVED keeps those lists and maps,
    as Go's decoding does; DECODED records them in ``kept``).  As stored, its keys are
    in the Go struct's order, ``kind`` and ``apiVersion`` first, as kube writes its
    JSON."""
    message = message_for(obj.get("apiVersion") or "", obj.get("kind") or "")
    if message is not None:
        shaper(message)(obj, stage, kept)
        if stage == STORED:
            _reorder(obj, _TYPE_META)


def restore_empty(kept: Kept) -> None:
    """Put back the empty lists and maps a DECODED shaping left out, where nothing has
    taken their place: in kube the kind's defaulting and validation see the Go value,
    which still holds them.  (A webhook's patch makes a new object, decoded afresh from
    JSON without them: the dicts recorded are no longer part of it.)"""
    for holder, name, value in kept:
        holder.setdefault(name, value)


def drop_empty(kept: Kept) -> None:
    """Take them out again, for validating admission and storage, which see Go's JSON
    (those the kind has since filled in stay)."""
    for holder, name, value in kept:
        if holder.get(name) is value and not value:
            del holder[name]


def set_revision(obj: dict[str, Any], revision: str) -> None:
    """Set ``metadata.resourceVersion`` where kube writes it: in ObjectMeta's order, or
    among sorted keys for a custom resource (a Go map).  A write is stored with an empty
    one in place, which the storage fills in as it commits."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    if "resourceVersion" in meta:
        meta["resourceVersion"] = revision
        return
    custom = message_for(obj.get("apiVersion") or "", obj.get("kind") or "") is None
    out: dict[str, Any] = {}
    for key, value in meta.items():
        later = key > "resourceVersion" if custom else key in _AFTER_REVISION
        if later and "resourceVersion" not in out:
            out["resourceVersion"] = revision
        out[key] = value
    out.setdefault("resourceVersion", revision)
    obj["metadata"] = out


def _sort_keys(obj: dict[str, Any]) -> None:
    if len(obj) > 1:
        items = sorted(obj.items())
        if [k for k, _ in items] != list(obj):
            obj.clear()
            obj.update(items)


def _reorder(obj: dict[str, Any], order: tuple[str, ...]) -> None:
    """``obj``'s keys in ``order`` (keys it does not name keep their places after)."""
    if len(obj) < 2:
        return
    ordered = {key: obj[key] for key in order if key in obj}
    if len(ordered) < len(obj):
        ordered.update(obj)
    if list(ordered) != list(obj):
        obj.clear()
        obj.update(ordered)


def shaper(message: str, embedded: bool = False) -> Shaper:
    """The shaping walk of one message, built once; recursive types (JSONSchemaProps)
    refer to their own walk, which is registered before its steps are filled in.  An
    ``embedded`` struct's walk leaves the key order to the struct that embeds it."""
    known = _SHAPERS.get((message, embedded))
    if known is not None:
        return known
    steps: list[Step] = []
    inline: list[Shaper] = []
    order = () if embedded else go_order(message)
    if order and "kind" not in order and "apiVersion" not in order:
        # kind and apiVersion in a message without such fields are its TypeMeta, inline
        # first in Go (a StatefulSet's claim templates; a top-level object's)
        order = (*_TYPE_META, *order)
    walk = _SHAPERS[(message, embedded)] = _walker(steps, inline, order)
    for f in fields(message):
        if f.inline:  # an embedded struct's fields are this object's
            inline.append(shaper(f.ref, embedded=True))
            continue
        child, holds = None, ""
        if f.kind == "map":  # Go writes a map's keys sorted
            holds = "values"
            if f.ref not in _SCALARS and not special(f.ref):
                child = shaper(f.ref)
        elif f.kind == "message" and not special(f.ref):
            child, holds = shaper(f.ref), "items" if f.repeated else "one"
        scalar = not (f.pointer or f.repeated)
        types, zero = _ZEROS.get(f.kind, (None, None)) if scalar else (None, None)
        omits = bool(f.flags & (OMITEMPTY | OMITZERO))
        steps.append((f.json, go_absent(message, f), child, holds, _empty(f), types, zero, omits))
    return walk


def _empty(f: Field) -> str:
    """What becomes of the field's empty list or map: Go's JSON leaves it out with
    ``omitempty``; without, Protobuf decodes it as a nil slice or map, written ``null``."""
    if f.kind == "bytes" and not f.repeated and not f.pointer:
        # a []byte: "" is empty to omitempty; Protobuf reads an empty one back empty
        return OMIT if f.flags & (OMITEMPTY | OMITZERO) else KEEP
    collection = f.kind == "map" or f.repeated or special(f.ref) == "list"
    if not collection or f.pointer:
        return KEEP
    if f.flags & (OMITEMPTY | OMITZERO):
        return OMIT
    # a map is a Go map whatever its values (a ResourceList's are Quantities)
    return NULL if f.kind == "map" or (f.repeated and not special(f.ref)) else KEEP


def go_order(message: str) -> tuple[str, ...]:
    """The JSON names of a message's fields in Go struct order, an embedded struct's
    where it is embedded."""
    names: list[str] = []
    for f in fields(message):
        names.extend(go_order(f.ref) if f.inline else (f.json,))
    return tuple(names)


_SHAPERS: dict[tuple[str, bool], Shaper] = {}
_SCALARS = frozenset({"string", "bytes", "bool", "int32", "int64", "double"})
_TYPE_META = ("kind", "apiVersion")
# ObjectMeta's fields after resourceVersion.
_AFTER_REVISION = frozenset(OBJECT_META_ORDER[OBJECT_META_ORDER.index("resourceVersion") + 1 :])


def _walker(steps: list[Step], inline: list[Shaper], order: tuple[str, ...]) -> Shaper:
    def walk(obj: dict[str, Any], stage: int, kept: Kept | None = None) -> None:
        for name, absent, child, holds, empty, types, zero, omits in steps:
            value = obj.get(name)
            if value is None:
                if stage and absent is not None and name not in obj:
                    obj[name] = absent()
                continue
            if types is not None:
                if type(value) in types and value == zero and (omits or stage == RECEIVED):
                    del obj[name]
                continue
            if empty is not KEEP and not value and isinstance(value, list | dict | str):
                if empty is OMIT:
                    if stage == RECEIVED:
                        continue  # non-nil in Go: its defaulting tells it from absent
                    if kept is not None:
                        kept.append((obj, name, value))
                    del obj[name]  # ``omitempty``: Go writes no empty list or map
                elif stage == STORED:
                    obj[name] = None
                continue
            if holds == "values" and stage == STORED and isinstance(value, dict):
                _sort_keys(value)
            if child is None:
                continue
            if holds == "one":
                if isinstance(value, dict):
                    child(value, stage, kept)
            elif holds == "items":
                for item in value if isinstance(value, list) else ():
                    if isinstance(item, dict):
                        child(item, stage, kept)
            elif isinstance(value, dict):
                for item in value.values():
                    if isinstance(item, dict):
                        child(item, stage, kept)
        for embedded in inline:
            embedded(obj, stage, kept)
        if order and stage == STORED:
            _reorder(obj, order)

    return walk


def type_claim_templates(statefulset: dict[str, Any]) -> None:
    """kube's v1 conversion names each volume claim template's kind and version
    (kubernetes#87583), TypeMeta first as Go writes it; Protobuf carries no TypeMeta for
    them, so a StatefulSet read from etcd needs them back as much as a new one does."""
    spec = statefulset.get("spec")
    templates = spec.get("volumeClaimTemplates") if isinstance(spec, dict) else None
    if not isinstance(templates, list):
        return
    for index, claim in enumerate(templates):
        if isinstance(claim, dict):
            rest = {k: v for k, v in claim.items() if k not in ("kind", "apiVersion")}
            templates[index] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", **rest}
