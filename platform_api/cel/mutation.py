"""CEL for MutatingAdmissionPolicy: ``Object{...}`` and ``JSONPatch{...}`` literals.

kube's mutation expressions build apply configurations and JSON patches with object
literals whose types (``Object``, ``Object.spec.template``, ``JSONPatch``) its dynamic
type resolver makes up on demand.  cel-cpp checks object literals against the messages
of a descriptor pool, which cannot hold types of any name.  So before compiling, each
literal is rewritten into a map literal whose values are ``dyn`` (kube's base environment
keeps aggregate literals homogeneous) and which carries its type name under ``TYPE_KEY``;
evaluation checks the names where kube's type checker would and strips them.
``jsonpatch.escapeKey(s)`` becomes the two replacements it stands for.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from platform_api.cel.admission import ANY, PolicyCompiler
from platform_api.cel.environment import Program
from platform_api.cel.errors import CELError, CompileError
from platform_api.cel.issuetext import format_issue
from platform_api.cel.mutationtypes import field_problems, kube_type

APPLY_CONFIGURATION = "ApplyConfiguration"
JSON_PATCH = "JSONPatch"
TYPE_KEY = "@type"
_ROOTS = ("Object", "JSONPatch")
_ESCAPE = '.replace("~", "~0").replace("/", "~1")'
_OPTIONAL_CLOSE = ").optMap(v, dyn(v))"
_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
        |'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>\d[\w.]*)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str


def _tokens(source: str) -> list[_Token]:
    out = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup or "other"
        out.append(_Token(kind, m.group()))
    return out


class _Frame:
    """An open bracket; ``struct`` frames turn their fields into map entries."""

    def __init__(self, closer: str, struct: bool = False, escape: bool = False) -> None:
        self.closer = closer
        self.struct = struct
        self.escape = escape  # the call of jsonpatch.escapeKey
        self.expect_field = struct  # at the start of a field: ``[?]name:``
        self.value_open = ""  # what closes the field's value at its end

    def close_value(self, out: _Out) -> None:
        if self.value_open:
            out.append(self.value_open)
            self.value_open = ""


def rewrite(source: str) -> str:
    """The source with every object literal as a typed map literal (see module doc)."""
    return _rewrite(source)[0]


class _Out(list[str]):
    """The rewritten text, remembering where in the source each piece came from."""

    def __init__(self) -> None:
        super().__init__()
        self.origins: list[tuple[int, bool]] = []  # (source offset, copied verbatim)
        self.at = 0  # the source offset of the token being rewritten

    def append(self, text: str) -> None:
        super().append(text)
        self.origins.append((self.at, False))

    def copy_token(self, text: str) -> None:
        super().append(text)
        self.origins.append((self.at, True))

    def offsets(self) -> list[int]:
        """The source offset of every character of the rewritten text."""
        out: list[int] = []
        for text, (origin, verbatim) in zip(self, self.origins, strict=True):
            out.extend(origin + k if verbatim else origin for k in range(len(text)))
        return out


def _rewrite(source: str) -> tuple[str, list[int]]:
    tokens = _tokens(source)
    starts = list(itertools.accumulate((len(t.text) for t in tokens), initial=0))
    out = _Out()
    stack: list[_Frame] = []
    i, last = 0, ""  # ``last``: the previous significant token
    while i < len(tokens):
        tok = tokens[i]
        out.at = starts[i]
        top = stack[-1] if stack else None
        if tok.kind == "space":
            out.copy_token(tok.text)
            i += 1
            continue
        if top is not None and top.struct:
            step = _struct_token(tokens, i, top, out)
            if step:
                if tok.text == "}":
                    stack.pop()
                last, i = tokens[step - 1].text, step
                continue
        if tok.text in _ROOTS and last != ".":
            name, j = _type_name(tokens, i)
            if j < len(tokens) and tokens[j].text == "{":
                out.append("{" + f'"{TYPE_KEY}": dyn("{name}")')
                stack.append(_Frame("}", struct=True))
                last, i = "{", j + 1
                continue
        if tok.text == "jsonpatch" and last != "." and _follows(tokens, i, (".", "escapeKey", "(")):
            out.append("(")
            stack.append(_Frame(")", escape=True))
            last, i = "(", _skip(tokens, i, 3)
            continue
        if tok.kind == "other" and tok.text in "([{":
            stack.append(_Frame({"(": ")", "[": "]", "{": "}"}[tok.text]))
        elif top is not None and tok.kind == "other" and tok.text == top.closer:
            stack.pop()
            if top.escape:
                out.append(")" + _ESCAPE)
                last, i = ")", i + 1
                continue
        out.copy_token(tok.text)
        last = tok.text
        i += 1
    return "".join(out), out.offsets()


def _struct_token(tokens: list[_Token], i: int, frame: _Frame, out: _Out) -> int:
    """Handle a token at the level of an object literal: a field's start, a comma, the
    closing brace.  Returns the index after what was consumed, or 0 for nothing."""
    tok = tokens[i]
    if tok.kind == "other" and tok.text == ",":
        frame.close_value(out)
        frame.expect_field = True
        return i + 1
    if tok.kind == "other" and tok.text == "}":
        frame.close_value(out)
        out.append("}")
        return i + 1
    if not frame.expect_field:
        return 0
    frame.expect_field = False
    optional = tok.text == "?"
    j = _next(tokens, i + 1) if optional else i
    if j >= len(tokens) or tokens[j].kind != "ident" or not _follows(tokens, j, (":",)):
        return 0
    # An optional field's value is an optional: its content becomes dyn.
    out.append(f', {"?" if optional else ""}"{tokens[j].text}": ' + ("(" if optional else "dyn("))
    frame.value_open = _OPTIONAL_CLOSE if optional else ")"
    return _skip(tokens, j, 1)


def _type_name(tokens: list[_Token], i: int) -> tuple[str, int]:
    """``Object.spec.template`` starting at ``i``: the name and the index after it."""
    parts = [tokens[i].text]
    j = i + 1
    while True:
        k = _next(tokens, j)
        if k < len(tokens) and tokens[k].text == ".":
            m = _next(tokens, k + 1)
            if m < len(tokens) and tokens[m].kind == "ident":
                parts.append(tokens[m].text)
                j = m + 1
                continue
        return ".".join(parts), _next(tokens, j)


def _next(tokens: list[_Token], j: int) -> int:
    while j < len(tokens) and tokens[j].kind == "space":
        j += 1
    return j


def _follows(tokens: list[_Token], i: int, texts: tuple[str, ...]) -> bool:
    j = i + 1
    for text in texts:
        j = _next(tokens, j)
        if j >= len(tokens) or tokens[j].text != text:
            return False
        j += 1
    return True


def _skip(tokens: list[_Token], i: int, count: int) -> int:
    """The index after the ``count`` significant tokens that follow ``i``."""
    j = i + 1
    for _ in range(count):
        j = _next(tokens, j) + 1
    return j


def compile_mutation(compiler: PolicyCompiler, expression: str, patch_type: str) -> Program:
    """Compile a mutation's expression; CELError as kube's compiler words it."""
    compiler.parse(expression)  # syntax errors where they stand, before any rewrite
    rewritten, offsets = _rewrite(expression)
    try:
        program = compiler.compile(rewritten, ANY)
    except CELError as e:
        raise CELError(_named(_remap(str(e), rewritten, offsets, expression), expression)) from None
    problems = field_problems(program.checked, TYPE_KEY)
    if problems:
        raise CompileError("\n".join(_located(program, offsets, expression, *p) for p in problems))
    expected = "Object" if patch_type == APPLY_CONFIGURATION else "list(JSONPatch)"
    got = kube_type(program.checked, TYPE_KEY)
    if got != expected:
        raise CELError(f"must evaluate to {expected} but got {got}")
    return program


_LITERAL = re.compile(r"\b((?:JSONPatch|Object)(?:\s*\.\s*\w+)*)\s*\{")


def _named(message: str, source: str) -> str:
    """cel-cpp names a rewritten literal's type ``map(string, dyn)``; kube's checker by
    its name, which is known when the source has literals of one name only."""
    names = {re.sub(r"\s", "", m.group(1)) for m in _LITERAL.finditer(source)}
    if len(names) != 1:
        return message
    return message.replace("'map(string, dyn)'", f"'{names.pop()}'")


def _located(program: Program, offsets: list[int], source: str, entry_id: int, message: str) -> str:
    """A field's issue where kube's parser puts the field: its colon in the source."""
    at = offsets[min(program.checked.offset(entry_id), len(offsets) - 1)] if offsets else 0
    colon = source.find(":", at)
    return format_issue(source, colon if colon >= 0 else at, message)


_ISSUE = re.compile(r"^(.*ERROR: <input>:)(\d+):(\d+)(: .*)$")


def _remap(message: str, rewritten: str, offsets: list[int], source: str) -> str:
    """Compile issues located in the source as written: each issue's line and column,
    and the snippet under it, redrawn from the source."""
    lines = message.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _ISSUE.match(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        row, column = int(match.group(2)), int(match.group(3))
        at = _offset_of(rewritten, row, column)
        origin = offsets[min(at, len(offsets) - 1)] if offsets else 0
        src_row = source.count("\n", 0, origin) + 1
        line_start = source.rfind("\n", 0, origin) + 1
        src_column = origin - line_start + 1
        out.append(f"{match.group(1)}{src_row}:{src_column}{match.group(4)}")
        src_line = source.split("\n")[src_row - 1]
        out.append(f" | {src_line}")
        out.append(" | " + "." * (src_column - 1) + "^")
        i += 1
        while i < len(lines) and lines[i].startswith(" | "):
            i += 1  # the snippet of the rewritten source
    return "\n".join(out)


def _offset_of(text: str, row: int, column: int) -> int:
    start = 0
    for _ in range(row - 1):
        start = text.index("\n", start) + 1
    return start + column - 1


def apply_configuration(value: Any) -> dict[str, Any]:
    """The evaluated apply configuration, checked as kube's patcher does, names stripped."""
    if not isinstance(value, dict) or value.get(TYPE_KEY) != "Object":
        raise CELError(
            f"unsupported return type from ApplyConfiguration expression: {_kind(value)}"
        )
    problems: list[str] = []
    out = _strip(value, ["Object"], problems)
    if problems:
        raise CELError("type mismatch: " + "\n".join(problems))
    return out


