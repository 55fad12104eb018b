"""cel-cpp's error texts reworded as cel-go's, which kube returns to clients.

Compile errors keep cel-go's layout (``ERROR: <input>:1:5: msg`` then the source line and a
caret line); runtime errors become cel-go's short texts (``no such key: x``, ``division by
zero``, ``no such overload``...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from platform_api.cel.issuetext import ISSUE_AT, offset_of
from platform_api.cel.relocate import relocated


class CELError(ValueError):
    """A CEL expression failed to compile or evaluate; the text is what kube shows."""


class CompileError(CELError):
    """Compilation failed; ``issues`` is cel-go's ``Issues.String()``."""

    def __init__(self, issues: str) -> None:
        super().__init__(f"compilation failed: {issues}")
        self.issues = issues


_STATUS = re.compile(
    r"^(INVALID_ARGUMENT|NOT_FOUND|UNKNOWN|OUT_OF_RANGE|FAILED_PRECONDITION|UNIMPLEMENTED|"
    r"INTERNAL|ALREADY_EXISTS|RESOURCE_EXHAUSTED|CANCELLED|ABORTED|PERMISSION_DENIED): "
)
_TRAILER = re.compile(r" \[[A-Z_]+\]$")
_STRUCT_FIELD = re.compile(r"(undefined field '[^']*') not found in struct '[^']*'")
_NOT_SELECTABLE = re.compile(
    r"^(ERROR: <input>:\d+:\d+: )expression of type ('[^']*') cannot be the operand of a select"
    r" operation$"
)
_SELECT_TEXT = r"\1type \2 does not support field selection"
# cel-cpp's parser and checker texts that cel-go words otherwise (its macros' own errors).
_REWORDED = [
    (re.compile(r"has\(\) argument must be a field selection$"), "invalid argument to has() macro"),
    (
        re.compile(
            r"(?:all|exists|exists_one|existsOne|transformList|transformMap|transformMapEntry)"
            r"\(\) (?:first |second )?variable name must be a simple identifier$"
        ),
        "argument must be a simple name",
    ),
    (
        re.compile(r"(?:map|filter)\(\) variable name must be a simple identifier$"),
        "argument is not an identifier",
    ),
    (re.compile(r"cannot be the range of a comprehension"), "cannot be range of a comprehension"),
]

_KINDS = "string|int|uint|double|bool|bytes|timestamp|duration|null_type|list|map"
_RUNTIME = [
    (re.compile(r"^divide by zero$"), "division by zero"),
    (re.compile(r'^Key not found in map : "(.*)"$', re.S), r"no such key: \1"),
    (re.compile(r"^Key not found in map : (.*)$", re.S), r"no such key: \1"),
    (re.compile(r"^Index error: index=(-?\d+) size=(\d+)$"), r"index out of bounds: \1"),
    (
        re.compile(rf"^cannot convert ({_KINDS}) to ({_KINDS})$"),
        r"type conversion error from '\1' to '\2'",
    ),
    (re.compile(r"^No matching overloads found.*$", re.S), "no such overload"),
    (re.compile(r"^flatten\(\): (.*)$"), r"\1"),
    (re.compile(r"^Applying SELECT to non-message type$"), "no such overload"),
    (re.compile(r"^No such field: (.*)$"), r"no such key: \1"),
    (re.compile(r"^Index error: expected integer type, got .*$"), "unsupported index type"),
    # cel-go converts with String.ConvertToType, whose failure names the target type
    (
        re.compile(r"^String to Duration conversion failed$"),
        "type conversion error from 'string' to 'google.protobuf.Duration'",
    ),
    (
        re.compile(r"^String to Timestamp conversion failed$"),
        "type conversion error from 'string' to 'google.protobuf.Timestamp'",
    ),
    (
        re.compile(r"^Type conversion error from '(.*)' to '(.*)'$"),
        r"type conversion error from '\1' to '\2'",
    ),
    (re.compile(r"^malformed UTF-8 bytes$"), "invalid UTF-8 in bytes, cannot convert to string"),
    (re.compile(r"^int64 out of uint64 range$"), "unsigned integer overflow"),
    (re.compile(r"^(double|uint64) out of int64 range$"), "integer overflow"),
    (re.compile(r"^double out of uint64 range$"), "unsigned integer overflow"),
]


def strip_status(text: str) -> str:
    return _TRAILER.sub("", _STATUS.sub("", text.strip()))


