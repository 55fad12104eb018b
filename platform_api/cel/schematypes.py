"""CEL types of OpenAPI (structural) schemas, as kube's ``common.SchemaDeclType`` builds them.

A schema in its JSON dict form becomes a ``DeclType`` tree: objects with properties are message
types (their property names escaped as kube escapes them; unescapable names are left out),
``additionalProperties`` maps, arrays lists, ``int-or-string`` dyn, ``number`` double,
``integer`` int, string formats ``byte``/``date``/``date-time``/``duration`` bytes, timestamps
and durations.  Untyped schemas (``x-kubernetes-preserve-unknown-fields`` alone) are not exposed.
Sizes (``max_elements``, ``min_size``) feed the cost estimator, as kube's do.

Object types become protobuf messages of a pool built per schema (cel-cpp type-checks against
messages).  Protobuf cannot nest lists and maps directly: a list of lists or of maps is declared
with ``google.protobuf.ListValue``/``Struct`` elements, so checks inside such nesting are dyn.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel

from platform_api.cel.protos import add_message, entry_name, file_proto, new_pool, set_type

MAX_REQUEST_SIZE = 3 * 1024 * 1024
MAX_DURATION_JSON, MAX_DATETIME_JSON, MIN_DURATION_JSON = 32, 32, 3
JSON_DATE_SIZE, MIN_DATETIME_JSON, MIN_STRING, MIN_BOOL, MIN_NUMBER = 12, 21, 2, 4, 1

# CEL's reserved words: property names to escape, variable names to refuse.
RESERVED_WORDS = frozenset(
    {
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)
_EXPAND = re.compile(r"(__|[-./]|[^a-zA-Z0-9\-./_])")
_VALID = re.compile(r"^[a-zA-Z0-9_]*\Z")
_EXPANSIONS = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def escape(name: str) -> str | None:
    """kube's ``cel.Escape``: the CEL field name of a property, None when inaccessible."""
    if not name or name[0].isdigit():
        return None
    if name in RESERVED_WORDS:
        return f"__{name}__"
    if _VALID.match(name) and "__" not in name:
        return name
    failed = False

    def expand(match: re.Match[str]) -> str:
        nonlocal failed
        text = match.group(0)
        if text in _EXPANSIONS:
            return _EXPANSIONS[text]
        failed = True
        return ""

    escaped = _EXPAND.sub(expand, name)
    return None if failed else escaped


@dataclass(eq=False)  # one per schema node, told apart by identity
class DeclType:
    """kube's DeclType: a CEL type with the size facts its cost estimates use."""

    kind: str  # object, list, map, string, bytes, int, double, bool, dyn, duration, timestamp
    max_elements: int = 0
    min_size: int = 1
    fields: dict[str, tuple[str, DeclType]] = field(default_factory=dict)  # escaped -> (name, t)
    elem: DeclType | None = None
    message: str = ""  # full protobuf name of an object type, once a pool is built
    list_type: str = ""  # a list's x-kubernetes-list-type: set and map compare unordered
    map_keys: tuple[str, ...] = ()  # a map-list's x-kubernetes-list-map-keys

    def cel_type(self) -> Any:
        if self.kind == "object":
            return cel.Type(self.message)
        if self.kind == "list":
            assert self.elem is not None
            return cel.Type.List(self.elem.cel_type())
        if self.kind == "map":
            assert self.elem is not None
            return cel.Type.Map(cel.Type.STRING, self.elem.cel_type())
        return _SCALAR_TYPES[self.kind]

    def type_text(self) -> str:
        """The type in CEL notation (for declarations that ``cel.Type`` cannot spell)."""
        if self.kind == "object":
            return self.message
        if self.kind in ("list", "map"):
            assert self.elem is not None
            inner = self.elem.type_text()
            return f"list({inner})" if self.kind == "list" else f"map(string, {inner})"
        return self.kind

    def field_type(self, escaped: str) -> DeclType | None:
        entry = self.fields.get(escaped)
        return entry[1] if entry else None


_SCALAR_TYPES = {
    "string": cel.Type.STRING,
    "bytes": cel.Type.BYTES,
    "int": cel.Type.INT,
    "double": cel.Type.DOUBLE,
    "bool": cel.Type.BOOL,
    "dyn": cel.Type.DYN,
    "duration": cel.Type.DURATION,
    "timestamp": cel.Type.TIMESTAMP,
}


def _nonneg(value: Any) -> int:
    return max(int(value), 0)


