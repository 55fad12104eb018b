"""The first syntax error of a JSON body, worded as kube-apiserver v1.36 words it.

kube reads a body's apiVersion and kind with Go's ``encoding/json``, which checks the
whole value before decoding any of it; since Go 1.27 that package runs on
``encoding/json/v2``, whose ``jsontext`` scanner finds the error and whose v1 layer
rewords it (``after object value`` becomes ``after object key:value pair``, the
``(expecting ...)`` tails are cut but for literals').  A body that ends early is
``unexpected end of JSON input`` wherever it ends, a control character or bad escape
inside a string is named as inside a string, and an invalid character is named by the
UTF-8 rune it starts (``'é'``), or by its byte when it starts none (``'\\xe7'``).

kube's patch decoding runs on sigs.k8s.io/json, a copy of the v1 package with its own
scanner, whose words differ (``legacy``): ``in string literal``, ``in string escape
code``, ``after decimal point in numeric literal``; a character named by its byte read
as a rune (``'Ã'`` for the first byte of ``é``); and a body that ends inside a literal,
number or escape is refused for the space the scanner feeds itself at the end
(``invalid character ' ' in literal null (expecting 'l')``).

Python's parser finds the same errors (it refuses what Go refuses but NaN and
Infinity, and bodies reach it with bad UTF-8 replaced) but words them its own way, so
this scan runs only once that parser has refused a body.  Iterative: bodies reach it
already bounded in depth, but a stack costs nothing here.
"""

from __future__ import annotations

import re

from platform_api.gotext import quote_bytes, quote_rune

END = "unexpected end of JSON input"
_QUOTE = "'"

_SPACE = re.compile(rb"[ \t\r\n]*")
_PLAIN = re.compile(rb'[^"\\\x00-\x1f\x80-\xff]*')  # string bytes with nothing to check
_HEX = b"0123456789abcdefABCDEF"
_ESCAPES = b'"\\/bfnrt'
_DIGITS = b"0123456789"


class _Refused(Exception):
    """The scan stops at the first error; its message is Go's."""


def syntax_error(data: bytes, legacy: bool = False) -> str | None:
    """Go's message for the first syntax error in ``data``, or None if it has none;
    ``legacy``: as encoding/json v1's own scanner words it."""
    try:
        _Scanner(data, legacy).document()
    except _Refused as refused:
        return str(refused)
    return None


def _invalid_character(data: bytes, pos: int, where: str, legacy: bool = False) -> _Refused:
    """``invalid character 'x' <where>``, the character being the rune at ``pos`` (its
    byte as a rune, ``legacy``); past the end, the space v1 feeds itself there."""
    if pos >= len(data):
        return _Refused(f"invalid character ' ' {where}")
    if legacy:
        return _Refused(f"invalid character '{quote_rune(chr(data[pos]), _QUOTE)}' {where}")
    return _Refused(f"invalid character {_quoted_rune(data, pos)} {where}")


def _quoted_rune(data: bytes, pos: int) -> str:
    size = _rune_size(data, pos)
    if size == 0:
        return f"'\\x{data[pos]:x}'"
    return "'" + quote_rune(data[pos : pos + size].decode(), "'") + "'"


def _rune_size(data: bytes, pos: int) -> int:
    """Bytes of the valid UTF-8 rune at ``pos``; 0 for a byte that starts none."""
    first = data[pos]
    if first < 0x80:
        return 1
    size = 2 if first < 0xE0 else 3 if first < 0xF0 else 4
    try:
        data[pos : pos + size].decode()
    except UnicodeDecodeError:
        return 0
    return size


def _cut_short(data: bytes, pos: int) -> bool:
    """Whether the bytes from ``pos`` to the end are the valid start of a longer rune
    (``utf8.FullRune`` is false): then the body ended inside it."""
    try:
        data[pos:].decode()
    except UnicodeDecodeError as e:
        return e.reason == "unexpected end of data" and e.start == 0
    return False


def _escape_error(text: bytes) -> _Refused:
    """``InvalidTextError`` of an escape sequence: in backquotes, or quoted when it
    holds a backquote, a space, a byte that is no UTF-8 or a character not printed."""
    shown = text.decode("utf-8", "replace")
    if any(c in "`\ufffd" or c.isspace() or not c.isprintable() for c in shown):
        return _Refused(f"invalid escape sequence {quote_bytes(text)} in string")
    return _Refused(f"invalid escape sequence `{shown}` in string")


def _escaped_utf16_prefix(rest: bytes) -> bool:
    """Whether ``rest`` (shorter than six bytes) could still become a ``\\uXXXX``."""
    return all(
        (i != 0 or c == 0x5C) and (i != 1 or c == 0x75) and (i < 2 or c in _HEX)
        for i, c in enumerate(rest)
    )


