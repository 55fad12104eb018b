"""Label and field selectors: kube's grammars, error texts and per-kind field labels."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from platform_api.validation.field import FieldError, aggregate, go_quote, invalid
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

    Raises ``SelectorError`` on an unknown operator, as kube's conversion fails.
    """
    requirements = [Requirement(k, "=", (v,)) for k, v in (spec.get("matchLabels") or {}).items()]
    for expression in spec.get("matchExpressions") or []:
        op = _OPERATORS.get(expression.get("operator", ""))
        if op is None:
            raise SelectorError(
                f"{expression.get('operator')!r} is not a valid label selector operator"
            )
        values = tuple(expression.get("values") or ())
        requirements.append(Requirement(expression.get("key", ""), op, values))
    return LabelSelector(requirements)


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
        if self.peek()[0] in (_END, ","):
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


# -- field selectors ---------------------------------------------------------------------


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, current, escaped = [], [], False
    for ch in text:
        if escaped:
            current.append("\\" + ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if escaped:
        current.append("\\")
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    out, escaped = [], False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


@dataclass(frozen=True)
class FieldTerm:
    field: str
    value: str
    negate: bool


class FieldSelector:
    def __init__(self, terms: list[FieldTerm]) -> None:
        self.terms = terms

    def empty(self) -> bool:
        return not self.terms

    def matches(self, fields: dict[str, str]) -> bool:
        return all((fields.get(t.field, "") == t.value) != t.negate for t in self.terms)

    def exact(self, name: str) -> str | None:
        for term in self.terms:
            if term.field == name and not term.negate:
                return term.value
        return None


def parse_field_selector(text: str) -> FieldSelector:
    terms = []
    for part in sorted(_split_unescaped(text, ",")):
        if not part:
            continue
        for i in range(len(part)):
            op = next((o for o in ("!=", "==", "=") if part.startswith(o, i)), None)
            if op is not None and (i == 0 or part[i - 1] != "\\"):
                lhs, rhs = part[:i], part[i + len(op) :]
                terms.append(FieldTerm(lhs, _unescape(rhs), op == "!="))
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
    return FieldSelector(terms)


# -- per-kind field labels ----------------------------------------------------------------

FieldGetter = Callable[[dict[str, Any]], str]


def _path(*keys: str) -> FieldGetter:
    def get(obj: dict[str, Any]) -> str:
        value: Any = obj
        for key in keys:
            if not isinstance(value, dict):
                return ""
            value = value.get(key)
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def _pod_ips(obj: dict[str, Any]) -> str:
    ips = obj.get("status", {}).get("podIPs") or []
    return ",".join(ip.get("ip", "") for ip in ips)


_INVOLVED = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
_EVENT_FIELDS: dict[str, FieldGetter] = {
    **{f"involvedObject.{k}": _path("involvedObject", k) for k in _INVOLVED},
    "reason": _path("reason"),
    "reportingComponent": _path("reportingComponent"),
    "source": _path("source", "component"),
    "type": _path("type"),
}
_NEW_EVENT_FIELDS: dict[str, FieldGetter] = {
    **{f"regarding.{k}": _path("regarding", k) for k in _INVOLVED},
    "reason": _path("reason"),
    "reportingController": _path("reportingController"),
    "type": _path("type"),
}
FIELD_LABELS: dict[tuple[str, str], dict[str, FieldGetter]] = {
    ("", "pods"): {
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: "true" if o.get("spec", {}).get("hostNetwork") else "false",
        "status.phase": _path("status", "phase"),
        "status.podIP": _path("status", "podIP"),
        "status.podIPs": _pod_ips,
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    ("", "nodes"): {
        "spec.unschedulable": lambda o: (
            "true" if o.get("spec", {}).get("unschedulable") else "false"
        )
    },
    ("", "secrets"): {"type": _path("type")},
    ("", "namespaces"): {"status.phase": _path("status", "phase")},
    ("", "events"): _EVENT_FIELDS,
    ("events.platform.io", "events"): _NEW_EVENT_FIELDS,
    ("", "replicationcontrollers"): {"status.replicas": _path("status", "replicas")},
    ("apps", "replicasets"): {"status.replicas": _path("status", "replicas")},
    ("batch", "jobs"): {"status.successful": _path("status", "succeeded")},
}


def field_getters(group: str, plural: str) -> dict[str, FieldGetter]:
    getters: dict[str, FieldGetter] = {
        "metadata.name": _path("metadata", "name"),
        "metadata.namespace": _path("metadata", "namespace"),
    }
    getters.update(FIELD_LABELS.get((group, plural), {}))
    return getters


# Built-in kinds with a field-label conversion of their own in kube (AddFieldLabelConversionFunc);
# other built-in kinds get apimachinery's default one, which words the refusal differently.
CONVERTED_FIELD_LABELS = frozenset(
    {
        ("", "pods"),
        ("", "nodes"),
        ("", "replicationcontrollers"),
        ("", "events"),
        ("", "namespaces"),
        ("", "secrets"),
        ("", "services"),
        ("batch", "jobs"),
        ("certificates.platform.io", "certificatesigningrequests"),
        ("certificates.platform.io", "clustertrustbundles"),
        ("certificates.platform.io", "podcertificaterequests"),
        ("events.platform.io", "events"),
        ("resource.platform.io", "resourceslices"),
    }
)


class MetaFieldLabels(dict[str, FieldGetter]):
    """The getters of a built-in kind that only has kube's default conversion
    (``metadata.name`` and ``metadata.namespace``)."""


def check_field_labels(selector: FieldSelector, getters: dict[str, FieldGetter]) -> None:
    for term in selector.terms:
        if term.field in getters:
            continue
        if isinstance(getters, MetaFieldLabels):
            raise SelectorError(
                f"{go_quote(term.field)} is not a known field selector: only "
                '"metadata.name", "metadata.namespace"'
            )
        raise SelectorError(f"field label not supported: {term.field}")
