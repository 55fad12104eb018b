"""Protobuf codec speed: the field-table wire walk against upb messages, JSON as the baseline.

    python benchmarks/protobench.py [--seconds 0.5]

Objects: a ConfigMap and a Pod as kube-apiserver v1.36 wrote them (tests/codec/kube), and a
list of 1000 such ConfigMaps.  "encode" is JSON-shaped dict -> bytes, "decode" the reverse.
Rows:
  json  orjson dumps / loads (what a JSON request costs beyond parsing the stored bytes)
  wire  platform_api.codec.protobuf: closures from the generated field table write and
        read the wire format directly (the codec the server uses)
  upb   descriptors built at start into a DescriptorPool, upb message classes from
        message_factory: dict -> constructor kwargs -> SerializeToString, and
        ParseFromString -> ListFields walk -> dict.  Its walk skips the Go-JSON defaults
        and key order the wire decoder applies, so its decode figure is a lower bound.
"""

from __future__ import annotations

import argparse
import copy
import pathlib
import sys
import time
from base64 import b64decode, b64encode
from collections.abc import Callable
from typing import Any

import orjson
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from platform_api.codec import protobuf  # noqa: E402
from platform_api.codec.protobuf_fields import MESSAGES  # noqa: E402
from platform_api.codec.protobuf_schema import (  # noqa: E402
    Field,
    fields,
    message_for,
    special,
)
from platform_api.codec.protobuf_values import (  # noqa: E402
    format_duration,
    format_micro_time,
    format_time,
    parse_duration,
    parse_time,
)

FIXTURES = ROOT / "tests/codec/kube"


# -- the upb alternative ----------------------------------------------------------------


def _proto_name(message: str) -> str:
    return message.replace(".", "_")


def _field_name(f: Field) -> str:
    return f"f{f.number}"


def build_pool() -> dict[str, Any]:
    """Every table message as one proto2 file in a fresh pool -> message classes by name."""
    fdp = descriptor_pb2.FileDescriptorProto(name="platform.proto", syntax="proto2")
    label = descriptor_pb2.FieldDescriptorProto
    types = {
        "string": label.TYPE_STRING,
        "bytes": label.TYPE_BYTES,
        "bool": label.TYPE_BOOL,
        "int32": label.TYPE_INT32,
        "int64": label.TYPE_INT64,
        "double": label.TYPE_DOUBLE,
    }

    def add_field(msg: Any, name: str, number: int, kind: str, ref: str, repeated: bool) -> None:
        field = msg.field.add(name=name, number=number)
        field.label = label.LABEL_REPEATED if repeated else label.LABEL_OPTIONAL
        if kind in types:
            field.type = types[kind]
        else:
            field.type = label.TYPE_MESSAGE
            field.type_name = ref

    for name in sorted(MESSAGES):
        msg = fdp.message_type.add(name=_proto_name(name))
        for f in fields(name):
            if f.kind == "map":
                entry = msg.nested_type.add(name=f"F{f.number}Entry")
                entry.options.map_entry = True
                add_field(entry, "key", 1, "string", "", False)
                value_kind = f.ref if f.ref in types else "message"
                add_field(entry, "value", 2, value_kind, "." + _proto_name(f.ref), False)
                ref = f".{_proto_name(name)}.F{f.number}Entry"
                add_field(msg, _field_name(f), f.number, "message", ref, True)
            else:
                ref = "." + _proto_name(f.ref) if f.kind == "message" else ""
                add_field(msg, _field_name(f), f.number, f.kind, ref, f.repeated)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    file = pool.FindFileByName("platform.proto")
    return {
        name: message_factory.GetMessageClass(file.message_types_by_name[_proto_name(name)])
        for name in MESSAGES
    }


def to_kwargs(message: str, value: Any) -> Any:
    """A JSON value -> what the upb constructor takes for ``message``."""
    kind = special(message)
    if kind in ("time", "microtime"):
        seconds, nanos = parse_time(value)
        return {"f1": seconds, "f2": nanos if kind == "microtime" else 0}
    if kind == "duration":
        return {"f1": parse_duration(value)}
    if kind == "quantity":
        return {"f1": str(value)}
    if kind == "intorstring":
        return {"f1": 1, "f3": value} if isinstance(value, str) else {"f1": 0, "f2": value}
    if kind == "rawjson":
        return {"f1": orjson.dumps(value)}
    if kind == "list":
        return {"f1": value}
    if kind:
        raise NotImplementedError(kind)
    out: dict[str, Any] = {}
    for f in fields(message):
        if f.inline:
            out[_field_name(f)] = to_kwargs(f.ref, value)
            continue
        item = value.get(f.json)
        if item is None:
            continue
        if f.kind == "message":
            item = [to_kwargs(f.ref, x) for x in item] if f.repeated else to_kwargs(f.ref, item)
        elif f.kind == "map" and f.ref not in ("string", "bytes"):
            item = {k: to_kwargs(f.ref, v) for k, v in item.items()}
        elif f.kind == "map" and f.ref == "bytes":
            item = {k: b64decode(v) for k, v in item.items()}
        elif f.kind == "bytes":
            item = b64decode(item)
        out[_field_name(f)] = item
    return out


