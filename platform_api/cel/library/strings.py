"""cel-go's strings extension at version 2 (kube 1.29+), implemented here.

cel-cpp's own strings extension is not used: it declares ``indexOf``/``lastIndexOf`` for strings
only, and kube's lists library adds list overloads to those same functions, which cel-cpp refuses
to merge.  Indices count Unicode code points, as cel-go's runes do.
"""

from __future__ import annotations

from typing import Any

from platform_api.cel.library.common import EvalError
from platform_api.cel.library.decl import Function, glob, member
from platform_api.cel.library.formatting import format_string, quote

# Go's unicode.IsSpace: Latin-1 spaces plus the Unicode White_Space property (Python's
# str.isspace also counts the ASCII file separators, which Go does not).
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise EvalError(f"index out of range: {i}")
    return s[i] if i < len(s) else ""


def index_of(s: str, sub: str, offset: int = 0) -> int:
    if sub == "":
        return offset
    if offset < 0:
        raise EvalError(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    return s.find(sub, offset)


def last_index_of(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        if sub == "":
            return len(s)
        if len(s.encode()) < len(sub.encode()):
            return -1
        offset = len(s) - 1
    if sub == "":
        return offset
    if offset < 0:
        raise EvalError(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    return s.rfind(sub, 0, min(offset, len(s) - len(sub)) + len(sub))


def replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new, n if n >= 0 else -1)


def split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if 0 < n < len(chars):
            return [*chars[: n - 1], "".join(chars[n - 1 :])]
        return chars
    return s.split(sep, n - 1 if n > 0 else -1)


def substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise EvalError(f"index out of range: {start}")
        return s[start:]
    if start > end:
        raise EvalError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(s):
        raise EvalError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise EvalError(f"index out of range: {end}")
    return s[start:end]


def join(items: list[Any], sep: str = "") -> str:
    for item in items:
        if not isinstance(item, str):
            raise EvalError(f"join: invalid input: {item}")
    return sep.join(items)


FUNCTIONS = [
    Function("charAt", [member("string_char_at_int", ("string", "int"), "string", char_at)]),
    Function(
        "indexOf",
        [
            member("string_index_of_string", ("string", "string"), "int", index_of),
            member("string_index_of_string_int", ("string", "string", "int"), "int", index_of),
        ],
    ),
    Function(
        "lastIndexOf",
        [
            member("string_last_index_of_string", ("string", "string"), "int", last_index_of),
            member(
                "string_last_index_of_string_int", ("string", "string", "int"), "int", last_index_of
            ),
        ],
    ),
    Function(
        "lowerAscii",
        [
            member("string_lower_ascii", ("string",), "string", lambda s: s.translate(_LOWER)),
        ],
    ),
    Function(
        "upperAscii",
        [
            member("string_upper_ascii", ("string",), "string", lambda s: s.translate(_UPPER)),
        ],
    ),
    Function(
        "replace",
        [
            member(
                "string_replace_string_string", ("string", "string", "string"), "string", replace
            ),
            member(
                "string_replace_string_string_int",
                ("string", "string", "string", "int"),
                "string",
                replace,
            ),
        ],
    ),
    Function(
        "split",
        [
            member("string_split_string", ("string", "string"), "list(string)", split),
            member("string_split_string_int", ("string", "string", "int"), "list(string)", split),
        ],
    ),
    Function(
        "substring",
        [
            member("string_substring_int", ("string", "int"), "string", substring),
            member("string_substring_int_int", ("string", "int", "int"), "string", substring),
        ],
    ),
    Function("trim", [member("string_trim", ("string",), "string", lambda s: s.strip(_GO_SPACE))]),
    Function("format", [member("string_format", ("string", "list(dyn)"), "string", format_string)]),
    Function("strings.quote", [glob("strings_quote", ("string",), "string", quote)]),
    Function(
        "join",
        [
            member("list_join", ("list(string)",), "string", join),
            member("list_join_string", ("list(string)", "string"), "string", join),
        ],
    ),
]