def compile_issues(text: str, source: str | None = None) -> str:
    """cel-cpp's compile failure text -> cel-go's ``Issues.String()`` (of ``source``, the
    expression, where it is known)."""
    lines = [_TRAILER.sub("", line) for line in strip_status(text).split("\n")]
    # cel-cpp's alone; and its grammar names the optional-field token by its escape
    lines = [line.replace(_ESCAPED_QUESTION, "'?'") for line in lines if line != _PARSE_TREE]
    if source is not None:
        lines = _empty_snippets(lines, source)
    if source:
        lines = [_NO_OVERLOAD.sub(lambda m: _signature(m, source), line) for line in lines]
        lines = relocated(lines, source)
    lines = [_NOT_SELECTABLE.sub(_SELECT_TEXT, line) for line in lines]
    for pattern, words in _REWORDED:
        lines = [pattern.sub(words, line) if line.startswith("ERROR: ") else line for line in lines]
    lines = [_APPLIED_TO.sub(_go_type_names, line) for line in _without_error_operands(lines)]
    return _type_variables(_STRUCT_FIELD.sub(r"\1", "\n".join(by_location(lines))))


def _empty_snippets(lines: list[str], source: str) -> list[str]:
    """cel-go draws an issue's snippet and caret even where its line is empty (`` | ``
    then `` | ^``), where cel-cpp draws none; an empty source has no line at all, and
    cel-go places its issue at column 0 (``<input>:1:0``)."""
    if not source:
        return [ISSUE_AT.sub(r"ERROR: <input>:\1:0: ", line, count=1) for line in lines]
    rows = source.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        match = ISSUE_AT.match(line)
        drawn = i + 1 < len(lines) and lines[i + 1].startswith(" | ")
        if match is None or drawn:
            continue
        row = int(match.group(1))
        if 1 <= row <= len(rows) and not rows[row - 1]:
            out += [" | ", " | ^"]
    return out


_TYPE_VARIABLE = re.compile(r"T%\d+")


def _type_variables(text: str) -> str:
    """cel-go names the type variables it has not resolved ``_var0``, ``_var1``... as it
    makes them, left to right; cel-cpp ``T%2``, ``T%3``: renamed in order of use."""
    names: dict[str, str] = {}
    return _TYPE_VARIABLE.sub(lambda m: names.setdefault(m.group(), f"_var{len(names)}"), text)


_PARSE_TREE = "ERROR: <input>:-1:-1: <<nil>> parsetree"
_ESCAPED_QUESTION = "'\\u003F'"
_APPLIED_TO = re.compile(r"(?<= applied to ')(.*)(?='$)")
# cel-go's names for types in an overload's signature
_SIGNATURE_NAMES = re.compile(r"google\.protobuf\.(Duration|Timestamp)|\*error\*")


def _go_type_names(match: re.Match[str]) -> str:
    return _SIGNATURE_NAMES.sub(
        lambda m: "!error!" if m.group(0) == "*error*" else m.group(1).lower(), match.group(1)
    )


def by_location(lines: list[str]) -> list[str]:
    """cel-go lists its issues by where they stand (line, then column), each with the
    snippet lines that follow it; cel-cpp in the order it met them."""
    issues: list[list[str]] = []
    for line in lines:
        if line.startswith("ERROR: ") or not issues:
            issues.append([line])
        else:
            issues[-1].append(line)

    def where(issue: list[str]) -> tuple[int, int]:
        match = ISSUE_AT.match(issue[0])
        return (int(match.group(1)), int(match.group(2))) if match else (0, 0)

    return [line for issue in sorted(issues, key=where) for line in issue]


def _without_error_operands(lines: list[str]) -> list[str]:
    """cel-go checks an operand whose type is already an error as dyn and says nothing
    more; cel-cpp adds an issue about the ``*error*`` type (with its two snippet lines)."""
    out: list[str] = []
    skip = 0
    for line in lines:
        if skip:
            skip -= 1
        elif line.startswith("ERROR: ") and "'*error*'" in line and len(lines) > 3:
            skip = 2
        else:
            out.append(line)
    return out


_NO_OVERLOAD = re.compile(
    r"^ERROR: <input>:(\d+):(\d+): found no matching overload for '([^']*)' applied to '\((.*)\)'$"
)


_NULL_TYPE = re.compile(r"\bnull_type\b")


