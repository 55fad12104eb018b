"""kube's semver library (version 1, with the normalizing ``semver(s, true)`` form).

Parsing follows github.com/blang/semver/v4 and its error texts.  The ``kubernetes.Semver``
message holds the version without build metadata, which semver equality ignores.
"""

from __future__ import annotations

from typing import Any

from platform_api.cel.library.common import EvalError
from platform_api.cel.library.decl import Function, glob, member
from platform_api.cel.protos import library_class
from platform_api.validation.field import go_quote

Semver = library_class("kubernetes.Semver")
_NUMBERS = set("0123456789")
_ALPHANUM = _NUMBERS | set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
_UINT64_MAX = (1 << 64) - 1

Version = tuple[int, int, int, tuple[int | str, ...]]


def _uint(text: str) -> int:
    if not text or not text.isascii() or not text.isdigit():
        raise EvalError(f"strconv.ParseUint: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if value > _UINT64_MAX:
        raise EvalError(f"strconv.ParseUint: parsing {go_quote(text)}: value out of range")
    return value


def _number(text: str, what: str) -> int:
    if not set(text) <= _NUMBERS:
        raise EvalError(f"Invalid character(s) found in {what} number {go_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise EvalError(
            f"{what.capitalize()} number must not contain leading zeroes {go_quote(text)}"
        )
    return _uint(text)


def _prerelease(text: str) -> int | str:
    if not text:
        raise EvalError("Prerelease is empty")
    if set(text) <= _NUMBERS:
        if len(text) > 1 and text[0] == "0":
            raise EvalError(
                f"Numeric PreRelease version must not contain leading zeroes {go_quote(text)}"
            )
        return _uint(text)
    if set(text) <= _ALPHANUM:
        return text
    raise EvalError(f"Invalid character(s) found in prerelease {go_quote(text)}")


def parse(text: str) -> Version:
    if not text:
        raise EvalError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise EvalError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    patch_text, _, build = parts[2].partition("+")
    has_build = "+" in parts[2]
    patch_text, dash, pre_text = patch_text.partition("-")
    patch = _number(patch_text, "patch")
    pre = tuple(_prerelease(p) for p in pre_text.split(".")) if dash else ()
    for item in build.split(".") if has_build else ():
        if not item:
            raise EvalError("Build meta data is empty")
        if not set(item) <= _ALPHANUM:
            raise EvalError(f"Invalid character(s) found in build meta data {go_quote(item)}")
    return major, minor, patch, pre


def normalize(text: str) -> str:
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            trimmed = part.lstrip("0")
            if not trimmed or trimmed[0] not in _NUMBERS:
                trimmed = "0" + trimmed
            parts[i] = trimmed
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise EvalError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _text(version: Version) -> str:
    major, minor, patch, pre = version
    base = f"{major}.{minor}.{patch}"
    return base + ("-" + ".".join(str(p) for p in pre) if pre else "")


def to_semver(text: str, normalize_text: bool = False) -> Any:
    return Semver(version=_text(parse(normalize(text) if normalize_text else text)))


def is_semver(text: str, normalize_text: bool = False) -> bool:
    try:
        parse(normalize(text) if normalize_text else text)
    except EvalError:
        return False
    return True


def _pre_key(item: int | str) -> tuple[int, int | str]:
    return (0, item) if isinstance(item, int) else (1, item)


def compare(a: Any, b: Any) -> int:
    x, y = parse(a.version), parse(b.version)
    if x[:3] != y[:3]:
        return 1 if x[:3] > y[:3] else -1
    if not x[3] or not y[3]:
        return (not x[3]) - (not y[3])
    kx, ky = [_pre_key(p) for p in x[3]], [_pre_key(p) for p in y[3]]
    return (kx > ky) - (kx < ky)


_S = "kubernetes.Semver"
FUNCTIONS = [
    Function(
        "semver",
        [
            glob("string_to_semver", ("string",), _S, to_semver),
            glob("string_bool_to_semver", ("string", "bool"), _S, to_semver),
        ],
    ),
    Function(
        "isSemver",
        [
            glob("is_semver_string", ("string",), "bool", is_semver),
            glob("is_semver_string_bool", ("string", "bool"), "bool", is_semver),
        ],
    ),
    Function(
        "isGreaterThan",
        [
            member("semver_is_greater_than", (_S, _S), "bool", lambda a, b: compare(a, b) == 1),
        ],
    ),
    Function(
        "isLessThan",
        [
            member("semver_is_less_than", (_S, _S), "bool", lambda a, b: compare(a, b) == -1),
        ],
    ),
    Function("compareTo", [member("semver_compare_to", (_S, _S), "int", compare)]),
    Function("major", [member("semver_major", (_S,), "int", lambda v: parse(v.version)[0])]),
    Function("minor", [member("semver_minor", (_S,), "int", lambda v: parse(v.version)[1])]),
    Function("patch", [member("semver_patch", (_S,), "int", lambda v: parse(v.version)[2])]),
]
