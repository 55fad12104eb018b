"""YAML as kube-apiserver writes it (``Accept: application/yaml``).

kube turns its JSON into YAML with sigs.k8s.io/yaml, which is go-yaml v2: a port of
libyaml's emitter (the one PyYAML's C dumper uses) behind its own resolver.  So the
emitter here is libyaml's, and only go-yaml's choices are added: a string it would read
back as something else (``"123"``, ``"on"``, ``"0o17"``, ``"1e3"``, a timestamp) is
double-quoted, a string with a line break is a literal block, and everything its
resolver reads as a string (``NaN``, ``=``, ``<<``) stays plain, as do UTF-8 letters.
Request bodies are read by the same resolver (``go_tag``, ``go_int``; codec/text.py).

sigs.k8s.io/yaml gets there by reading kube's JSON *as YAML*, and Go's JSON leaves some
characters raw that a YAML reader treats specially: a NEL (U+0085) is a line break,
folded like one inside the double-quoted string (to a space, or newlines when several);
DEL, the other C1 controls, U+FFFE and U+FFFF stop the reader ("control characters are
not allowed", which kube answers as a 500).  go-yaml's emitter also writes no
indentation before the closing quote of a single-quoted string ending in U+2028/U+2029,
where libyaml's does.
"""

from __future__ import annotations

import calendar
import math
import re
from typing import Any

import orjson
import yaml

from platform_api.gotext import format_float, parse_int

try:  # libyaml is in the PyYAML wheels; fall back to the pure-Python classes if absent
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]

STR = "tag:yaml.org,2002:str"
_BOOL, _NULL = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"

# go-yaml's table of words, consulted only for strings whose first character hints at one.
_WORDS = {
    **dict.fromkeys(
        ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"], _BOOL
    ),
    **dict.fromkeys(
        ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"], _BOOL
    ),
    **dict.fromkeys(["", "~", "null", "Null", "NULL"], _NULL),
    **dict.fromkeys(
        [s + v for s in ("", "+", "-") for v in (".inf", ".Inf", ".INF")]
        + [".nan", ".NaN", ".NAN"],
        _FLOAT,
    ),
}
_WORD_HINT = frozenset("yYnNtTfFoO~")
_NUMBER_HINT = frozenset("+-0123456789")
_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?\Z")
_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z")
# go-yaml's timestamp layouts: a date; date T time zone; date, space, time (no zone).
_TIMESTAMP_SYNTAX = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))"
    r"|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?))?\Z"
)


def _is_timestamp(s: str) -> bool:
    m = _TIMESTAMP_SYNTAX.match(s)
    if m is None:
        return False
    year, month, day = (int(g) for g in m.group(1, 2, 3))
    clock = [int(g) for g in m.groups()[3:] if g is not None]
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return False
    return not clock or (clock[0] < 24 and clock[1] < 60 and clock[2] < 60)


def go_int(text: str) -> int:
    """The integer go-yaml reads: strconv.ParseInt(text, 0, 64), or ParseUint, once the
    underscores are gone (``0o17``, ``0x1F``, ``012`` octal); ValueError if neither."""
    plain = text.replace("_", "")
    try:
        return parse_int(plain, base=0)
    except ValueError:
        return parse_int(plain, unsigned=True, base=0)


def _is_int(plain: str) -> bool:
    try:
        go_int(plain)
    except ValueError:
        return False
    return True


def go_tag(s: str) -> str:
    """The tag go-yaml v2's resolver gives ``s`` written plain."""
    hint = s[:1]
    if not s or hint in _WORD_HINT:
        return _WORDS.get(s, STR)
    if hint == ".":
        return _WORDS.get(s, _FLOAT if _DOT_FLOAT.match(s) else STR)
    if hint not in _NUMBER_HINT:
        return STR
    if s in _WORDS:
        return _WORDS[s]
    if _is_timestamp(s):
        return _TIMESTAMP
    plain = s.replace("_", "")
    if _is_int(plain):
        return _INT
    if _YAML_FLOAT.match(plain) and math.isfinite(float(plain)):
        return _FLOAT
    return STR


class _GoDumper(_Dumper):
    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            return go_tag(value)
        return super().resolve(kind, value, implicit)


def _represent_str(dumper: _GoDumper, s: str) -> yaml.ScalarNode:
    if "\n" in s:
        style: str | None = "|"
    elif go_tag(s) != STR or _BASE60.match(s):
        style = '"'
    else:
        style = None  # plain, or quoted where the emitter cannot write it plain
    return dumper.represent_scalar(STR, s, style=style)


def _represent_float(dumper: _GoDumper, f: float) -> yaml.ScalarNode:
    """As go-yaml reads back kube's JSON for ``f``: an integer where that text is one
    (``12345678901234567000``), else a float64 in strconv 'g' form (``1``, ``1e+06``)."""
    text = format_float(f, json=True)
    if go_tag(text) == _INT:
        text = str(int(text))
    else:
        text = format_float(f)
        text = _SPECIAL_FLOATS.get(text, text)
    return dumper.represent_scalar(go_tag(text), text)


_SPECIAL_FLOATS = {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}
_GoDumper.add_representer(str, _represent_str)
_GoDumper.add_representer(float, _represent_float)


class UnwritableYAML(ValueError):
    """go-yaml refuses to read the JSON of this object (kube answers a 500)."""


# In UTF-8 JSON: DEL, U+0080-U+009F (NEL among them), U+FFFE, U+FFFF.
_SPECIAL = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xef\xbf[\xbe\xbf]")
_REFUSED = re.compile("[\x7f-\x84\x86-\x9f\ufffe\uffff]")
_NEL_RUN = re.compile(" *\x85[ \x85]*")  # blanks before a break are dropped, after skipped
_TRAILING_INDENT = re.compile("([\u2028\u2029]) +'(?=\n)")


def _fold(match: re.Match[str]) -> str:
    breaks = match.group().count("\x85")
    return " " if breaks == 1 else "\n" * (breaks - 1)


def _as_go_yaml_reads(value: Any) -> Any:
    """``value`` as sigs.k8s.io/yaml reads it back from Go's JSON."""
    if isinstance(value, str):
        if _REFUSED.search(value):
            raise UnwritableYAML("yaml: control characters are not allowed")
        return _NEL_RUN.sub(_fold, value) if "\x85" in value else value
    if isinstance(value, dict):
        return {_as_go_yaml_reads(k): _as_go_yaml_reads(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_go_yaml_reads(v) for v in value]
    return value


def yaml_dumps(obj: Any) -> bytes:
    """``obj`` as kube writes it in YAML; raises UnwritableYAML where kube cannot."""
    if _SPECIAL.search(orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)):
        obj = _as_go_yaml_reads(obj)
    text: str = yaml.dump(
        obj, Dumper=_GoDumper, default_flow_style=False, sort_keys=True, allow_unicode=True
    )
    if "\u2028" in text or "\u2029" in text:
        text = _TRAILING_INDENT.sub(r"\1'", text)
    return text.encode()