def split_types(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _signature(match: re.Match[str], source: str) -> str:
    """cel-go writes a member call's signature as ``target.(args)``; cel-cpp as ``(target, args)``."""
    line, column, name, types = match.groups()
    offset = offset_of(source, int(line), int(column) - 1)
    before = source[:offset].rstrip()
    is_member = before.endswith(name) and before[: len(before) - len(name)].rstrip().endswith(".")
    args = [_NULL_TYPE.sub("null", arg) for arg in split_types(types)]  # cel-go's name
    if is_member and args:
        signature = f"{args[0]}.({', '.join(args[1:])})"
    else:
        signature = f"({', '.join(args)})"
    prefix = f"ERROR: <input>:{line}:{column}: "
    return f"{prefix}found no matching overload for '{name}' applied to '{signature}'"


# cel-cpp: "No matching overloads found : (int64).string_trim()" or "size(int64)"
_NO_MATCH = re.compile(
    r"^No matching overloads found : (?:\((?P<recv>[^()]*)\)\.)?(?P<fn>[^(]+)\((?P<args>.*)\)$",
    re.S,
)
_GO_TYPES = {"int64": "int", "uint64": "uint", "null_type": "null_type"}
# Overload id -> (function name, declared argument types, the receiver's first).
Overloads = Mapping[str, tuple[str, tuple[str, ...]]]


def _no_overload(match: re.Match[str], overloads: Overloads) -> str | None:
    """cel-go's words when no overload takes a call's runtime arguments: its standard
    functions with one trait say ``no such overload: size``; the functions of its
    extensions and of kube's libraries (``overloads``' names) say which arguments they
    got, ``no such overload: indexOf(int, string)``; None for the rest (operators,
    ``contains``...), whose text is the plain one."""
    fn = match["fn"].strip()
    if fn == "size":
        return "no such overload: size"
    args = split_types(match["args"])
    if fn in _CONVERSIONS and match["recv"] is None and len(args) == 1:
        got = _GO_TYPES.get(args[0], args[0])
        if got not in _CONVERTIBLE[fn]:  # cel-go's dispatch finds no overload for the type
            return f"no such overload: {fn}({got})"
        return f"type conversion error from '{got}' to '{_CONVERSIONS[fn]}'"  # ConvertToType's
    name, declared = overloads.get(fn, (fn, ()))
    if fn not in overloads and name not in _EXTENSION_NAMES:
        return None
    args = ([match["recv"]] if match["recv"] is not None else []) + args
    shown = [
        declared[i] if arg == "struct" and i < len(declared) else _GO_TYPES.get(arg, arg)
        for i, arg in enumerate(args)
    ]
    return f"no such overload: {name}({', '.join(shown)})"


_CONVERSIONS = {
    "int": "int",
    "uint": "uint",
    "double": "double",
    "string": "string",
    "bool": "bool",
    "bytes": "bytes",
    "duration": "google.protobuf.Duration",
    "timestamp": "google.protobuf.Timestamp",
}
_D, _T = "google.protobuf.Duration", "google.protobuf.Timestamp"
# The argument types cel-go's standard conversions have an overload for (a value of
# another type, typed dyn, is "no such overload"; of these, ConvertToType's error).
_CONVERTIBLE = {
    "bool": {"bool", "string"},
    "bytes": {"bytes", "string"},
    "double": {"double", "int", "string", "uint"},
    "duration": {_D, "int", "string"},
    "int": {"int", "double", _D, "string", _T, "uint"},
    "string": {"string", "bool", "bytes", "double", _D, "int", _T, "uint"},
    "timestamp": {_T, "int", "string"},
    "uint": {"uint", "double", "int", "string"},
}
# cel-cpp's own extension functions (cel-go's lists extension and kube's lists library).
_EXTENSION_NAMES = frozenset(
    {"sum", "min", "max", "isSorted", "indexOf", "lastIndexOf", "slice", "flatten", "sort"}
    | {"sortBy", "distinct", "reverse", "first", "last"}
)


def runtime_message(text: str, overloads: Overloads | None = None) -> str:
    """cel-cpp's evaluation error -> cel-go's error text; ``overloads`` names the library
    functions by overload id, as their failures name them."""
    message = strip_status(text)
    match = _NO_MATCH.match(message)
    if match is not None:
        named = _no_overload(match, overloads or {})
        if named is not None:
            return named
    for pattern, replacement in _RUNTIME:
        if pattern.match(message):
            return pattern.sub(replacement, message)
    return message