def _max_string(schema: dict[str, Any]) -> int:
    if schema.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST_SIZE - 2
    return {
        "duration": MAX_DURATION_JSON,
        "date": JSON_DATE_SIZE,
        "date-time": MAX_DATETIME_JSON,
    }.get(schema.get("format", ""), MAX_REQUEST_SIZE - 2)


def with_type_and_object_meta(schema: dict[str, Any]) -> dict[str, Any]:
    """A resource root (or embedded resource) also declares apiVersion, kind, metadata.name..."""
    props = schema.get("properties") or {}
    meta = props.get("metadata") or {}
    meta_props = meta.get("properties") or {}
    if (
        props.get("kind", {}).get("type") == "string"
        and props.get("apiVersion", {}).get("type") == "string"
        and meta.get("type") == "object"
        and meta_props.get("name", {}).get("type") == "string"
        and meta_props.get("generateName", {}).get("type") == "string"
    ):
        return schema
    string = {"type": "string"}
    props = {
        **props,
        "kind": string,
        "apiVersion": string,
        "metadata": {"type": "object", "properties": {"name": string, "generateName": string}},
    }
    return {**schema, "properties": props}


def decl_type(schema: dict[str, Any] | None, resource_root: bool = False) -> DeclType | None:
    """kube's SchemaDeclType."""
    if schema is None:
        return None
    if schema.get("x-kubernetes-int-or-string"):
        max_len = schema.get("maxLength")
        max_el = _nonneg(max_len) * 4 if max_len is not None else _max_string(schema)
        return DeclType("dyn", max_elements=max_el, min_size=1)
    if resource_root:
        schema = with_type_and_object_meta(schema)
    kind = schema.get("type", "")
    if kind == "array":
        return _array(schema)
    if kind == "object":
        return _object(schema)
    if kind == "string":
        return _string(schema)
    return {
        "boolean": DeclType("bool", min_size=MIN_BOOL),
        "number": DeclType("double", min_size=MIN_NUMBER),
        "integer": DeclType("int", min_size=MIN_NUMBER),
    }.get(kind)


def _array(schema: dict[str, Any]) -> DeclType | None:
    items = schema.get("items")
    if not isinstance(items, dict):
        return None
    elem = decl_type(items, bool(items.get("x-kubernetes-embedded-resource")))
    if elem is None:
        return None
    if schema.get("maxItems") is not None:
        max_items = _nonneg(schema["maxItems"])
    else:
        max_items = (MAX_REQUEST_SIZE - 2) // (elem.min_size + 1)
    list_type = schema.get("x-kubernetes-list-type") or ""
    keys = tuple(schema.get("x-kubernetes-list-map-keys") or ()) if list_type == "map" else ()
    return DeclType(
        "list", max_elements=max_items, min_size=2, elem=elem, list_type=list_type, map_keys=keys
    )


def _object(schema: dict[str, Any]) -> DeclType | None:
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        elem = decl_type(extra, bool(extra.get("x-kubernetes-embedded-resource")))
        if elem is None:
            return None
        if schema.get("maxProperties") is not None:
            max_props = _nonneg(schema["maxProperties"])
        else:
            max_props = (MAX_REQUEST_SIZE - 2) // (elem.min_size + 6)
        return DeclType("map", max_elements=max_props, min_size=2, elem=elem)
    required = set(schema.get("required") or ())
    obj = DeclType("object", min_size=2)
    for name, prop in (schema.get("properties") or {}).items():
        ftype = decl_type(prop, bool(prop.get("x-kubernetes-embedded-resource")))
        if ftype is None:
            continue
        escaped = escape(name)
        if escaped is not None:
            obj.fields[escaped] = (name, ftype)
        if name in required and prop.get("default") is None:
            obj.min_size += len(name) + ftype.min_size + 4
    return obj


def _string(schema: dict[str, Any]) -> DeclType:
    fmt = schema.get("format", "")
    if fmt == "byte":
        max_len = schema.get("maxLength")
        max_el = _nonneg(max_len) if max_len is not None else _max_string(schema)
        return DeclType("bytes", max_elements=max_el, min_size=MIN_STRING)
    if fmt == "duration":
        return DeclType("duration", max_elements=_max_string(schema), min_size=MIN_DURATION_JSON)
    if fmt in ("date", "date-time"):
        min_size = JSON_DATE_SIZE if fmt == "date" else MIN_DATETIME_JSON
        return DeclType("timestamp", max_elements=_max_string(schema), min_size=min_size)
    if schema.get("maxLength") is not None:
        max_el = _nonneg(schema["maxLength"]) * 4
    elif schema.get("enum"):
        max_el = max((len(v) for v in schema["enum"] if isinstance(v, str)), default=0)
    else:
        max_el = _max_string(schema)
    return DeclType("string", max_elements=max_el, min_size=MIN_STRING)


