"""Parsing kube's JSONPath templates into the tree of ``nodes``.

The grammar is client-go's hand-written scanner (``util/jsonpath/parser.go``), whose
quirks clients can see, so they are kept: ``['a.b']`` is re-parsed as ``.a.b``, an
array selection ends at the first ``]``, ``[]`` means ``[0]``, a filter's operator is
any run of ``!<>=`` (checked only when evaluated), and a backslash escapes the next
character of a field name and is then dropped.  Errors carry kube's texts.
"""

from __future__ import annotations

import math
import re
from typing import Any

from platform_api.jsonpath.gotext import GoInt
from platform_api.jsonpath.nodes import (
    ArrayNode,
    BoolNode,
    FieldNode,
    FilterNode,
    FloatNode,
    IdentifierNode,
    IntNode,
    ListNode,
    Param,
    RecursiveNode,
    TextNode,
    UnionNode,
    WildcardNode,
)

_TERMINATORS = frozenset(" \t\r\n.,[]$@{}")
_DICT_KEY = re.compile(r"'([^']*)'")
_SLICE = re.compile(r"(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?")
_FILTER = re.compile(r"([^!<>=]+)([!<>=]+)(.+?)")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")
_INT64 = 1 << 63
_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_HEX_SIZES = {"x": 2, "u": 4, "U": 8}


class JSONPathError(ValueError):
    """A template that does not parse or an evaluation that fails; ``str()`` is kube's text.

    ``partial`` is what kube's evaluator returned beside the error: an existence filter
    (``[?(@.a)]``) ignores the error and keeps the element when that is not empty.
    """

    def __init__(self, message: str, partial: list[Any] | None = None) -> None:
        super().__init__(message)
        self.partial: list[Any] = [] if partial is None else partial


def parse_tree(template: str) -> ListNode:
    """The template's root list: text nodes and one list per ``{...}`` action."""
    return _Parser(template).parse()


def _parse_action(text: str) -> ListNode:
    """An action's inner text parsed alone (union members, dict keys, filter operands)."""
    root = _Parser("{" + text + "}").parse()
    first = root.nodes[0]
    assert isinstance(first, ListNode)
    return first


def _alphanumeric(char: str) -> bool:
    return char == "_" or char.isalpha() or char.isdecimal()


def _go_rune(char: str) -> str:
    """Go's ``%#U``: the code point, then the character itself when printable."""
    code = f"U+{ord(char):04X}"
    return f"{code} '{char}'" if char.isprintable() else code


class _Parser:
    """One pass over a template; ``start`` marks the text not yet turned into a node."""

    __slots__ = ("pos", "root", "start", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.start = 0
        self.root = ListNode()

    def parse(self) -> ListNode:
        text, root = self.text, self.root
        action: ListNode | None = None
        while True:
            if action is not None:
                action = self._action(action)
                continue
            brace = text.find("{", self.pos)
            if brace < 0:
                if len(text) > self.start:
                    root.nodes.append(TextNode(text[self.start :]))
                return root
            if brace > self.start:
                root.nodes.append(TextNode(text[self.start : brace]))
            self.pos = self.start = brace + 1
            action = ListNode()
            root.nodes.append(action)

    def _action(self, cur: ListNode) -> ListNode | None:
        """Scan one token inside braces; None once the closing brace ends the action."""
        text, pos = self.text, self.pos
        if text.startswith("}", pos):
            self.pos = self.start = pos + 1
            return None
        if text.startswith("[?(", pos):
            self._filter(cur)
            return cur
        if text.startswith("..", pos):
            self._recursive(cur)
            return cur
        if pos >= len(text) or text[pos] in "\r\n":
            raise JSONPathError("unclosed action")
        char = text[pos]
        self.pos = pos + 1
        if char in " @$":  # blanks, and the current object (the only object there is)
            self.start = self.pos
        elif char == "[":
            self._array(cur)
        elif char in "\"'":
            self._quote(cur, char)
        elif char == ".":
            self._field(cur)
        elif char in "+-" or char.isdecimal():
            self.pos = pos
            self._number(cur)
        elif _alphanumeric(char):
            self.pos = pos
            self._identifier(cur)
        else:
            raise JSONPathError(f"unrecognized character in action: {_go_rune(char)}")
        return cur

    def _take(self, end: int) -> str:
        value = self.text[self.start : end]
        self.pos = self.start = end
        return value

    def _field(self, cur: ListNode) -> None:
        text, end = self.text, len(self.text)
        self.start = pos = self.pos
        while pos < end:
            char = text[pos]
            if char == "\\":
                pos += 2
                continue
            if char in _TERMINATORS:
                break
            pos += 1
        value = self._take(min(pos, end))
        if value == "*":
            cur.nodes.append(WildcardNode())
        else:
            cur.nodes.append(FieldNode(value.replace("\\", "")))

    def _identifier(self, cur: ListNode) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] not in _TERMINATORS:
            pos += 1
        value = self._take(pos)
        if value in ("true", "false"):
            cur.nodes.append(BoolNode(value == "true"))
        else:
            cur.nodes.append(IdentifierNode(value))

    def _recursive(self, cur: ListNode) -> None:
        if cur.nodes and isinstance(cur.nodes[-1], RecursiveNode):
            raise JSONPathError("invalid multiple recursive descent")
        self.pos = self.start = self.pos + 2
        cur.nodes.append(RecursiveNode())
        if self.pos < len(self.text) and _alphanumeric(self.text[self.pos]):
            self._field(cur)

    def _number(self, cur: ListNode) -> None:
        text, pos = self.text, self.pos
        if pos < len(text) and text[pos] in "+-":
            pos += 1
        while pos < len(text) and (text[pos] == "." or text[pos].isdecimal()):
            pos += 1
        value = self._take(pos)
        if _INT.fullmatch(value) and -_INT64 <= int(value) < _INT64:
            cur.nodes.append(IntNode(GoInt(value)))
            return
        if _FLOAT.fullmatch(value) and not math.isinf(float(value)):
            cur.nodes.append(FloatNode(float(value)))
            return
        raise JSONPathError(f"cannot parse number {value}")

    def _array(self, cur: ListNode) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] not in "]\n":
            pos += 1
        if pos >= len(text) or text[pos] == "\n":
            raise JSONPathError("unterminated array")
        inner = self._take(pos + 1)[1:-1]
        if inner == "*":
            inner = ":"
        members = inner.split(",")
        if len(members) > 1:
            union = [_parse_action(f"[{member.strip(' ')}]") for member in members]
            cur.nodes.append(UnionNode(union))
            return
        key = _DICT_KEY.fullmatch(inner)
        if key is not None:
            cur.nodes.extend(_parse_action("." + key.group(1)).nodes)
            return
        cur.nodes.append(_slice(inner))

    def _filter(self, cur: ListNode) -> None:
        text = self.text
        self.pos = self.start = pos = self.pos + 3
        quoted = closed = False
        pair = ""
        while True:
            if pos >= len(text) or text[pos] == "\n":
                raise JSONPathError("unterminated filter")
            char = text[pos]
            pos += 1
            if char in "\"'":
                if not quoted:
                    quoted, pair = True, char
                elif char == pair and text[pos - 2] != "\\":
                    closed = True
            elif char == ")" and quoted == closed:
                break
        if pos >= len(text) or text[pos] != "]":
            raise JSONPathError("unclosed array expect ]")
        body = self._take(pos + 1)[:-2]
        parts = _FILTER.fullmatch(body)
        if parts is None:
            cur.nodes.append(FilterNode(_parse_action(body), ListNode(), "exists"))
        else:
            left, right = _parse_action(parts.group(1)), _parse_action(parts.group(3))
            cur.nodes.append(FilterNode(left, right, parts.group(2)))

    def _quote(self, cur: ListNode, quote: str) -> None:
        text, pos = self.text, self.pos
        while True:
            if pos >= len(text) or text[pos] == "\n":
                raise JSONPathError("unterminated quoted string")
            pos += 1
            if text[pos - 1] == quote and text[pos - 2] != "\\":
                break
        value = self._take(pos)
        try:
            cur.nodes.append(TextNode(unquote(value)))
        except ValueError:
            raise JSONPathError(f"unquote string {value} error invalid syntax") from None


