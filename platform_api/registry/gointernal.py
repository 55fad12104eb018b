"""Values as kube holds them in its *internal* Go types, for messages and comparisons.

kube converts a request's object to its internal types before validating it, and some
messages print a bad value as ``json.Marshal`` writes those types: no JSON tags, so
every field shows under its Go name, in declaration order, as Go's zero value when unset
(``{"labels":{...},"Spec":{"Volumes":null,"InitContainers":null,...}}``).  The layout of
each internal struct is a table (``gointernal_types.json``, written by
``scripts/gen_gointernal.py`` from kube's sources); ``go_value`` walks a versioned JSON
value along it.  ``same`` compares two such values as kube's ``Semantic.DeepEqual``
does: nil and empty collections alike, quantities by value (``Cmp``), not by text.
The immutability errors of volumes and claims embed ``struct_diff`` of two such values.
"""

from __future__ import annotations

import difflib
import json
from datetime import datetime
from decimal import Decimal
from importlib import resources
from typing import Any

from platform_api.gotext import Struct, go_time, json_string, marshal
from platform_api.quantity import QuantityError, parse
from platform_api.validation.field import GoText
from platform_api.validation.objectmeta import OBJECT_META_ORDER

Obj = dict[str, Any]
_TABLE = json.loads(resources.files(__package__).joinpath("gointernal_types.json").read_bytes())
# type -> its fields in Go order: (Go name, versioned JSON key, Go type, embedded)
STRUCTS: dict[str, list[tuple[str, str, str, bool]]] = {
    name: [tuple(row) for row in rows] for name, rows in _TABLE["structs"].items()
}
NAMED: dict[str, str] = _TABLE["named"]  # named non-struct types -> their Go types
_INTS = frozenset({"int", "int32", "int64", "uint", "uint32", "uint64"})
_HOST_FIELDS = ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "hostUsers")


class GoQuantity(str):
    """A resource.Quantity: it marshals as its canonical text, but Semantic.DeepEqual
    compares quantities by value (``Cmp``), so ``1Gi`` and ``1073741824`` are the same."""

    amount: Decimal | str  # the text itself when it does not parse

    def __new__(cls, text: str, amount: Decimal | str) -> GoQuantity:
        made = super().__new__(cls, text)
        made.amount = amount
        return made


def go_text(type_name: str, value: Any) -> GoText:
    """``json.Marshal`` of ``value`` (versioned JSON) converted to the internal type."""
    return GoText(marshal(go_value(type_name, value)))


def same(type_name: str, a: Any, b: Any) -> bool:
    """``Semantic.DeepEqual`` of two versioned values, as their internal forms."""
    return _plain(go_value(type_name, a)) == _plain(go_value(type_name, b))


def marshal_indent(value: Any, depth: int = 0) -> str:
    """``json.MarshalIndent(value, "", " ")`` of a ``go_value`` tree: Struct fields in
    order, map keys sorted, empty collections compact (``[]``, ``{}``)."""
    if isinstance(value, dict) and value:
        items = value.items() if isinstance(value, Struct) else sorted(value.items())
        parts = [f"{json_string(k)}: {marshal_indent(v, depth + 1)}" for k, v in items]
    elif isinstance(value, list) and value:
        parts = [marshal_indent(v, depth + 1) for v in value]
    else:
        return marshal(value)
    inner = "\n" + " " * (depth + 1)
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return opening + inner + ("," + inner).join(parts) + "\n" + " " * depth + closing


def struct_diff(old: Any, new: Any) -> str:
    """apimachinery's ``diff.Diff`` of two ``go_value`` trees: a unified diff (3 lines of
    context, no file header) of their ``marshal_indent`` texts, each line ending in a
    newline, as kube's immutability messages embed it."""
    before = marshal_indent(old).split("\n")
    after = marshal_indent(new).split("\n")
    lines = list(difflib.unified_diff(before, after, lineterm="", n=3))[2:]
    return "".join(line + "\n" for line in lines)


def _plain(value: Any) -> Any:
    """Hashable and comparable; an empty slice or map is nil (a struct stays itself), a
    quantity its value."""
    if isinstance(value, GoQuantity):
        return (GoQuantity, value.amount)
    if isinstance(value, Struct):
        return tuple((k, _plain(v)) for k, v in value.items())
    if isinstance(value, list | dict) and not value:
        return None
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    return value