def from_message(message: str, msg: Any) -> Any:
    """A parsed upb message -> its JSON value (specials converted; no Go defaults)."""
    kind = special(message)
    if kind == "time":
        return format_time(msg.f1)
    if kind == "microtime":
        return format_micro_time(msg.f1, msg.f2)
    if kind == "duration":
        return format_duration(msg.f1)
    if kind == "quantity":
        return msg.f1 or "0"
    if kind == "intorstring":
        return msg.f3 if msg.f1 == 1 else msg.f2
    if kind == "rawjson":
        return orjson.loads(msg.f1) if msg.f1 else None
    if kind == "list":
        return list(msg.f1)
    by_number = _numbered(message)
    out: dict[str, Any] = {}
    for descriptor, value in msg.ListFields():
        f = by_number[descriptor.number]
        if f.inline:
            out.update(from_message(f.ref, value))
        elif f.kind == "map":
            if f.ref == "string":
                out[f.json] = dict(value)
            elif f.ref == "bytes":
                out[f.json] = {k: b64encode(v).decode() for k, v in value.items()}
            else:
                out[f.json] = {k: from_message(f.ref, v) for k, v in value.items()}
        elif f.kind == "message":
            if f.repeated:
                out[f.json] = [from_message(f.ref, x) for x in value]
            else:
                out[f.json] = from_message(f.ref, value)
        elif f.kind == "bytes":
            out[f.json] = b64encode(value).decode()
        else:
            out[f.json] = list(value) if f.repeated else value
    return out


_NUMBERED: dict[str, dict[int, Field]] = {}


def _numbered(message: str) -> dict[int, Field]:
    found = _NUMBERED.get(message)
    if found is None:
        found = _NUMBERED[message] = {f.number: f for f in fields(message)}
    return found


class Upb:
    def __init__(self) -> None:
        started = time.perf_counter()
        self.classes = build_pool()
        self.startup = time.perf_counter() - started

    def encode(self, obj: dict[str, Any]) -> bytes:
        message = message_for(obj["apiVersion"], obj["kind"])
        assert message is not None
        return self.classes[message](**to_kwargs(message, obj)).SerializeToString()

    def decoder(self, obj: dict[str, Any]) -> Callable[[bytes], Any]:
        message = message_for(obj["apiVersion"], obj["kind"])
        assert message is not None
        cls = self.classes[message]

        def decode(data: bytes) -> Any:
            return from_message(message, cls.FromString(data))

        return decode


# -- measuring --------------------------------------------------------------------------


def per_call(func: Callable[[], Any], seconds: float) -> float:
    """Microseconds per call, best of three runs of about ``seconds / 3`` each."""
    func()
    started, calls = time.perf_counter(), 0
    while time.perf_counter() - started < seconds / 10:
        func()
        calls += 1
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(max(calls * 3 // 10, 1)):
            func()
        best = min(best, (time.perf_counter() - started) / max(calls * 3 // 10, 1))
    return best * 1e6


def objects() -> dict[str, dict[str, Any]]:
    configmap = orjson.loads((FIXTURES / "configmap.json").read_bytes())
    pod = orjson.loads((FIXTURES / "pod.json").read_bytes())
    items = []
    for i in range(1000):
        item = copy.deepcopy(configmap)
        del item["kind"], item["apiVersion"]
        item["metadata"]["name"] = f"cm-{i}"
        items.append(item)
    listed = {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {}, "items": items}
    listed["metadata"]["resourceVersion"] = "1000"
    return {"ConfigMap": configmap, "Pod": pod, "1000 ConfigMaps": listed}


def rows(upb: Upb, obj: dict[str, Any]) -> list[tuple[str, int, Callable[[], Any], Any]]:
    """(codec, encoded size, encode call, decode call) for one object."""
    as_json = orjson.dumps(obj)
    as_pb = protobuf.encode(obj)
    upb_decode = upb.decoder(obj)
    upb_bytes = upb.encode(obj)
    assert upb_decode(upb_bytes)["metadata"] == obj["metadata"]
    return [
        ("json", len(as_json), lambda: orjson.dumps(obj), lambda: orjson.loads(as_json)),
        ("wire", len(as_pb), lambda: protobuf.encode(obj), lambda: protobuf.decode(as_pb)),
        ("upb", len(upb_bytes), lambda: upb.encode(obj), lambda: upb_decode(upb_bytes)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.6, help="per measurement")
    args = parser.parse_args()
    upb = Upb()
    print(f"upb: descriptor pool and {len(upb.classes)} classes built in {upb.startup:.2f} s")
    header = f"{'object':<16}{'codec':<6}{'bytes':>9}{'encode us':>12}{'decode us':>12}"
    print(header)
    print("-" * len(header))
    for name, obj in objects().items():
        for codec, size, encode, decode in rows(upb, obj):
            enc, dec = per_call(encode, args.seconds), per_call(decode, args.seconds)
            print(f"{name:<16}{codec:<6}{size:>9}{enc:>12.1f}{dec:>12.1f}")


if __name__ == "__main__":
    main()