class _Scanner:
    def __init__(self, data: bytes, legacy: bool) -> None:
        self.data = data
        self.end = len(data)
        self.legacy = legacy

    def _refuse(self, pos: int, where: str, v1_where: str = "") -> _Refused:
        """The error at ``pos``, worded for the scanner in use; a v1 scanner has its own
        words for some (``v1_where``) and at the end sees a space (v2: the end)."""
        if not self.legacy:
            return _Refused(END) if pos >= self.end else _invalid_character(self.data, pos, where)
        return _invalid_character(self.data, pos, v1_where or where, legacy=True)

    def _space(self, pos: int) -> int:
        """Past the whitespace at ``pos``; the body may not end there."""
        pos = _SPACE.match(self.data, pos).end()  # type: ignore[union-attr]
        if pos >= self.end:
            raise _Refused(END)
        return pos

    def document(self) -> None:
        pos = self._value(self._space(0))
        pos = _SPACE.match(self.data, pos).end()  # type: ignore[union-attr]
        if pos < self.end:
            raise self._refuse(pos, "after top-level value")

    def _value(self, pos: int) -> int:
        """Past the value at ``pos`` (nested objects and arrays on a stack)."""
        data, stack = self.data, bytearray()
        while True:
            opened = data[pos]
            if opened in b"{[":
                pos = self._space(pos + 1)
                if data[pos] == opened + 2:  # } or ] (two past { and [): empty
                    pos += 1
                else:
                    stack.append(opened)
                    pos = self._space(self._member_start(pos) if opened == 0x7B else pos)
                    continue
            else:
                pos = self._scalar(pos)
            while stack:  # after a value inside a container
                pos = self._space(pos)
                inside, found = stack[-1], data[pos]
                if found == 0x2C:  # ,
                    pos = self._space(pos + 1)
                    if inside == 0x7B:
                        pos = self._space(self._member_start(pos))
                    break
                if found == inside + 2:
                    stack.pop()
                    pos += 1
                    continue
                where = "after object key:value pair" if inside == 0x7B else "after array element"
                raise self._refuse(pos, where)
            else:
                return pos

    def _member_start(self, pos: int) -> int:
        """Past an object's member name and its colon."""
        if self.data[pos] != 0x22:
            raise self._refuse(pos, "looking for beginning of object key string")
        pos = self._space(self._string(pos))
        if self.data[pos] != 0x3A:
            raise self._refuse(pos, "after object key")
        return pos + 1

    def _scalar(self, pos: int) -> int:
        first = self.data[pos]
        if first == 0x22:
            return self._string(pos)
        if first == 0x2D or first in _DIGITS:
            return self._number(pos)
        literal = {0x74: "true", 0x66: "false", 0x6E: "null"}.get(first)
        if literal is None:
            raise self._refuse(pos, "looking for beginning of value")
        for i, expected in enumerate(literal.encode()):
            if pos + i >= self.end or self.data[pos + i] != expected:
                why = f"in literal {literal} (expecting '{chr(expected)}')"
                raise self._refuse(pos + i, why)
        return pos + len(literal)

    def _digits(self, pos: int, v1_where: str = "") -> int:
        """Past one digit or more at ``pos``."""
        if pos >= self.end or self.data[pos] not in _DIGITS:
            raise self._refuse(pos, "in numeric literal", v1_where)
        while pos < self.end and self.data[pos] in _DIGITS:
            pos += 1
        return pos

    def _number(self, pos: int) -> int:
        data = self.data
        if data[pos] == 0x2D:
            pos += 1
        if pos < self.end and data[pos] == 0x30:  # a leading 0 stands alone
            pos += 1
        else:
            pos = self._digits(pos)
        if pos < self.end and data[pos] == 0x2E:  # .
            pos = self._digits(pos + 1, "after decimal point in numeric literal")
        if pos < self.end and data[pos] in b"eE":
            pos += 1
            if pos < self.end and data[pos] in b"+-":
                pos += 1
            pos = self._digits(pos, "in exponent of numeric literal")
        return pos

    def _string(self, pos: int) -> int:
        """Past the string whose quote is at ``pos``; bytes that are no UTF-8 pass."""
        data, end = self.data, self.end
        pos += 1
        while True:
            pos = _PLAIN.match(data, pos).end()  # type: ignore[union-attr]
            if pos >= end:
                raise _Refused(END)
            found = data[pos]
            if found == 0x22:
                return pos + 1
            if found == 0x5C:
                pos = self._escape(pos)
            elif found < 0x20:
                raise self._refuse(pos, "in string", "in string literal")
            elif self.legacy:  # v1 reads bytes
                pos += 1
            else:
                size = _rune_size(data, pos)
                if size == 0 and _cut_short(data, pos):
                    raise _Refused(END)
                pos += size or 1

    def _escape(self, pos: int) -> int:
        if self.legacy:
            return self._v1_escape(pos)
        data, end = self.data, self.end
        if pos + 2 > end:
            raise _Refused(END)
        kind = data[pos + 1]
        if kind in _ESCAPES:
            return pos + 2
        if kind != 0x75:  # u
            raise _escape_error(data[pos : pos + 2])
        if pos + 6 > end:
            if _escaped_utf16_prefix(data[pos:]):
                raise _Refused(END)
            raise _escape_error(data[pos:])
        if any(c not in _HEX for c in data[pos + 2 : pos + 6]):
            raise _escape_error(data[pos : pos + 6])
        return pos + 6

    def _v1_escape(self, pos: int) -> int:
        """v1 names the first byte that breaks an escape (at the end, its space)."""
        kind = self.data[pos + 1] if pos + 1 < self.end else None
        if kind is None or (kind not in _ESCAPES and kind != 0x75):
            raise self._refuse(pos + 1, "in string escape code")
        if kind != 0x75:
            return pos + 2
        for hex_at in range(pos + 2, pos + 6):
            if hex_at >= self.end or self.data[hex_at] not in _HEX:
                raise self._refuse(hex_at, "in \\u hexadecimal character escape")
        return pos + 6
