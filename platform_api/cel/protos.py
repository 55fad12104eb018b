"""Protobuf descriptors the CEL runtime needs, built at start from compact tables.

Two kinds: the checked-AST messages of ``cel.expr`` (so the server can read and rewrite what
``Expression.serialize()`` returns: cost estimation, literal validators, AST rewrites), and the
message types that stand for kube's opaque CEL values (``kubernetes.Quantity``, ``net.IP``...):
cel-cpp cannot carry arbitrary Python objects, but carries any message of its descriptor pool.
Fields are declared by wire shape only (enums as ints, ``Empty`` as bytes), which keeps these
tables free of imports while staying wire compatible with the real ``cel.expr`` protos.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from google.protobuf import (
    any_pb2,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    empty_pb2,
    message_factory,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64,
    "int32": _F.TYPE_INT32,
    "bool": _F.TYPE_BOOL,
    "double": _F.TYPE_DOUBLE,
}

# A message spec: name -> list of (field name, number, type, label); label "*" is repeated,
# "map:K" declares a map with key type K (a nested entry message is generated).
FieldSpec = tuple[str, int, str, str]


def add_message(
    container: Any, package: str, name: str, fields: Sequence[FieldSpec], prefix: str = ""
) -> descriptor_pb2.DescriptorProto:
    """Append message ``name`` (with map entry messages) to a file or message proto."""
    msg = container.message_type.add() if hasattr(container, "message_type") else None
    if msg is None:
        msg = container.nested_type.add()
    msg.name = name
    full = ".".join(p for p in (package, prefix, name) if p)
    for fname, number, ftype, label in fields:
        fld = msg.field.add(name=fname, number=number, json_name=fname)
        fld.label = (
            _F.LABEL_REPEATED if label == "*" or label.startswith("map:") else _F.LABEL_OPTIONAL
        )
        if label.startswith("map:"):
            entry = msg.nested_type.add(name=entry_name(fname))
            entry.options.map_entry = True
            set_type(entry.field.add(name="key", number=1, json_name="key"), label[4:])
            set_type(entry.field.add(name="value", number=2, json_name="value"), ftype)
            for f in entry.field:
                f.label = _F.LABEL_OPTIONAL
            fld.type = _F.TYPE_MESSAGE
            fld.type_name = f".{full}.{entry.name}"
        else:
            set_type(fld, ftype)
    return msg


def entry_name(field_name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in field_name.split("_")) + "Entry"


def set_type(fld: Any, ftype: str) -> None:
    if ftype in _SCALARS:
        fld.type = _SCALARS[ftype]
    else:
        fld.type = _F.TYPE_MESSAGE
        fld.type_name = ftype if ftype.startswith(".") else "." + ftype


def file_proto(
    name: str,
    package: str,
    messages: Iterable[tuple[str, Sequence[FieldSpec]]],
    deps: Sequence[str],
) -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
    fd.dependency.extend(deps)
    for msg_name, fields in messages:
        add_message(fd, package, msg_name, fields)
    return fd


_E = ".cel.expr.Expr"
_CEL_EXPR: list[tuple[str, Sequence[FieldSpec]]] = [
    (
        "Constant",
        [
            ("null_value", 1, "int32", ""),
            ("bool_value", 2, "bool", ""),
            ("int64_value", 3, "int64", ""),
            ("uint64_value", 4, "uint64", ""),
            ("double_value", 5, "double", ""),
            ("string_value", 6, "string", ""),
            ("bytes_value", 7, "bytes", ""),
        ],
    ),
    ("Ident", [("name", 1, "string", "")]),
    ("Select", [("operand", 1, _E, ""), ("field", 2, "string", ""), ("test_only", 3, "bool", "")]),
    ("Call", [("target", 1, _E, ""), ("function", 2, "string", ""), ("args", 3, _E, "*")]),
    ("CreateList", [("elements", 1, _E, "*"), ("optional_indices", 2, "int32", "*")]),
    (
        "Entry",
        [
            ("id", 1, "int64", ""),
            ("field_key", 2, "string", ""),
            ("map_key", 3, _E, ""),
            ("value", 4, _E, ""),
            ("optional_entry", 5, "bool", ""),
        ],
    ),
    ("CreateStruct", [("message_name", 1, "string", ""), ("entries", 2, ".cel.expr.Entry", "*")]),
    (
        "Comprehension",
        [
            ("iter_var", 1, "string", ""),
            ("iter_range", 2, _E, ""),
            ("accu_var", 3, "string", ""),
            ("accu_init", 4, _E, ""),
            ("loop_condition", 5, _E, ""),
            ("loop_step", 6, _E, ""),
            ("result", 7, _E, ""),
            ("iter_var2", 8, "string", ""),
        ],
    ),
    (
        "Expr",
        [
            ("id", 2, "int64", ""),
            ("const_expr", 3, ".cel.expr.Constant", ""),
            ("ident_expr", 4, ".cel.expr.Ident", ""),
            ("select_expr", 5, ".cel.expr.Select", ""),
            ("call_expr", 6, ".cel.expr.Call", ""),
            ("list_expr", 7, ".cel.expr.CreateList", ""),
            ("struct_expr", 8, ".cel.expr.CreateStruct", ""),
            ("comprehension_expr", 9, ".cel.expr.Comprehension", ""),
        ],
    ),
    (
        "SourceInfo",
        [
            ("syntax_version", 1, "string", ""),
            ("location", 2, "string", ""),
            ("line_offsets", 3, "int32", "*"),
            ("positions", 4, "int32", "map:int64"),
            ("macro_calls", 5, _E, "map:int64"),
        ],
    ),
    ("ListType", [("elem_type", 1, ".cel.expr.Type", "")]),
    ("MapType", [("key_type", 1, ".cel.expr.Type", ""), ("value_type", 2, ".cel.expr.Type", "")]),
    ("AbstractType", [("name", 1, "string", ""), ("parameter_types", 2, ".cel.expr.Type", "*")]),
    (
        "Type",
        [
            ("dyn", 1, "bytes", ""),
            ("null", 2, "int32", ""),
            ("primitive", 3, "int32", ""),
            ("wrapper", 4, "int32", ""),
            ("well_known", 5, "int32", ""),
            ("list_type", 6, ".cel.expr.ListType", ""),
            ("map_type", 7, ".cel.expr.MapType", ""),
            ("message_type", 9, "string", ""),
            ("type_param", 10, "string", ""),
            ("type", 11, ".cel.expr.Type", ""),
            ("error", 12, "bytes", ""),
            ("abstract_type", 14, ".cel.expr.AbstractType", ""),
        ],
    ),
    (
        "Reference",
        [
            ("name", 1, "string", ""),
            ("overload_id", 3, "string", "*"),
            ("value", 4, ".cel.expr.Constant", ""),
        ],
    ),
    (
        "ParsedExpr",
        [
            ("expr", 2, _E, ""),
            ("source_info", 3, ".cel.expr.SourceInfo", ""),
        ],
    ),
    (
        "CheckedExpr",
        [
            ("reference_map", 2, ".cel.expr.Reference", "map:int64"),
            ("type_map", 3, ".cel.expr.Type", "map:int64"),
            ("expr", 4, _E, ""),
            ("source_info", 5, ".cel.expr.SourceInfo", ""),
            ("expr_version", 6, "string", ""),
        ],
    ),
]

# Oneof membership matters for WhichOneof(); declare the Expr kinds, Constant kinds, Type kinds.
_ONEOFS = {
    "Expr": ("expr_kind", {3, 4, 5, 6, 7, 8, 9}),
    "Constant": ("constant_kind", {1, 2, 3, 4, 5, 6, 7}),
    "Type": ("type_kind", {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14}),
    "Entry": ("key_kind", {2, 3}),
}


def _cel_expr_file() -> descriptor_pb2.FileDescriptorProto:
    fd = file_proto("platform/cel_expr.proto", "cel.expr", _CEL_EXPR, [])
    for msg in fd.message_type:
        if msg.name in _ONEOFS:
            oneof_name, numbers = _ONEOFS[msg.name]
            msg.oneof_decl.add(name=oneof_name)
            for fld in msg.field:
                if fld.number in numbers:
                    fld.oneof_index = 0
    return fd


_AST_POOL = descriptor_pool.DescriptorPool()
_AST_POOL.Add(_cel_expr_file())


def _ast_class(name: str) -> Any:
    return message_factory.GetMessageClass(_AST_POOL.FindMessageTypeByName(f"cel.expr.{name}"))


CheckedExpr = _ast_class("CheckedExpr")
ParsedExpr = _ast_class("ParsedExpr")
Expr = _ast_class("Expr")
Reference = _ast_class("Reference")
AstType = _ast_class("Type")


def decode_checked(serialized: bytes) -> Any:
    """Parse the ``Any``-wrapped ``CheckedExpr`` that ``Expression.serialize()`` returns."""
    return _unwrapped(serialized, CheckedExpr())


def decode_parsed(serialized: bytes) -> Any:
    """Parse the ``Any``-wrapped ``ParsedExpr`` of an expression only parsed."""
    return _unwrapped(serialized, ParsedExpr())


def _unwrapped(serialized: bytes, message: Any) -> Any:
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    message.ParseFromString(wrapper.value)
    return message


def encode_checked(checked: Any) -> bytes:
    wrapper = any_pb2.Any(
        type_url="type.googleapis.com/cel.expr.CheckedExpr", value=checked.SerializeToString()
    )
    return wrapper.SerializeToString()


# The opaque values of kube's libraries.  Equality of two values is message equality, so each
# stores a canonical form (a quantity's exact value, a semver without build metadata...).
_S = "string"
LIBRARY_TYPES: list[tuple[str, str, Sequence[FieldSpec]]] = [
    ("kubernetes", "Quantity", [("value", 1, _S, "")]),
    ("kubernetes", "URL", [("url", 1, _S, "")]),
    ("kubernetes", "Semver", [("version", 1, _S, "")]),
    ("kubernetes", "NamedFormat", [("name", 1, _S, "")]),
    ("net", "IP", [("addr", 1, _S, "")]),
    ("net", "CIDR", [("prefix", 1, _S, "")]),
    ("kubernetes.authorization", "Authorizer", [("handle", 1, "int64", ""), ("user", 2, _S, "")]),
    (
        "kubernetes.authorization",
        "PathCheck",
        [
            ("handle", 1, "int64", ""),
            ("user", 2, _S, ""),
            ("path", 3, _S, ""),
        ],
    ),
    (
        "kubernetes.authorization",
        "GroupCheck",
        [
            ("handle", 1, "int64", ""),
            ("user", 2, _S, ""),
            ("group", 3, _S, ""),
        ],
    ),
    (
        "kubernetes.authorization",
        "ResourceCheck",
        [
            ("handle", 1, "int64", ""),
            ("user", 2, _S, ""),
            ("group", 3, _S, ""),
            ("resource", 4, _S, ""),
            ("subresource", 5, _S, ""),
            ("namespace", 6, _S, ""),
            ("name", 7, _S, ""),
            ("field_selector", 8, _S, ""),
            ("label_selector", 9, _S, ""),
        ],
    ),
    (
        "kubernetes.authorization",
        "Decision",
        [
            ("decision", 1, _S, ""),
            ("reason", 2, _S, ""),
            ("error", 3, _S, ""),
        ],
    ),
]

WELL_KNOWN = (any_pb2, duration_pb2, empty_pb2, struct_pb2, timestamp_pb2, wrappers_pb2)


def _library_files() -> list[descriptor_pb2.FileDescriptorProto]:
    by_package: dict[str, list[tuple[str, Sequence[FieldSpec]]]] = {}
    for package, name, fields in LIBRARY_TYPES:
        by_package.setdefault(package, []).append((name, fields))
    return [
        file_proto(f"platform/cel_{package}.proto", package, messages, [])
        for package, messages in by_package.items()
    ]


_LIBRARY_FILES = [f.SerializeToString() for f in _library_files()]
_WELL_KNOWN_FILES = [m.DESCRIPTOR.serialized_pb for m in WELL_KNOWN]


def new_pool() -> descriptor_pool.DescriptorPool:
    """A pool holding the well-known types and kube's library types, ready for schema types."""
    pool = descriptor_pool.DescriptorPool()
    for data in (*_WELL_KNOWN_FILES, *_LIBRARY_FILES):
        pool.AddSerializedFile(data)
    return pool


LIBRARY_POOL = new_pool()


def library_class(full_name: str) -> Any:
    """The message class of a library type, e.g. ``kubernetes.Quantity``."""
    return message_factory.GetMessageClass(LIBRARY_POOL.FindMessageTypeByName(full_name))
