"""cel-go's checker issues where cel-cpp's differ in ways only the parsed expression
tells apart (the check failed: there is no checked AST to read).

- Logical operators: cel-go checks each operand of ``&&`` and ``||`` against ``bool``
  and reports a wrong one where the operand stands (``expected type 'bool' but found
  'string'``); cel-cpp resolves the operator as any call and reports one missing
  overload at the operator (``... '_&&_' applied to '(string, bool)'``).  The operand
  types come from cel-cpp's issue, their places from the parsed expression.
- A field selected from an undeclared name (``params.x`` without a paramKind) is
  ``dyn`` to cel-go, an error to cel-cpp: an overload issue's ``!error!`` argument
  that is such a selection is named ``dyn``.
"""

from __future__ import annotations

import re
from typing import Any

from platform_api.cel.checked import walk
from platform_api.cel.errors import by_location, split_types
from platform_api.cel.issuetext import format_issue, offset_of

_OVERLOAD = re.compile(
    r"^ERROR: <input>:(\d+):(\d+): found no matching overload for '([^']*)' "
    r"applied to '\((.*)\)'$"
)
_UNDECLARED = re.compile(r"undeclared reference to '(\w+)'")
_LOGICAL = re.compile(
    r"^ERROR: <input>:(\d+):(\d+): found no matching overload for '(_&&_|_\|\|_)' "
    r"applied to '\((.*)\)'$"
)
# What a logical operand may be: its type, anything checked as dyn, an error already told.
_PASSING = {"bool", "dyn", "!error!", "*error*"}


def rewrite_issues(issues: str, source: str, parsed: Any) -> str:
    """``issues`` (cel-go's layout) as cel-go words them; ``parsed`` is the expression's
    ParsedExpr."""
    blocks: list[list[str]] = []
    for line in issues.split("\n"):
        if line.startswith("ERROR: ") or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    calls = _calls(parsed)
    undeclared = set(_UNDECLARED.findall(issues))
    out: list[str] = []
    for block in blocks:
        block[0] = _OVERLOAD.sub(lambda m: _selected_as_dyn(m, source, calls, undeclared), block[0])
        match = _LOGICAL.match(block[0])
        if match is None:
            out.extend(block)
            continue
        row, column, function, types = match.groups()
        args = calls.get((offset_of(source, int(row), int(column) - 1), function))
        operands = split_types(types)
        if args is None or len(args) != len(operands):
            out.extend(block)
            continue
        for (where, _), kind in zip(args, operands, strict=True):
            if kind not in _PASSING:
                message = f"expected type 'bool' but found '{kind}'"
                out.extend(format_issue(source, where, message).split("\n"))
    return "\n".join(by_location(out))


def _calls(parsed: Any) -> dict[tuple[int, str], list[tuple[int, Any]]]:
    """Each call by (offset, function): its operands' offsets and nodes (a member call's
    target first, as an overload issue lists it)."""
    positions = parsed.source_info.positions
    found: dict[tuple[int, str], list[tuple[int, Any]]] = {}
    for node, _ in walk(parsed.expr):
        if node.WhichOneof("expr_kind") != "call_expr":
            continue
        call = node.call_expr
        operands = [call.target, *call.args] if call.HasField("target") else list(call.args)
        args = [(int(positions.get(a.id, 0)), a) for a in operands]
        found[(int(positions.get(node.id, 0)), call.function)] = args
    return found


def _selected_as_dyn(
    match: re.Match[str],
    source: str,
    calls: dict[tuple[int, str], list[tuple[int, Any]]],
    undeclared: set[str],
) -> str:
    """An overload issue with each ``!error!`` argument that selects from an undeclared
    name named ``dyn``, as cel-go types that selection."""
    row, column, function, types = match.groups()
    args = calls.get((offset_of(source, int(row), int(column) - 1), function))
    kinds = split_types(types)
    if args is None or len(args) != len(kinds) or "!error!" not in kinds:
        return match.group(0)
    for i, (_, node) in enumerate(args):
        if kinds[i] == "!error!" and _root_name(node) in undeclared:
            kinds[i] = "dyn"
    return match.group(0).replace(f"'({types})'", f"'({', '.join(kinds)})'")


def _root_name(node: Any) -> str | None:
    """The identifier a chain of field selections starts from (``params`` of
    ``params.a.b``); None for anything else, or a bare identifier."""
    if node.WhichOneof("expr_kind") != "select_expr":
        return None
    while node.WhichOneof("expr_kind") == "select_expr":
        node = node.select_expr.operand
    return str(node.ident_expr.name) if node.WhichOneof("expr_kind") == "ident_expr" else None
