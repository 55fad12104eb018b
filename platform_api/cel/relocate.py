"""Issues cel-cpp places or words otherwise than cel-go, moved to where cel-go reports
them and redrawn: an undeclared qualified name at its first part, an undeclared object
literal type at its brace (and nothing inside it), a two-variable comprehension's
repeated name at the second variable."""

from __future__ import annotations

import re

from platform_api.cel.issuetext import ISSUE_AT, format_issue, offset_of

_QUALIFIED = re.compile(
    r"^ERROR: <input>:(\d+):(\d+): undeclared reference to '([\w]+)\.[\w.]+' \(in container ''\)$"
)
_SAME_VARIABLES = re.compile(
    r"^ERROR: <input>:(\d+):(\d+): \w+\(\) second variable must be different from the first "
    r"variable$"
)
_NAME_THEN_COMMA = re.compile(r"(\w+)\s*,\s*")


def _qualified_reference(match: re.Match[str], source: str) -> tuple[int, str]:
    """cel-cpp reports an undeclared ``a.b.c`` whole, at its last select (inside ``has()``
    at the macro's parenthesis); cel-go reports the first name ``a``, where it stands."""
    row, column, first = int(match.group(1)), int(match.group(2)), match.group(3)
    end = offset_of(source, row, column - 1)
    starts = [m.start() for m in re.finditer(rf"(?<![\w.]){re.escape(first)}\b", source)]
    before = [start for start in starts if start <= end]
    after = [start for start in starts if start > end]
    offset = before[-1] if before else (after[0] if after else end)
    return offset, f"undeclared reference to '{first}' (in container '')"


def _same_variables(match: re.Match[str], source: str) -> tuple[int, str]:
    """cel-cpp reports a two-variable comprehension's repeated name at the first variable;
    cel-go at the second, as a duplicate."""
    offset = offset_of(source, int(match.group(1)), int(match.group(2)) - 1)
    named = _NAME_THEN_COMMA.match(source, offset)
    second = named.end() if named else offset
    return second, f"duplicate variable name: {named.group(1) if named else ''}"


_REFERENCE = re.compile(
    r"^ERROR: <input>:(\d+):(\d+): undeclared reference to '([\w.]+)' \(in container ''\)$"
)


def _struct_or_qualified(match: re.Match[str], source: str) -> tuple[int, str]:
    """An undeclared message type of an object literal (``Foo.Bar{...}``): cel-cpp
    reports it at its name, cel-go at the brace.  Other undeclared names as
    ``_qualified_reference`` places them (a plain one stays where it is)."""
    start = offset_of(source, int(match.group(1)), int(match.group(2)) - 1)
    parts = match.group(3).split(".")
    literal = re.compile(r"\s*\.\s*".join(map(re.escape, parts)) + r"\s*\{")
    found = literal.match(source, start)
    if found is not None:
        return found.end() - 1, f"undeclared reference to '{match.group(3)}' (in container '')"
    qualified = _QUALIFIED.match(match.group(0))
    if qualified is not None:
        return _qualified_reference(qualified, source)
    return start, f"undeclared reference to '{match.group(3)}' (in container '')"


_RELOCATED = [(_REFERENCE, _struct_or_qualified), (_SAME_VARIABLES, _same_variables)]


def relocated(lines: list[str], source: str) -> list[str]:
    """Issues cel-go places and words otherwise, redrawn with their snippet lines.  An
    object literal of an undeclared type is all cel-go checks of it: the issues within
    its braces go."""
    issues: list[tuple[int | None, list[str]]] = []  # (offset if relocated, its lines)
    unchecked: list[tuple[int, int]] = []  # the braces of undeclared types' literals
    skip = 0
    for line in lines:
        if skip:
            skip -= 1
            continue
        for pattern, place in _RELOCATED:
            match = pattern.match(line)
            if match is not None:
                offset, message = place(match, source)
                issues.append((offset, format_issue(source, offset, message).split("\n")))
                if pattern is _REFERENCE and source[offset : offset + 1] == "{":
                    unchecked.append((offset, _closing(source, offset)))
                skip = 2  # cel-cpp's snippet and caret lines of the replaced issue
                break
        else:
            issues.append((_issue_offset(line, source), [line]))
    out: list[str] = []
    for at, issue in issues:
        if at is None or not any(a < at < b for a, b in unchecked):
            out.extend(issue)
    return out


def _issue_offset(line: str, source: str) -> int | None:
    """Where an issue's first line says it stands (None for a snippet or caret line)."""
    match = ISSUE_AT.match(line)
    if match is None:
        return None
    return offset_of(source, int(match.group(1)), int(match.group(2)) - 1)


def _closing(source: str, brace: int) -> int:
    """The offset of the brace that closes the one at ``brace`` (strings not skipped:
    a close enough bound for dropping issues)."""
    depth = 0
    for i in range(brace, len(source)):
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        if depth == 0:
            return i
    return len(source)
