"""Protobuf message classes from a field table, with no protoc and no generated code.

A table names each message's fields as its .proto file does; a FileDescriptorProto made
from it is loaded into a private descriptor pool and upb makes the classes, so parsing
runs in C.  Used for etcd's gRPC messages (storage/etcd/proto.py), the external JWT
signer's (authentication/externaljwt_proto.py) and by tests that read back what a
hand-written encoder wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
I32, I64, U64, BOOL, BYTES, STRING, DOUBLE = (
    F.TYPE_INT32,
    F.TYPE_INT64,
    F.TYPE_UINT64,
    F.TYPE_BOOL,
    F.TYPE_BYTES,
    F.TYPE_STRING,
    F.TYPE_DOUBLE,
)
REPEATED = "repeated"
# (field, number, scalar type or ".pkg.Message"/enum name, oneof name or REPEATED or "")
Field = tuple[str, int, Any, str]


def _field(message: descriptor_pb2.DescriptorProto, spec: Field, enums: Iterable[str]) -> None:
    name, number, kind, extra = spec
    field = message.field.add(name=name, number=number, json_name=name)
    field.label = F.LABEL_REPEATED if extra == REPEATED else F.LABEL_OPTIONAL
    if isinstance(kind, int):
        field.type = kind
    else:
        field.type = F.TYPE_ENUM if kind.lstrip(".") in enums else F.TYPE_MESSAGE
        field.type_name = kind
    if extra and extra != REPEATED:
        names = [o.name for o in message.oneof_decl]
        if extra not in names:
            message.oneof_decl.add(name=extra)
            names.append(extra)
        field.oneof_index = names.index(extra)


def file_descriptor(
    package: str,
    messages: Mapping[str, list[Field]],
    enums: Mapping[str, list[str]] | None = None,
    dependencies: Iterable[str] = (),
) -> descriptor_pb2.FileDescriptorProto:
    """The file of ``package``'s messages (table keys are ``package.Message``); an enum
    named ``package.Message.Enum`` is nested in its message."""
    enums = enums or {}
    proto = descriptor_pb2.FileDescriptorProto(
        name=f"{package}.proto", package=package, syntax="proto3"
    )
    proto.dependency.extend(f"{d}.proto" for d in dependencies)
    for full, fields in messages.items():
        if full.rpartition(".")[0] != package:
            continue
        message = proto.message_type.add(name=full.rpartition(".")[2])
        for spec in fields:
            _field(message, spec, enums)
        for enum_name, values in enums.items():
            outer, _, short = enum_name.rpartition(".")
            if outer == full:
                enum = message.enum_type.add(name=short)
                for number, value in enumerate(values):
                    enum.value.add(name=value, number=number)
    return proto


def pool_of(*files: descriptor_pb2.FileDescriptorProto) -> descriptor_pool.DescriptorPool:
    """A private pool holding ``files`` (dependencies first)."""
    pool = descriptor_pool.DescriptorPool()
    for file in files:
        pool.Add(file)
    return pool


def message_class(pool: descriptor_pool.DescriptorPool, name: str) -> Any:
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
