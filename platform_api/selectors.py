"""Label selectors: kube's grammar and error texts (field selectors: fieldselectors.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from platform_api.validation.field import FieldError, aggregate, invalid
from platform_api.validation.names import is_label_value, is_qualified_name


class SelectorError(ValueError):
    pass


# -- label selectors ---------------------------------------------------------------------

_SPECIAL = set("=!(),><")
_WHITESPACE = set(" \t\r\n")
_TOKENS = {
    "!": "!",
    "!=": "!=",
    "(": "(",
    ")": ")",
    ",": ",",
    "=": "=",
    "==": "==",
    ">": ">",
    "<": "<",
}
_KEYWORDS = {"in", "notin"}
_END = "end"
_ID = "id"
_BINARY = "in, notin, =, ==, !=, gt, lt"


# Regular expressions do the per-character work: a 1 MiB selector lexes in milliseconds.
_SKIP = re.compile(r"[ \t\r\n]*")
_WORD = re.compile(r"[^=!(),>< \t\r\n]+")


def _lex(text: str) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    append, skip, word = items.append, _SKIP.match, _WORD.match
    i, n = 0, len(text)
    while True:
        i = skip(text, i).end()  # type: ignore[union-attr]  # "*" always matches
        if i >= n:
            append((_END, ""))
            return items
        found = word(text, i)
        if found is not None:
            lit = found.group()
            append((lit if lit in _KEYWORDS else _ID, lit))
            i = found.end()
            continue
        j = i
        best = ""
        while j < n and text[j] in _SPECIAL:
            if text[i : j + 1] in _TOKENS:
                best = text[i : j + 1]
            elif best:
                break
            j += 1
        if not best:
            append(("error", f"error expected: keyword found '{text[i:j]}'"))
            i = j
            continue
        append((_TOKENS[best], best))
        i += len(best)


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # in notin = == != exists !  > <
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        op = self.op
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        if op in ("in", "=", "=="):
            return self.key in labels and labels[self.key] in self.values
        if op in ("notin", "!="):
            return self.key not in labels or labels[self.key] not in self.values
        if self.key not in labels:
            return False
        try:
            have, want = int(labels[self.key]), int(self.values[0])
        except ValueError:
            return False
        return have > want if op == ">" else have < want


class LabelSelector:
    def __init__(self, requirements: list[Requirement]) -> None:
        self.requirements = sorted(requirements, key=lambda r: r.key)

    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: dict[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)


_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def label_selector_from(spec: dict[str, Any]) -> LabelSelector:
    """A ``metav1.LabelSelector`` (matchLabels, matchExpressions) as a matcher.

    Raises ``SelectorError`` where kube's conversion (``LabelSelectorAsSelector``) fails:
    an unknown operator, or a requirement ``labels.NewRequirement`` refuses (a key or
    value that is not a label's, values where none belong or none where some do).
    """
    requirements = [_requirement(k, "=", (v,)) for k, v in (spec.get("matchLabels") or {}).items()]
    for expression in spec.get("matchExpressions") or []:
        op = _OPERATORS.get(expression.get("operator", ""))
        if op is None:
            raise SelectorError(
                f"{expression.get('operator')!r} is not a valid label selector operator"
            )
        values = tuple(expression.get("values") or ())
        requirements.append(_requirement(expression.get("key", ""), op, values))
    return LabelSelector(requirements)


def _requirement(key: str, op: str, values: tuple[str, ...]) -> Requirement:
    problems = _key_errors(key) if isinstance(key, str) else ["not a string"]
    if op in ("in", "notin") and not values:
        problems.append("for 'in', 'notin' operators, values set can't be empty")
    if op in ("exists", "!") and values:
        problems.append("values set must be empty for exists and does not exist")
    for value in values:
        problems += _value_errors(value) if isinstance(value, str) else ["not a string"]
    if problems:
        raise SelectorError(f"{key}: {'; '.join(problems)}")
    return Requirement(key, op, values)


# Selectors repeat keys and values: check each distinct one once, and the common
# valid shapes with one regular expression.
_is_qualified_name = lru_cache(maxsize=4096)(is_qualified_name)
_is_label_value = lru_cache(maxsize=4096)(is_label_value)
_PLAIN_KEY = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_PLAIN_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


def _key_errors(key: str) -> list[str]:
    return [] if _PLAIN_KEY.fullmatch(key) else _is_qualified_name(key)


def _value_errors(value: str) -> list[str]:
    return [] if _PLAIN_VALUE.fullmatch(value) else _is_label_value(value)


class _LabelParser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[str, str]:
        tok, lit = self.items[self.pos]
        if values and tok in _KEYWORDS:
            tok = _ID
        return tok, lit

    def take(self, values: bool = True) -> tuple[str, str]:
        item = self.peek(values)
        self.pos += 1
        return item

    def parse(self) -> LabelSelector:
        requirements = []
        while True:
            tok, lit = self.peek()
            if tok in (_ID, "!"):
                try:
                    requirements.append(self.requirement())
                except SelectorError as e:
                    raise SelectorError(f"unable to parse requirement: {e}") from None
                tok, lit = self.take()
                if tok == _END:
                    return LabelSelector(requirements)
                if tok != ",":
                    raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
                tok2, lit2 = self.peek()
                if tok2 not in (_ID, "!"):
                    raise SelectorError(f"found '{lit2}', expected: identifier after ','")
            elif tok == _END:
                return LabelSelector(requirements)
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        op = ""
        tok, key = self.take()
        if tok == "!":
            op = "!"
            tok, key = self.take()
        if tok != _ID:
            raise SelectorError(f"found '{key}', expected: identifier")
        errs = _key_errors(key)
        if errs:
            raise SelectorError(str(invalid("<nil>", key, "; ".join(errs))))
        if op == "!" or self.peek()[0] in (_END, ","):  # "!k" ends at its key, as kube's
            return Requirement(key, op or "exists")
        tok, lit = self.take(values=False)
        if tok not in ("in", "notin", "=", "==", "!=", ">", "<"):
            raise SelectorError(f"found '{lit}', expected: {_BINARY}")
        values = self.values() if tok in ("in", "notin") else self.exact()
        return self._checked(key, tok, sorted(values))

    def values(self) -> set[str]:
        tok, lit = self.take()
        if tok != "(":
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok == ")":
            self.take()
            return {""}
        if tok not in (_ID, ","):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        found: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok == _ID:
                found.add(lit)
                tok2, lit2 = self.peek()
                if tok2 == ")":
                    self.take()
                    return found
                if tok2 != ",":
                    raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            elif tok == ",":
                if not found:
                    found.add("")
                tok2, _ = self.peek()
                if tok2 == ")":
                    found.add("")
                    self.take()
                    return found
                if tok2 == ",":
                    found.add("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact(self) -> set[str]:
        tok, _ = self.peek()
        if tok in (_END, ","):
            return {""}
        tok, lit = self.take()
        if tok == _ID:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")

    @staticmethod
    def _checked(key: str, op: str, values: list[str]) -> Requirement:
        errs: list[FieldError] = []
        if op in ("in", "notin") and not values:
            errs.append(
                invalid("values", values, "for 'in', 'notin' operators, values set can't be empty")
            )
        if op in ("=", "==", "!=") and len(values) != 1:
            errs.append(
                invalid("values", values, "exact-match compatibility requires one single value")
            )
        if op in (">", "<"):
            try:
                int(values[0])
            except ValueError:
                errs.append(
                    invalid(
                        "values[0]",
                        values[0],
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
        for i, value in enumerate(values):
            msgs = _value_errors(value)
            if msgs:
                errs.append(invalid(f"values[{i}][{key}]", value, "; ".join(msgs)))
        if errs:
            raise SelectorError(aggregate(errs))
        return Requirement(key, op, tuple(values))


# One requirement without a value set ("k", "!k", "k=v", "k!=v", "k>1" ...).
_SIMPLE_TERM = re.compile(
    r"[ \t\r\n]*(!?)[ \t\r\n]*([^=!(),>< \t\r\n]+)[ \t\r\n]*"
    r"(?:(==|=|!=|>|<)[ \t\r\n]*([^=!(),>< \t\r\n]*)[ \t\r\n]*)?"
)


def parse_label_selector(text: str) -> LabelSelector:
    """``labels.Parse``.  Selectors without value sets take a fast path (C-speed split,
    one regular expression and one check per distinct term), so a 1 MiB selector of
    a few hundred thousand terms parses well under a second; the rest are lexed."""
    if "(" not in text and ")" not in text:
        simple = _parse_simple(text)
        if simple is not None:
            return simple
    return _LabelParser(text).parse()


def _parse_simple(text: str) -> LabelSelector | None:
    """The selector, or None when some term needs the full parser (which also words
    every error; a bad term is parsed alone, as it would fail the same in context)."""
    requirements = []
    for term in dict.fromkeys(text.split(",")):  # distinct terms, in order
        found = _SIMPLE_TERM.fullmatch(term)
        if found is None:
            return None
        negated, key, op, value = found.groups()
        if (negated and op) or key in _KEYWORDS or value in _KEYWORDS:
            return None
        if _key_errors(key):
            _LabelParser(term).parse()  # raises kube's words for this key
            return None
        if not op:
            requirements.append(Requirement(key, "!" if negated else "exists"))
            continue
        if op in ("=", "==", "!=") and _PLAIN_VALUE.fullmatch(value):
            requirements.append(Requirement(key, op, (value,)))
            continue
        try:
            requirements.append(_LabelParser._checked(key, op, [value or ""]))
        except SelectorError as e:
            raise SelectorError(f"unable to parse requirement: {e}") from None
    return LabelSelector(requirements)
