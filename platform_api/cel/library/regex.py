"""kube's regex library: ``find`` and ``findAll``, on RE2 (google-re2) as Go's regexp is.

RE2's C++ error texts are reworded as Go's ``regexp/syntax`` errors, which kube shows.  Go's
``FindAllString`` drops an empty match that abuts the previous match; the loop below does too.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

from platform_api.cel.library.common import EvalError
from platform_api.cel.library.decl import Function, member

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False

# RE2 C++ error text -> Go's regexp/syntax ErrorCode text.
_GO_CODES = {
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator",
    "bad repetition argument": "invalid repeat count",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "invalid UTF-8": "invalid UTF-8",
    "pattern too large - compile failed": "expression too large",
    "bad repetition count": "invalid repeat count",
    "invalid repetition size": "invalid repeat count",
}


@functools.lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> Any:
    """Compile as Go's regexp.Compile; raises EvalError with Go's ``error parsing regexp`` text."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as e:
        raise EvalError(go_regex_error(e)) from None


def go_regex_error(error: Exception) -> str:
    text = error.args[0] if error.args else str(error)
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    code, _, arg = str(text).partition(": ")
    return f"error parsing regexp: {_GO_CODES.get(code, code)}: `{arg}`"


def find_all_matches(pattern: Any, text: str, limit: int = -1) -> list[str]:
    out: list[str] = []
    pos, prev_end = 0, -1
    while (limit < 0 or len(out) < limit) and pos <= len(text):
        match = pattern.search(text, pos)
        if match is None:
            break
        start, end = match.span()
        accept = True
        if end == start:
            accept = start != prev_end
            pos = end + 1
        else:
            pos = end
        prev_end = end
        if accept:
            out.append(match.group(0))
    return out


def find(text: str, pattern: str) -> str:
    match = _compiled(pattern).search(text)
    return match.group(0) if match else ""


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    return find_all_matches(_compiled(pattern), text, limit)


def _compiled(pattern: str) -> Any:
    try:
        return compile_pattern(pattern)
    except EvalError as e:
        raise EvalError(f"Illegal regex: {e}") from None


FUNCTIONS = [
    Function("find", [member("string_find_string", ("string", "string"), "string", find)]),
    Function(
        "findAll",
        [
            member("string_find_all_string", ("string", "string"), "list(string)", find_all),
            member(
                "string_find_all_string_int", ("string", "string", "int"), "list(string)", find_all
            ),
        ],
    ),
]
