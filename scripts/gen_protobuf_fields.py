#!/usr/bin/env python3
"""Write platform_api/codec/protobuf_fields.json from kube's ``generated.proto`` files.

Usage: gen_protobuf_fields.py <kubernetes/api dir> <apimachinery dir>
       <apiextensions-apiserver dir> [<kube-aggregator dir>] [--version vX.Y.Z] [--out PATH]

The .proto files give each message's field numbers and wire types; the Go types beside
them give what the .proto cannot: the JSON name (``uid`` where the .proto says ``uID``),
``omitempty``/``omitzero``, pointer fields (presence), inlined embedded structs, and the
Go type of fields of named non-struct types (``v1.ServiceType``, ``[]v1.IPFamily``,
``types.UID``), which Go's JSON decoder names when a value has the wrong type.  The
``register.go`` files give the kinds each group version serves.  Nothing upstream is
copied into the repository: only this derived table is.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
from dataclasses import dataclass, field

# Field flags, shared with platform_api.codec.protobuf_schema.
REPEATED, POINTER, OMITEMPTY, OMITZERO, INLINE = 1, 2, 4, 8, 16

SCALARS = frozenset({"string", "bytes", "bool", "int32", "int64", "double"})
SKIP_DIRS = ("testapigroup",)  # apimachinery's test-only group
DEFAULT_OUT = (
    pathlib.Path(__file__).resolve().parent.parent / "platform_api/codec/protobuf_fields.json"
)


@dataclass
class ProtoField:
    name: str
    number: int
    kind: str  # a scalar name, "message" or "map"
    ref: str  # message full name, or "key,value" for maps
    repeated: bool


@dataclass
class GoField:
    json: str
    flags: int
    go_type: str = ""  # as written in the source (``*IPFamilyPolicy``, ``metav1.Time``)
    name: str = ""  # the Go field's name; an embedded struct's is its type's (``ObjectMeta``)


@dataclass
class Package:
    directory: pathlib.Path
    proto_package: str
    messages: dict[str, list[ProtoField]] = field(default_factory=dict)
    go_fields: dict[str, dict[int, tuple[int, GoField]]] = field(default_factory=dict)
    slice_types: set[str] = field(default_factory=set)
    go_package: str = ""  # the ``package`` clause
    imports: dict[str, str] = field(default_factory=dict)  # alias -> import path


# -- .proto -------------------------------------------------------------------------------

_FIELD = re.compile(r"^\s*(optional|repeated|required)\s+(\S+)\s+(\w+)\s*=\s*(\d+)\s*;")
_MAP = re.compile(r"^\s*map<\s*(\w+)\s*,\s*(\S+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;")


def _qualify(type_name: str, package: str) -> tuple[str, str]:
    if type_name in SCALARS:
        return type_name, ""
    if type_name.startswith("."):
        return "message", type_name[1:]
    return "message", f"{package}.{type_name}"


def parse_proto(path: pathlib.Path) -> Package:
    text = path.read_text()
    package = re.search(r"^package\s+([\w.]+)\s*;", text, re.M)
    if package is None:
        raise SystemExit(f"{path}: no package statement")
    pkg = Package(path.parent, package.group(1))
    current: list[ProtoField] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//") or not stripped:
            continue
        if m := re.match(r"^message\s+(\w+)\s*\{", stripped):
            current = pkg.messages.setdefault(m.group(1), [])
        elif stripped == "}":
            current = None
        elif current is not None and (m := _MAP.match(line)):
            key, value, name, number = m.groups()
            vkind, vref = _qualify(value, pkg.proto_package)
            current.append(ProtoField(name, int(number), "map", f"{key},{vref or vkind}", False))
        elif current is not None and (m := _FIELD.match(line)):
            label, type_name, name, number = m.groups()
            kind, ref = _qualify(type_name, pkg.proto_package)
            current.append(ProtoField(name, int(number), kind, ref, label == "repeated"))
        elif current is not None:
            raise SystemExit(f"{path}: cannot read {stripped!r}")
    return pkg


# -- Go types -----------------------------------------------------------------------------

_STRUCT = re.compile(r"^type\s+(\w+)\s+struct\s*\{\s*$")
_SLICE_TYPE = re.compile(r"^type\s+(\w+)\s+\[\]\w+\s*$")
# A named type that is no struct: ``type ServiceType string``, ``type ResourceList map[...]``.
_NAMED_TYPE = re.compile(r"^type\s+(\w+)\s+(?!struct\b|interface\b|=)(\S+)\s*(//.*)?$")
_IMPORT = re.compile(r'^\s*(?:(\w+)\s+)?"([^"]+)"\s*$', re.M)
_GO_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?(\S+)\s+`([^`]*)`")


def _go_sources(directory: pathlib.Path) -> list[pathlib.Path]:
    return sorted(
        p
        for p in directory.glob("*.go")
        if not p.name.endswith("_test.go")
        and not p.name.startswith("zz_generated")
        and p.name != "generated.pb.go"
    )


def _go_field(name: str | None, go_type: str, tag: str) -> tuple[int, GoField] | None:
    proto_tag = re.search(r'protobuf:"([^"]*)"', tag)
    if proto_tag is None or proto_tag.group(1) == "-":
        return None
    number = int(proto_tag.group(1).split(",")[1])
    json_tag = re.search(r'json:"([^"]*)"', tag)
    parts = json_tag.group(1).split(",") if json_tag else [""]
    json_name, options = parts[0], set(parts[1:])
    flags = 0
    if go_type.startswith("*"):
        flags |= POINTER
    if "omitempty" in options:
        flags |= OMITEMPTY
    if "omitzero" in options:
        flags |= OMITZERO
    if not json_name:
        if name is None:
            flags |= INLINE
        else:
            json_name = name
    go_name = name or go_type.lstrip("*").rpartition(".")[2]
    return number, GoField(json_name, flags, go_type, go_name)


def _import_block(text: str) -> dict[str, str]:
    """Each import's name in the file: its alias, else the path's last element."""
    out = {}
    for block in re.findall(r"^import\s*\((.*?)^\)", text, re.M | re.S) + re.findall(
        r'^import\s+((?:\w+\s+)?"[^"]+")', text, re.M
    ):
        for alias, path in _IMPORT.findall(block):
            out[alias or path.rpartition("/")[2]] = path
    return out


NamedTypes = dict[str, tuple[str, set[str]]]  # import path -> (package name, named types)


def named_types(directory: pathlib.Path, import_path: str, into: NamedTypes) -> None:
    """The named non-struct types a Go package declares."""
    package, names = "", set()
    for source in _go_sources(directory):
        text = source.read_text()
        if m := re.search(r"^package\s+(\w+)", text, re.M):
            package = m.group(1)
        names.update(m.group(1) for m in map(_NAMED_TYPE.match, text.splitlines()) if m)
    if package:
        into[import_path] = (package, names)


def parse_go(pkg: Package) -> None:
    for source in _go_sources(pkg.directory):
        struct: dict[int, tuple[int, GoField]] | None = None
        text = source.read_text()
        if m := re.search(r"^package\s+(\w+)", text, re.M):
            pkg.go_package = m.group(1)
        pkg.imports.update(_import_block(text))
        for line in text.splitlines():
            if struct is None:
                if m := _STRUCT.match(line):
                    struct = pkg.go_fields.setdefault(m.group(1), {})
                elif m := _SLICE_TYPE.match(line):
                    pkg.slice_types.add(m.group(1))
                continue
            if line.startswith("}"):
                struct = None
            elif (m := _GO_FIELD.match(line)) and not line.lstrip().startswith("//"):
                parsed = _go_field(m.group(1), m.group(2), m.group(3))
                if parsed is not None:
                    struct[parsed[0]] = (len(struct), parsed[1])


# -- groups and kinds ---------------------------------------------------------------------


def group_name(pkg: Package) -> str:
    """The ``+groupName`` marker, else the ``GroupName`` constant, else the directory."""
    for source in _go_sources(pkg.directory):
        if m := re.search(r"^// \+groupName=([\w.-]*)\s*$", source.read_text(), re.M):
            return m.group(1)
    for source in _go_sources(pkg.directory):
        if m := re.search(r'^const GroupName = "([^"]*)"', source.read_text(), re.M):
            return m.group(1)
    return pkg.directory.parent.name


def _call_args(text: str, start: int) -> str:
    depth, i = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return text[start : i - 1]


def _imports(text: str) -> dict[str, str]:
    out = {}
    for alias, path in re.findall(r'^\s*(\w+)\s+"([^"]+)"\s*$', text, re.M):
        out[alias] = path.replace("/", ".")
    return out


def registered_kinds(pkg: Package, group: str, version: str) -> dict[tuple[str, str, str], str]:
    """(group, version, kind) -> message full name; group "*" means every group version."""
    register = pkg.directory / "register.go"
    if not register.exists():
        return {}
    text = register.read_text()
    imports = _imports(text)
    splats = {
        name: re.findall(r"&(\w+)\{\}", body)
        for name, body in re.findall(r"var (\w+) = \[\]runtime\.Object\{(.*?)\n\}", text, re.S)
    }
    targets = {"SchemeGroupVersion": (group, version), "Unversioned": ("", "v1")}
    out: dict[tuple[str, str, str], str] = {}

    def message(ref: str) -> str:
        alias, _, name = ref.rpartition(".")
        return f"{imports[alias]}.{name}" if alias else f"{pkg.proto_package}.{name}"

    for m in re.finditer(r"\.(AddKnownTypes|AddUnversionedTypes)\(", text):
        args = _call_args(text, m.end())
        gv, _, rest = args.partition(",")
        target = targets.get(gv.strip(), ("*", "*"))
        names = re.findall(r"&([\w.]+)\{\}", rest)
        for splat in re.findall(r"(\w+)\.\.\.", rest):
            names += splats[splat]
        for name in names:
            out[(*target, name.rpartition(".")[2])] = message(name)
    for m in re.finditer(
        r"\.AddKnownTypeWithName\(\s*(\w+)\.WithKind\((\w+)\),\s*&(\w+)\{\}", text
    ):
        kind = re.search(rf'{m.group(2)}\s*=\s*"(\w+)"', text)
        if m.group(1) == "groupVersion" and kind:
            out[("*", "*", kind.group(1))] = message(m.group(3))
    return out


# -- merging and output -------------------------------------------------------------------


def _relative(ref: str, package: str) -> str:
    """Message references inside the same package are written without it."""
    key, comma, value = ref.rpartition(",")
    if value.startswith(package + ".") and "." not in value[len(package) + 1 :]:
        value = value[len(package) + 1 :]
    return f"{key}{comma}{value}"


def merged_fields(pkg: Package, name: str) -> list[tuple[str, int, str, int, str]]:
    """The message's fields in Go struct order (kube's JSON order), with Go's JSON facts."""
    go = pkg.go_fields.get(name, {})
    rows = []
    for f in pkg.messages[name]:
        order, gofield = go.get(f.number, (10_000 + f.number, GoField(f.name, 0)))
        json_name = f.name if gofield.json == "-" else gofield.json
        flags = gofield.flags | (REPEATED if f.repeated else 0)
        ref = _relative(f.ref, pkg.proto_package)
        rows.append((order, (json_name, f.number, f.kind, flags, ref)))
    return [row for _, row in sorted(rows)]