def _slice(inner: str) -> ArrayNode:
    """``start:end:step``; a lone index ``i`` gets the derived end ``i+1``."""
    match = _SLICE.fullmatch(inner)
    if match is None:
        raise JSONPathError(f"invalid array index {inner}")
    params: list[Param] = []
    for i, group in enumerate(match.groups()):
        text = group or ""
        if i > 0 and text:
            text = text[1:]
            if not text:
                params.append(Param())
                continue
        if text:
            if not _INT.fullmatch(text) or not -_INT64 <= int(text) < _INT64:
                raise JSONPathError(f"array index {text} is not a number")
            params.append(Param(int(text), True))
        elif i == 1:
            params.append(Param(params[0].value + 1, True, True))
        else:
            params.append(Param())
    return ArrayNode(*params)


def unquote(quoted: str) -> str:
    """Go's ``strconv.Unquote`` that also takes single quotes; ValueError when invalid."""
    if len(quoted) < 2 or quoted[0] != quoted[-1] or quoted[0] not in "\"'":
        raise ValueError(quoted)
    quote, body = quoted[0], quoted[1:-1]
    if "\\" not in body and quote not in body:
        return body
    out = bytearray()
    i = 0
    while i < len(body):
        char = body[i]
        if char == quote:
            raise ValueError(quoted)
        if char != "\\":
            out += char.encode()
            i += 1
            continue
        if i + 1 >= len(body):
            raise ValueError(quoted)
        escape = body[i + 1]
        i += 2
        if escape in _ESCAPES:
            out.append(_ESCAPES[escape])
        elif escape in _HEX_SIZES:
            digits = body[i : i + _HEX_SIZES[escape]]
            if len(digits) < _HEX_SIZES[escape] or not _HEX_DIGITS.issuperset(digits):
                raise ValueError(quoted)
            i += len(digits)
            code = int(digits, 16)
            if escape == "x":
                out.append(code)  # one raw byte, possibly not UTF-8
            elif code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise ValueError(quoted)
            else:
                out += chr(code).encode()
        elif escape in "01234567":
            digits = body[i - 1 : i + 2]
            if len(digits) < 3 or not set(digits) <= set("01234567") or int(digits, 8) > 255:
                raise ValueError(quoted)
            out.append(int(digits, 8))
            i += 2
        elif escape in "'\"" and escape == quote:
            out += escape.encode()
        else:
            raise ValueError(quoted)
    # Go keeps invalid UTF-8 bytes as they are; a Python string takes U+FFFD instead.
    return out.decode("utf-8", "replace")