_counter = itertools.count()
_PROTO_SCALARS = {
    "string": "string",
    "bytes": "bytes",
    "int": "int64",
    "double": "double",
    "bool": "bool",
    "dyn": "google.protobuf.Value",
    "duration": "google.protobuf.Duration",
    "timestamp": "google.protobuf.Timestamp",
}
_DEPS = [
    "google/protobuf/struct.proto",
    "google/protobuf/duration.proto",
    "google/protobuf/timestamp.proto",
]


def build_pool(root: DeclType, name: str = "") -> Any:
    """Give every object type of ``root`` a message in a new pool; returns the pool.
    ``name``: the full name of an object root's message (kube's name for a declared
    type, such as ``kubernetes.DRADevice``), a generated one by default."""
    package, _, short = name.rpartition(".")
    short = short or f"selfType{next(_counter)}"
    fd = file_proto(f"platform/{package}{short}.proto", package, [], _DEPS)
    if root.kind == "object":
        _message(fd, package, short, root)
    else:
        holder = add_message(fd, "", short, [])  # a scope for element types of a list/map root
        _nested_types(holder, short, "Root", root)
    pool = new_pool()
    pool.Add(fd)
    return pool


def _message(container: Any, prefix: str, name: str, obj: DeclType) -> None:
    msg = add_message(container, "", name, [], prefix)
    full = f"{prefix}.{name}" if prefix else name
    obj.message = full
    taken = set(obj.fields)
    specs = []
    for number, (escaped, (_, ftype)) in enumerate(obj.fields.items(), start=1):
        nested = _unique(escaped[:1].upper() + escaped[1:], taken)
        ptype, label = _field_proto(msg, full, nested, ftype)
        specs.append((escaped, number, ptype, label))
    for spec in specs:
        add_field(msg, full, spec)


def _unique(name: str, taken: set[str]) -> str:
    candidate, i = name, 1
    while candidate in taken:
        i += 1
        candidate = f"{name}{i}"
    taken.add(candidate)
    return candidate


def _field_proto(msg: Any, full: str, nested: str, ftype: DeclType) -> tuple[str, str]:
    """(protobuf type, label) of a field; creates nested messages for object types."""
    if ftype.kind == "object":
        _message(msg, full, nested, ftype)
        return f"{full}.{nested}", ""
    if ftype.kind in ("list", "map"):
        assert ftype.elem is not None
        elem = ftype.elem
        if elem.kind == "object":
            _message(msg, full, nested, elem)
            inner = f"{full}.{nested}"
        elif elem.kind in ("list", "map"):
            _nested_types(msg, full, nested, elem)
            inner = "google.protobuf.ListValue" if elem.kind == "list" else "google.protobuf.Struct"
        else:
            inner = _PROTO_SCALARS[elem.kind]
        return inner, "*" if ftype.kind == "list" else "map:string"
    return _PROTO_SCALARS[ftype.kind], ""


def _nested_types(msg: Any, full: str, nested: str, t: DeclType) -> None:
    """Name the object types found below a list or map that protobuf cannot type."""
    while t.kind in ("list", "map") and t.elem is not None:
        t = t.elem
    if t.kind == "object":
        _message(msg, full, nested, t)


def add_field(msg: Any, full: str, spec: tuple[str, int, str, str]) -> None:
    """Append one field to an existing message proto (maps get their entry type)."""
    fname, number, ftype, label = spec
    fld = msg.field.add(name=fname, number=number, json_name=fname)
    fld.label = 3 if label == "*" or label.startswith("map:") else 1
    if label.startswith("map:"):
        entry = msg.nested_type.add(name=entry_name(fname))
        entry.options.map_entry = True
        for n, (ename, etype) in enumerate((("key", label[4:]), ("value", ftype)), start=1):
            f = entry.field.add(name=ename, number=n, json_name=ename)
            f.label = 1
            set_type(f, etype)
        fld.type = 11
        fld.type_name = f".{full}.{entry.name}"
    else:
        set_type(fld, ftype)
