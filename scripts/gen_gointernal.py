#!/usr/bin/env python3
"""Write platform_api/registry/gointernal_types.json from kube's internal Go types.

Usage: gen_gointernal.py [KUBE_TREE] [--out PATH]

kube's validation messages print some bad values as ``json.Marshal`` writes kube's
*internal* structs (``spec.template: Invalid value: {"labels":...,"Spec":{"Volumes":null,
...}}: field is immutable``).  Internal types have no JSON tags, so every field shows,
under its Go name, in Go's declaration order, as Go's zero value when unset; their
layout differs from the versioned types' (a pod's ``hostNetwork`` sits in the internal
pod security context).  This reads the internal structs reachable from ROOTS (their
field names, order and Go types) and the versioned structs of the same names (the JSON
key each field comes from), and writes that table.  Nothing upstream is copied into the
repository: only this derived table is.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys

DEFAULT_TREE = pathlib.Path.home() / ".cache/platform-reference/k8s"
DEFAULT_OUT = (
    pathlib.Path(__file__).resolve().parent.parent / "platform_api/registry/gointernal_types.json"
)
ABOUT = (
    "kube v1.36's internal Go structs reachable from a pod template, a pod failure policy, "
    "a success policy, uncounted terminated pods, a PersistentVolume's source and node "
    "affinity, a claim's spec and the resource.k8s.io (dra) specs, allocation results and "
    "devices, the flow-control specs and a disruption budget's spec, for platform_api/registry/gointernal.py.  Written by "
    "scripts/gen_gointernal.py from kube's Go sources; do not edit.  structs: type -> its "
    "fields in Go order, each [Go name, the versioned JSON key it reads, Go type, embedded]; "
    "an embedded struct's fields print in its place, read from the key's object (\"\" is the "
    "same object).  named: named non-struct types -> their Go types."
)
# package -> (internal types file, versioned types file, the internal file's import aliases)
PACKAGES = {
    "core": ("pkg/apis/core/types.go", "staging/src/k8s.io/api/core/v1/types.go", {}),
    "batch": (
        "pkg/apis/batch/types.go",
        "staging/src/k8s.io/api/batch/v1/types.go",
        {"api": "core"},
    ),
    # resource.k8s.io: its package name is taken by apimachinery's resource.Quantity
    "dra": ("pkg/apis/resource/types.go", "staging/src/k8s.io/api/resource/v1/types.go", {}),
    "flowcontrol": (
        "pkg/apis/flowcontrol/types.go",
        "staging/src/k8s.io/api/flowcontrol/v1/types.go",
        {},
    ),
    "policy": ("pkg/apis/policy/types.go", "staging/src/k8s.io/api/policy/v1/types.go", {}),
}
ROOTS = (
    "core.PodTemplateSpec",
    "batch.PodFailurePolicy",
    "batch.SuccessPolicy",
    "batch.UncountedTerminatedPods",
    "core.PersistentVolumeSource",
    "core.VolumeNodeAffinity",
    "core.PersistentVolumeClaimSpec",
    "dra.DeviceClassSpec",
    "dra.ResourceClaimSpec",
    "dra.ResourceClaimTemplateSpec",
    "dra.AllocationResult",
    "dra.Device",
    "dra.ResourceSliceSpec",
    "flowcontrol.FlowSchemaSpec",
    "flowcontrol.PriorityLevelConfigurationSpec",
    "policy.PodDisruptionBudgetSpec",
)
BUILTINS = frozenset(
    {"string", "bool", "int", "int32", "int64", "uint", "uint32", "uint64", "float64", "byte"}
)
_STRUCT = re.compile(r"^type (\w+) struct \{\s*$")
_NAMED = re.compile(r"^type (\w+) ([^{=]+?)\s*$")
_FIELD = re.compile(r"^(\w+(?:\s*,\s*\w+)*)\s+([^`\s]+)\s*(?:`([^`]*)`)?$")
_EMBEDDED = re.compile(r"^(\*?[\w.]+)\s*(?:`([^`]*)`)?$")
_JSON_TAG = re.compile(r'json:"([^"]*)"')


def _lines(text: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return [re.sub(r"//.*$", "", line).strip() for line in text.splitlines()]


def parse(path: pathlib.Path) -> tuple[dict[str, list[tuple[str, str, str]]], dict[str, str]]:
    """(structs: name -> [(Go name, Go type, json tag name or "" or None)], named types)."""
    structs: dict[str, list[tuple[str, str, str]]] = {}
    named: dict[str, str] = {}
    lines = _lines(path.read_text())
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        match = _STRUCT.match(line)
        if match is None:
            named_match = _NAMED.match(line)
            if named_match is not None and named_match.group(2) != "struct":
                named[named_match.group(1)] = named_match.group(2).strip()
            continue
        fields: list[tuple[str, str, str]] = []
        while i < len(lines) and lines[i] != "}":
            body = lines[i]
            i += 1
            if not body:
                continue
            fields.extend(_field(body))
        structs[match.group(1)] = fields
    return structs, named


def _field(body: str) -> list[tuple[str, str, str]]:
    embedded = _EMBEDDED.match(body)
    if embedded is not None and " " not in body.split("`", maxsplit=1)[0].strip():
        go_type = embedded.group(1)
        name = go_type.lstrip("*").rpartition(".")[2]
        return [(name, go_type, "=" + _tag(embedded.group(2)))]
    match = _FIELD.match(body)
    if match is None:
        raise SystemExit(f"cannot parse struct field: {body!r}")
    names = [n.strip() for n in match.group(1).split(",")]
    return [(name, match.group(2), _tag(match.group(3))) for name in names]


def _tag(tag: str | None) -> str:
    found = _JSON_TAG.search(tag or "")
    return found.group(1).split(",")[0] if found else ""


def _qualify(go_type: str, package: str, aliases: dict[str, str]) -> str:
    """``[]Volume`` -> ``[]core.Volume``; ``api.PodTemplateSpec`` -> ``[]core...``."""

    def one(name: str) -> str:
        if name in BUILTINS:
            return name
        alias, dot, rest = name.partition(".")
        if dot:
            return f"{aliases[alias]}.{rest}" if alias in aliases else name
        return f"{package}.{name}"

    marked = go_type.replace("map[", "map<")
    return re.sub(r"([A-Za-z_][\w.]*)(?![\w.<])", lambda m: one(m.group(0)), marked)


def _json_name(go_name: str) -> str:
    return go_name[:1].lower() + go_name[1:]


def build(tree: pathlib.Path) -> dict[str, object]:
    structs: dict[str, list[list[object]]] = {}
    named: dict[str, str] = {}
    internal: dict[str, dict[str, list[tuple[str, str, str]]]] = {}
    internal_named: dict[str, dict[str, str]] = {}
    versioned: dict[str, dict[str, list[tuple[str, str, str]]]] = {}
    for package, (internal_file, versioned_file, _) in PACKAGES.items():
        internal[package], internal_named[package] = parse(tree / internal_file)
        versioned[package], _ = parse(tree / versioned_file)
    pending = list(ROOTS)
    while pending:
        qualified = pending.pop()
        if qualified in structs or qualified in named:
            continue
        package, _, name = qualified.partition(".")
        if package not in PACKAGES:
            continue
        aliases = PACKAGES[package][2]
        if name in internal_named[package]:
            named[qualified] = _qualify(internal_named[package][name], package, aliases).replace(
                "map<", "map["
            )
            pending.extend(re.findall(r"[a-z]+\.\w+", named[qualified]))
            continue
        if name not in internal[package]:
            raise SystemExit(f"no internal type {qualified}")
        tags = {go: tag for go, _, tag in versioned[package].get(name, [])}
        rows: list[list[object]] = []
        for go_name, go_type, _ in internal[package][name]:
            tag = tags.get(go_name)
            embedded = go_type.lstrip("*").rpartition(".")[2] == go_name and (
                tag is None or tag.startswith("=")
            )
            if tag is None:
                key = _json_name(go_name)
                print(f"{qualified}.{go_name}: no versioned field, key {key!r}", file=sys.stderr)
            else:
                key = tag.lstrip("=")
            full = _qualify(go_type, package, aliases)
            rows.append([go_name, key, full.replace("map<", "map["), embedded])
            pending.extend(re.findall(r"[a-z]+\.\w+", full))
        structs[qualified] = rows
    return {"structs": dict(sorted(structs.items())), "named": dict(sorted(named.items()))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=pathlib.Path, default=DEFAULT_TREE)
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    table = build(args.tree)
    structs, named = table["structs"], table["named"]
    assert isinstance(structs, dict) and isinstance(named, dict)
    # One struct per line, so a regeneration diffs by struct.
    rows = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in structs.items()]
    names = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in named.items()]
    text = "{\n" + f'"about": {json.dumps(ABOUT)},\n"structs": {{\n'
    text += ",\n".join(rows) + '\n},\n"named": {\n' + ",\n".join(names) + "\n}\n}\n"
    args.out.write_text(text)


if __name__ == "__main__":
    main()