class FieldTypeError(CELError):
    """A JSONPatch field a dyn value filled with another type: kube fails the
    expression's evaluation so (its message is the expression's)."""


_GO_TYPES = {bool: "bool", int: "int64", float: "float64", bytes: "[]uint8"}


def _go_type(value: Any) -> str:
    return _GO_TYPES.get(type(value), type(value).__name__)


def json_patch_operations(value: Any) -> list[dict[str, Any]]:
    """The evaluated JSON patch operations, checked as kube's patcher does."""
    if not isinstance(value, list):
        raise CELError("type mismatch: JSONPatchType.expression should evaluate to array")
    ops = []
    for item in value:
        if not isinstance(item, dict) or item.get(TYPE_KEY) != JSON_PATCH:
            raise CELError(
                "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, "
                f"got element of {_kind(item)}"
            )
        for name in ("op", "path", "from"):
            given = item.get(name)
            if given is not None and not isinstance(given, str):
                raise FieldTypeError(
                    f"unexpected type {_go_type(given)} for JSONPatchType '{name}' field"
                )
        # kube's operation: op and path always (empty when not given), from when not
        # empty, value when given
        op: dict[str, Any] = {"op": item.get("op") or "", "path": item.get("path") or ""}
        if item.get("from"):
            op["from"] = item["from"]
        if "value" in item:
            problems: list[str] = []
            value = item["value"]
            value_type = value.get(TYPE_KEY) if isinstance(value, dict) else None
            op["value"] = _strip(value, [str(value_type or "")], problems)
        ops.append(op)
    return ops


def _strip(value: Any, path: list[str], problems: list[str]) -> Any:
    """The value without type names; each object literal's name must follow the field
    path from its root (kube's CheckTypeNamesMatchFieldPathNames)."""
    if isinstance(value, dict):
        name = value.get(TYPE_KEY)
        if name is None:  # a map literal
            return {k: _strip(v, path, problems) for k, v in value.items()}
        expected = ".".join(path)
        if name != expected:
            problems.append(
                f'unexpected type name "{name}", expected "{expected}", which matches field '
                "name path from root Object type"
            )
        return {k: _strip(v, [*path, k], problems) for k, v in value.items() if k != TYPE_KEY}
    if isinstance(value, list):
        return [_strip(v, path, problems) for v in value]
    return value


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get(TYPE_KEY) or "map")
    return {list: "list", str: "string", bool: "bool", int: "int", float: "double"}.get(
        type(value), type(value).__name__
    )
