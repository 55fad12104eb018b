"""kube's AST validators (cel-go ``ASTValidators``), run over the checked AST after type-check.

``matches`` with an invalid literal regex, ``duration``/``timestamp`` with an invalid literal,
and list or map literals mixing element types are compile errors in kube; a ``find``/``findAll``
literal pattern that does not compile fails kube's program construction instead.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from platform_api.cel.checked import Checked, equivalent, type_text, walk
from platform_api.cel.formatcheck import format_errors
from platform_api.cel.issuetext import format_issue
from platform_api.cel.library.common import EvalError
from platform_api.cel.library.regex import compile_pattern

_DURATION = re.compile(r"^[-+]?(\d*(\.\d*)?(ns|us|µs|μs|ms|s|m|h))+\Z")
_DURATION_PART = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)")
_UNIT_NS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_MAX_DURATION_NS = 315576000000 * 10**9  # CEL's +/- 10000 years


def valid_duration(text: str) -> bool:
    """Go's time.ParseDuration plus CEL's range."""
    if text in ("0", "+0", "-0"):
        return True
    if not _DURATION.match(text):
        return False
    total = 0
    for whole, frac, unit in _DURATION_PART.findall(text.lstrip("+-")):
        if not whole and not frac:
            return False
        scale = _UNIT_NS[unit]
        total += int(whole or 0) * scale + (int(frac) * scale // 10 ** len(frac) if frac else 0)
    return total <= _MAX_DURATION_NS


def valid_timestamp(text: str) -> bool:
    """RFC 3339 within CEL's range (years 1 to 9999)."""
    candidate = text.replace("z", "Z")
    if not re.match(
        r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})\Z", candidate
    ):
        return False
    date, _, rest = candidate.partition("T") if "T" in candidate else candidate.partition("t")
    main = rest[:8]
    try:
        datetime.datetime.fromisoformat(f"{date}T{main}")
    except ValueError:
        return False
    return True


def _literal(expr: Any) -> Any:
    if expr.WhichOneof("expr_kind") != "const_expr":
        return None
    const = expr.const_expr
    kind = const.WhichOneof("constant_kind")
    return getattr(const, kind) if kind else None


def literal_errors(checked: Checked) -> list[str]:
    """Messages (cel-go display form) of the literal and aggregate validators, in source order."""
    found: list[tuple[int, str]] = []
    for expr, parents in walk(checked.ast.expr):
        kind = expr.WhichOneof("expr_kind")
        if kind == "call_expr":
            found.extend(_call_literal(checked, expr))
        elif kind == "list_expr" and not _in_format(parents):
            found.extend(_list_mismatch(checked, expr))
        elif (
            kind == "struct_expr" and not expr.struct_expr.message_name and not _in_format(parents)
        ):
            found.extend(_map_mismatch(checked, expr))
    found.extend(format_errors(checked))
    found.sort(key=lambda item: item[0])
    return [format_issue(checked.source, offset, msg) for offset, msg in found]


def _call_literal(checked: Checked, expr: Any) -> list[tuple[int, str]]:
    call = expr.call_expr
    if not call.args:
        return []
    arg = call.args[0]
    value = _literal(arg)
    if not isinstance(value, str):
        return []
    ok = True
    if call.function == "matches":
        try:
            compile_pattern(value)
        except EvalError:
            ok = False
    elif call.function == "duration":
        ok = valid_duration(value)
    elif call.function == "timestamp":
        ok = valid_timestamp(value)
    if ok:
        return []
    return [(checked.offset(arg.id), f"invalid {call.function} argument")]


def _in_format(parents: tuple[Any, ...]) -> bool:
    return any(
        p.WhichOneof("expr_kind") == "call_expr" and p.call_expr.function == "format"
        for p in parents
    )


def _unwrap_optional(t: Any) -> Any:
    if t.WhichOneof("type_kind") == "abstract_type" and t.abstract_type.name == "optional_type":
        return t.abstract_type.parameter_types[0]
    return t


def _mismatch(checked: Checked, expr_id: int, expected: Any, actual: Any) -> tuple[int, str]:
    text = f"expected type '{type_text(expected)}' but found '{type_text(actual)}'"
    return checked.offset(expr_id), text


def _list_mismatch(checked: Checked, expr: Any) -> list[tuple[int, str]]:
    optional = set(expr.list_expr.optional_indices)
    first = None
    for i, element in enumerate(expr.list_expr.elements):
        t = checked.type_of(element.id)
        if i in optional:
            t = _unwrap_optional(t)
        if first is None:
            first = t
        elif not equivalent(first, t):
            return [_mismatch(checked, element.id, first, t)]
    return []


def _map_mismatch(checked: Checked, expr: Any) -> list[tuple[int, str]]:
    found = []
    key_type = value_type = None
    for entry in expr.struct_expr.entries:
        kt = checked.type_of(entry.map_key.id)
        vt = checked.type_of(entry.value.id)
        if entry.optional_entry:
            vt = _unwrap_optional(vt)
        if key_type is None:
            key_type, value_type = kt, vt
            continue
        if not equivalent(key_type, kt):
            found.append(_mismatch(checked, entry.map_key.id, key_type, kt))
        if value_type is not None and not equivalent(value_type, vt):
            found.append(_mismatch(checked, entry.value.id, value_type, vt))
    return found


def program_error(checked: Checked) -> str | None:
    """kube compiles literal ``find``/``findAll`` patterns when building the program."""
    for expr, _ in walk(checked.ast.expr):
        if expr.WhichOneof("expr_kind") != "call_expr":
            continue
        call = expr.call_expr
        if call.function in ("find", "findAll") and call.args:
            pattern = _literal(call.args[0])
            if isinstance(pattern, str):
                try:
                    compile_pattern(pattern)
                except EvalError as e:
                    return str(e)
    return None
