"""Where a CEL issue stands and how cel-go draws it: line and column of an offset, and
the issue's message, snippet and caret lines (``Error.ToDisplayString``)."""

from __future__ import annotations

import re
import unicodedata

ISSUE_AT = re.compile(r"^ERROR: <input>:(\d+):(\d+): ")


def offset_of(source: str, line: int, column: int) -> int:
    lines = source.split("\n")
    return sum(len(text) + 1 for text in lines[: line - 1]) + column


def location(source: str, offset: int) -> tuple[int, int]:
    """1-based line and 0-based column (in code points) of a code-point offset."""
    line_start = source.rfind("\n", 0, offset) + 1
    return source.count("\n", 0, offset) + 1, offset - line_start


def format_issue(source: str, offset: int, message: str) -> str:
    """One error as cel-go's ``Error.ToDisplayString`` renders it."""
    line, column = location(source, offset)
    text = f"ERROR: <input>:{line}:{column + 1}: {message}"
    snippet = source.split("\n")[line - 1].replace("\t", " ")
    marker = []
    for ch in snippet[:column]:
        wide = unicodedata.east_asian_width(ch) in ("W", "F")
        marker.append("\uff0e" if wide else ".")
    return f"{text}\n | {snippet}\n | {''.join(marker)}^"
