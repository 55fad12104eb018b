"""Static checks of ``'...'.format([...])`` calls and of constant conversions.

cel-go's strings extension validates a literal format string against a literal argument list at
compile time (``error during formatting: decimal clause can only be used on integers, was given
string``); and kube's programs are built with ``OptOptimize``, which evaluates type conversions
of constants (``int('x')``) when the program is built, failing it.
"""

from __future__ import annotations

from typing import Any

from platform_api.cel.checked import Checked, type_text, walk

_ACCEPTS = {
    "d": ("int", "uint"),
    "f": ("double", "string"),
    "e": ("double", "string"),
    "b": ("int", "uint", "bool"),
    "x": ("int", "uint", "string", "bytes"),
    "X": ("int", "uint", "string", "bytes"),
    "o": ("int", "uint"),
    "s": (
        "list",
        "map",
        "int",
        "uint",
        "double",
        "bool",
        "string",
        "bytes",
        "null_type",
        "google.protobuf.Timestamp",
        "google.protobuf.Duration",
        "type",
    ),
}
_CLAUSE = {
    "d": "decimal clause can only be used on integers",
    "f": "fixed-point clause can only be used on doubles",
    "e": "scientific clause can only be used on doubles",
    "b": "only integers and bools can be formatted as binary",
    "x": "only integers, byte buffers, and strings can be formatted as hex",
    "X": "only integers, byte buffers, and strings can be formatted as hex",
    "o": "octal clause can only be used on integers",
    "s": "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, "
    "types, durations, and timestamps",
}
CONVERSIONS = {
    "bool",
    "bytes",
    "double",
    "duration",
    "dyn",
    "int",
    "string",
    "timestamp",
    "type",
    "uint",
}


def _kind(checked: Checked, expr_id: int) -> str:
    return type_text(checked.type_of(expr_id)).split("(", 1)[0]


def format_errors(checked: Checked) -> list[tuple[int, str]]:
    """(offset, message) of literal format calls that cannot format their literal arguments."""
    found = []
    for expr, _ in walk(checked.ast.expr):
        if expr.WhichOneof("expr_kind") != "call_expr" or expr.call_expr.function != "format":
            continue
        call = expr.call_expr
        if "string_format" not in checked.overloads(expr.id) or len(call.args) != 1:
            continue
        target, arg = call.target, call.args[0]
        if (
            target.WhichOneof("expr_kind") != "const_expr"
            or arg.WhichOneof("expr_kind") != "list_expr"
        ):
            continue
        problem = _check(checked, target.const_expr.string_value, list(arg.list_expr.elements))
        if problem is not None:
            at, message = problem
            found.append((checked.offset(at if at is not None else expr.id), message))
    return found


def _check(checked: Checked, fmt: str, args: list[Any]) -> tuple[int | None, str] | None:
    i = used = 0
    while i < len(fmt):
        if fmt[i] != "%":
            i += 1
            continue
        if fmt[i + 1 : i + 2] == "%":
            i += 2
            continue
        used += 1
        if i + 1 >= len(fmt):
            return None, "unexpected end of string"
        if used > len(args):
            return None, f"index {used - 1} out of range"
        j = i + 1
        if fmt[j] == ".":
            j += 1
            while j < len(fmt) and fmt[j].isdigit():
                j += 1
            if j >= len(fmt):
                return None, (
                    "could not parse formatting clause: error while parsing precision: "
                    "could not find end of precision specifier"
                )
        spec = fmt[j]
        if spec not in _ACCEPTS:
            return (
                None,
                f'could not parse formatting clause: unrecognized formatting clause "{spec}"',
            )
        element = args[used - 1]
        kind = _kind(checked, element.id)
        if kind != "dyn" and kind not in _ACCEPTS[spec]:
            return element.id, f"error during formatting: {_CLAUSE[spec]}, was given {kind}"
        i = j + 1
    if len(args) > used:
        return None, (
            f"too many arguments supplied to string.format (expected {used}, got {len(args)})"
        )
    return None


def constant_conversions(checked: Checked) -> list[Any]:
    """Conversion calls of a literal, which kube evaluates when building the program."""
    return [
        expr
        for expr, _ in walk(checked.ast.expr)
        if expr.WhichOneof("expr_kind") == "call_expr"
        and expr.call_expr.function in CONVERSIONS
        and not expr.call_expr.HasField("target")
        and len(expr.call_expr.args) == 1
        and expr.call_expr.args[0].WhichOneof("expr_kind") == "const_expr"
    ]
