"""Declarations of library functions, turned into cel-cpp's environment configuration.

A library lists ``Function`` entries; each overload names kube's overload id (cost estimation and
checked ASTs use it), its signature in CEL type notation (``list(A)`` with single capital letters
as type parameters, ``optional(T)`` for optional types) and its Python implementation.  cel-cpp
declares them from YAML (the only way to declare type parameters from Python) and binds the
implementations by overload id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

_ALIASES = {
    "duration": "google.protobuf.Duration",
    "timestamp": "google.protobuf.Timestamp",
    "optional": "optional_type",
    "null": "null_type",
}


@dataclass(frozen=True)
class Overload:
    id: str
    args: tuple[str, ...]
    result: str
    impl: Callable[..., Any] | None = None
    member: bool = False


@dataclass
class Function:
    name: str
    overloads: list[Overload] = field(default_factory=list)


def member(
    oid: str, args: tuple[str, ...], result: str, impl: Callable[..., Any] | None = None
) -> Overload:
    return Overload(oid, args, result, impl, member=True)


def glob(
    oid: str, args: tuple[str, ...], result: str, impl: Callable[..., Any] | None = None
) -> Overload:
    return Overload(oid, args, result, impl, member=False)


def parse_type(text: str) -> dict[str, Any]:
    """``map(string, list(A))`` -> cel-cpp's YAML type description."""
    node, rest = _parse(text.replace(" ", ""))
    if rest:
        raise ValueError(f"bad type {text!r}")
    return node


def _parse(text: str) -> tuple[dict[str, Any], str]:
    name_end = len(text)
    for i, ch in enumerate(text):
        if ch in "(),":
            name_end = i
            break
    name, rest = text[:name_end], text[name_end:]
    node: dict[str, Any] = {"type_name": _ALIASES.get(name, name)}
    if len(name) == 1 and name.isupper():
        node["is_type_param"] = True
    if rest.startswith("("):
        params = []
        rest = rest[1:]
        while True:
            param, rest = _parse(rest)
            params.append(param)
            if rest.startswith(","):
                rest = rest[1:]
                continue
            if not rest.startswith(")"):
                raise ValueError(f"bad type {text!r}")
            rest = rest[1:]
            break
        node["params"] = params
    return node, rest


def config_yaml(
    functions: Iterable[Function],
    extensions: Iterable[tuple[str, int | None]] = (),
    exclude_stdlib: Iterable[str] = (),
) -> str:
    """A cel-cpp environment config (JSON, which its YAML reader accepts).

    ``exclude_stdlib`` names standard functions that ``functions`` declares again in full
    (adding overloads to a standard function is refused); their runtime bindings stay.
    """
    entries = []
    for fn in functions:
        overloads = []
        for ov in fn.overloads:
            entry: dict[str, Any] = {"id": ov.id, "return": parse_type(ov.result)}
            args = [parse_type(a) for a in ov.args]
            if ov.member:
                entry["target"] = args[0]
                args = args[1:]
            if args:
                entry["args"] = args
            overloads.append(entry)
        entries.append({"name": fn.name, "overloads": overloads})
    config: dict[str, Any] = {
        "extensions": [
            {"name": name, **({"version": version} if version is not None else {})}
            for name, version in extensions
        ],
        "functions": entries,
    }
    excluded = [{"name": name} for name in exclude_stdlib]
    if excluded:
        config["stdlib"] = {"exclude_functions": excluded}
    return json.dumps(config)


def implementations(functions: Iterable[Function]) -> dict[str, Callable[..., Any]]:
    return {ov.id: ov.impl for fn in functions for ov in fn.overloads if ov.impl is not None}


def merge(*libraries: Iterable[Function]) -> list[Function]:
    """Group overloads by function name: several libraries extend one function (``isLessThan``)."""
    merged: dict[str, Function] = {}
    for library in libraries:
        for fn in library:
            merged.setdefault(fn.name, Function(fn.name)).overloads.extend(fn.overloads)
    return list(merged.values())