def go_field_names(pkg: Package, name: str) -> dict[str, str]:
    """Field number -> Go field name, where it is not the JSON name capitalized (``DNSPolicy``,
    ``ObjectMeta``): gogo-protobuf's decoding errors name Go's fields."""
    out = {}
    for number, (_, gofield) in pkg.go_fields.get(name, {}).items():
        plain = gofield.json[:1].upper() + gofield.json[1:]
        if gofield.name and gofield.name != plain:
            out[str(number)] = gofield.name
    return out


def import_path(proto_package: str) -> str:
    """``k8s.io.api.core.v1`` is imported as ``k8s.io/api/core/v1``."""
    parts = proto_package.split(".")
    return "/".join([".".join(parts[:2]), *parts[2:]]).replace("_", "-")


def _split_map(text: str) -> tuple[str, str]:
    """``map[K]V`` -> (K, V), brackets inside K counted."""
    depth = 0
    for i in range(4, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            if depth == 0:
                return text[4:i], text[i + 1 :]
            depth -= 1
    return text[4:], ""


def go_json_types(pkg: Package, registry: NamedTypes) -> dict[str, dict[str, str]]:
    """struct -> {JSON name: Go type}, for fields whose type involves a named non-struct
    type: the type Go's JSON decoder names in an UnmarshalTypeError."""
    own = registry.get(import_path(pkg.proto_package), ("", set()))[1]

    def render(text: str) -> tuple[str, bool]:
        text = text.lstrip("*")
        if text.startswith("[]"):
            inner, named = render(text[2:])
            return "[]" + inner, named
        if text.startswith("map["):
            (k, kn), (v, vn) = (render(t) for t in _split_map(text))
            return f"map[{k}]{v}", kn or vn
        alias, dot, name = text.rpartition(".")
        if dot:
            package, names = registry.get(pkg.imports.get(alias, ""), (alias, set()))
            return f"{package}.{name}", name in names
        if text in own:
            return f"{pkg.go_package}.{text}", True
        # a struct of the package is named with it too (``map[v1.QualifiedName]
        # v1.DeviceAttribute``); Go's own types (``string``, ``int32``) are not
        return (f"{pkg.go_package}.{text}" if text[:1].isupper() else text), False

    out: dict[str, dict[str, str]] = {}
    for struct, fields in pkg.go_fields.items():
        for _, gofield in fields.values():
            if gofield.json and gofield.json != "-" and not gofield.flags & INLINE:
                text, named = render(gofield.go_type)
                if named:
                    out.setdefault(struct, {})[gofield.json] = text
    return out


def collect(roots: list[pathlib.Path]) -> tuple[dict, dict, set, dict, dict]:
    messages: dict[str, list] = {}
    go_names: dict[str, dict[str, str]] = {}
    kinds: dict[tuple[str, str, str], str] = {}
    wrappers: set[str] = set()
    packages: list[Package] = []
    registry: NamedTypes = {}
    for root in roots:
        if (root / "pkg/types").is_dir():  # apimachinery's types.UID, types.NodeName
            named_types(root / "pkg/types", "k8s.io/apimachinery/pkg/types", registry)
        for proto in sorted(root.rglob("generated.proto")):
            if any(part in SKIP_DIRS for part in proto.parts):
                continue
            pkg = parse_proto(proto)
            parse_go(pkg)
            named_types(pkg.directory, import_path(pkg.proto_package), registry)
            packages.append(pkg)
            for name in pkg.messages:
                full = f"{pkg.proto_package}.{name}"
                messages[full] = merged_fields(pkg, name)
                if names := go_field_names(pkg, name):
                    go_names[full] = names
                if name in pkg.slice_types:
                    wrappers.add(full)
            version = pkg.proto_package.rpartition(".")[2]
            kinds.update(registered_kinds(pkg, group_name(pkg), version))
    kinds = {k: v for k, v in kinds.items() if v in messages}  # Table has no message
    go_types = {
        f"{pkg.proto_package}.{struct}": fields
        for pkg in packages
        for struct, fields in go_json_types(pkg, registry).items()
        if f"{pkg.proto_package}.{struct}" in messages
    }
    return messages, kinds, wrappers, go_types, go_names


def render(
    version: str, messages: dict, kinds: dict, wrappers: set, go_types: dict, go_names: dict
) -> str:
    """The table as compact JSON: one message or kind per line, so diffs stay readable."""

    def dumps(value: object) -> str:
        return json.dumps(value, separators=(",", ":"))

    lines = ["{", f'"upstreamVersion":{dumps(version)},', '"messages":{']
    names = sorted(messages)
    for i, name in enumerate(names):
        rows = [list(row) for row in messages[name]]
        comma = "," if i < len(names) - 1 else ""
        lines.append(f"{dumps(name)}:{dumps(rows)}{comma}")
    lines.append("},")
    lines.append('"kinds":[')
    keys = sorted(kinds)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        lines.append(dumps([*key, kinds[key]]) + comma)
    lines.append("],")
    lines.append(f'"listWrappers":{dumps(sorted(wrappers))},')
    lines.append('"goTypes":{')
    names = sorted(go_types)
    for i, name in enumerate(names):
        comma = "," if i < len(names) - 1 else ""
        lines.append(f"{dumps(name)}:{dumps(dict(sorted(go_types[name].items())))}{comma}")
    lines.append("},")
    lines.append('"goNames":{')
    names = sorted(go_names)
    for i, name in enumerate(names):
        comma = "," if i < len(names) - 1 else ""
        by_number = sorted(go_names[name].items(), key=lambda item: int(item[0]))
        lines.append(f"{dumps(name)}:{dumps(dict(by_number))}{comma}")
    lines.append("}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def upstream_version(apiextensions: pathlib.Path) -> str:
    gomod = (apiextensions / "go.mod").read_text()
    m = re.search(r"^\s*k8s\.io/api (v\S+)", gomod, re.M)
    return m.group(1) if m else "unknown"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("api", type=pathlib.Path)
    parser.add_argument("apimachinery", type=pathlib.Path)
    parser.add_argument("apiextensions", type=pathlib.Path)
    parser.add_argument("aggregator", type=pathlib.Path, nargs="?", help="APIService's group")
    parser.add_argument("--version", help="upstream tag (default: from apiextensions go.mod)")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    roots = [args.api, args.apimachinery, args.apiextensions]
    collected = collect(roots + ([args.aggregator] if args.aggregator else []))
    version = args.version or upstream_version(args.apiextensions)
    args.out.write_text(render(version, *collected))
    messages, kinds = collected[0], collected[1]
    print(f"{args.out}: {len(messages)} messages, {len(kinds)} kinds", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