def go_value(type_name: str, value: Any) -> Any:
    """``value`` as its internal Go type ``type_name`` (``*core.PodSpec``, ``[]string``,
    ``map[string]string``...), as a tree ``gotext.marshal`` writes."""
    if type_name.startswith("*"):
        return None if value is None else go_value(type_name[1:], value)
    if type_name.startswith("[]"):
        if not isinstance(value, list):
            return None
        return [go_value(type_name[2:], item) for item in value]
    if type_name.startswith("map["):
        if not isinstance(value, dict):
            return None
        element = type_name[type_name.index("]") + 1 :]
        return {str(k): go_value(element, v) for k, v in value.items()}
    return _named(type_name, value)


def _named(type_name: str, value: Any) -> Any:
    if type_name in STRUCTS:
        return _struct(type_name, value if isinstance(value, dict) else {})
    if type_name in NAMED:
        return go_value(NAMED[type_name], value)
    if type_name in ("string", "types.UID"):
        return value if isinstance(value, str) else ""
    if type_name in _INTS:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0
    if type_name == "bool":
        return value if isinstance(value, bool) else False
    return _external(type_name, value)


def _struct(type_name: str, value: Obj) -> Struct:
    if type_name == "core.PodSpec":
        value = _pod_spec(value)
    out = Struct()
    for go_name, key, field_type, embedded in STRUCTS[type_name]:
        source = value if embedded and not key else value.get(key)
        rendered = go_value(field_type, source)
        if embedded and isinstance(rendered, dict):
            out.update(rendered)
        else:
            out[go_name] = rendered
    return out


def _pod_spec(spec: Obj) -> Obj:
    """Convert_v1_PodSpec_To_core_PodSpec: the host namespace fields move into the
    (always present) security context; serviceAccount stands in for an unset
    serviceAccountName."""
    converted = dict(spec)
    context = dict(spec.get("securityContext") or {})
    for key in _HOST_FIELDS:
        context.pop(key, None)
        if key in spec:
            context[key] = spec[key]
    converted["securityContext"] = context
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        converted["serviceAccountName"] = spec["serviceAccount"]
    return converted


def _external(type_name: str, value: Any) -> Any:
    """Types of apimachinery, which carry JSON tags or marshal themselves."""
    if type_name == "metav1.ObjectMeta":
        meta = value if isinstance(value, dict) else {}
        return Struct((k, meta[k]) for k in OBJECT_META_ORDER if _present(meta.get(k)))
    if type_name == "metav1.LabelSelector":
        return _selector(value if isinstance(value, dict) else {})
    if type_name == "resource.Quantity":
        return _quantity(value)
    if type_name == "intstr.IntOrString":
        return value if isinstance(value, int | str) else 0
    if type_name == "metav1.Time":
        return go_timestamp(value)
    return value


def _quantity(value: Any) -> GoQuantity:
    """A Quantity marshals as its canonical text (one not parsed shows as given)."""
    if value is None:
        return GoQuantity("0", Decimal(0))
    try:
        parsed = parse(str(value))
    except QuantityError:
        return GoQuantity(str(value), str(value))
    return GoQuantity(str(parsed), parsed.value)


def _present(value: Any) -> bool:
    return value is not None and value not in ("", 0, {}, [])


def _selector(selector: Obj) -> Struct:
    out = Struct()
    if selector.get("matchLabels"):
        out["matchLabels"] = dict(selector["matchLabels"])
    expressions = selector.get("matchExpressions")
    if expressions:
        out["matchExpressions"] = [_requirement(e or {}) for e in expressions]
    return out


def _requirement(requirement: Obj) -> Struct:
    out = Struct(key=requirement.get("key", ""), operator=requirement.get("operator", ""))
    if requirement.get("values"):
        out["values"] = list(requirement["values"])
    return out


def parse_time(value: Any) -> datetime | None:
    """A metav1.Time as kube decodes it (RFC 3339, kept to the second); None when unset
    or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(microsecond=0)


def go_timestamp(value: Any) -> str | None:
    """A metav1.Time as its MarshalJSON writes it: RFC 3339 in UTC, or null."""
    parsed = parse_time(value)
    return None if parsed is None else go_time(parsed)
