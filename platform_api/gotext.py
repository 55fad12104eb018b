"""JSON values printed as Go prints their decoded form: ``%v``, ``%T`` and ``json.Marshal``.

kube's messages embed values the way Go formats them, and clients match on the text:
``1e+06`` rather than ``1000000.0``, ``map[a:1]``, ``\\u003c`` in JSON.  The values are
what kube holds for decoded JSON: ``map[string]interface{}``, ``[]interface{}``,
``string``, ``int64``, ``float64``, ``bool`` and nil (Python's dict, list, str, int,
float, bool, None).  JSONPath, the schema validation of custom resources and the CRD
validation all print through here.
"""

from __future__ import annotations

import math
import posixpath
import re
from datetime import UTC, datetime
from typing import Any

import orjson

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
_HTML_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


class Struct(dict[str, Any]):
    """A Go struct: its fields keep their declaration order (a plain dict is a map,
    which Go marshals with sorted keys)."""


def _shortest(value: float) -> tuple[str, int]:
    """The shortest digits that round-trip a positive float, and the decimal point's place
    (``0.d1d2... * 10**point`` is the value, as strconv's decimal form)."""
    mantissa, _, exponent = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    stripped = digits.lstrip("0")
    point = len(whole) + (int(exponent) if exponent else 0) - (len(digits) - len(stripped))
    return stripped.rstrip("0"), point


def _exponent_form(digits: str, point: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exponent = point - 1
    sign = "-" if exponent < 0 else "+"
    return f"{mantissa}e{sign}{abs(exponent):02d}"


def _plain_form(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def format_float(value: float, *, json: bool = False, fixed: bool = False) -> str:
    """Go's ``%v`` of a float64 (strconv 'g', shortest digits), ``json.Marshal``'s form
    (``json``), or strconv 'f' with shortest digits (``fixed``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, point = _shortest(abs(value))
    if fixed:
        return sign + _plain_form(digits, point)
    if json:
        if 1e-6 <= abs(value) < 1e21:
            return sign + _plain_form(digits, point)
        text = _exponent_form(digits, point)
        if text[-4:-1] == "e-0":  # encoding/json trims e-07 to e-7
            text = text[:-2] + text[-1]
        return sign + text
    if point - 1 < -4 or point - 1 >= 6:  # 'g' with shortest digits switches at 1e6 / 1e-5
        return sign + _exponent_form(digits, point)
    return sign + _plain_form(digits, point)


def json_string(value: str) -> str:
    """A string as ``encoding/json`` writes it: HTML characters and U+2028/9 escaped."""
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # lone surrogates: Go's decoder never yields them
        text = orjson.dumps(_SURROGATE.sub("\ufffd", value)).decode()
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        for raw, escaped in _HTML_ESCAPES:
            text = text.replace(raw, escaped)
    return text


_HTML_ESCAPED = tuple((raw.encode(), escaped.encode()) for raw, escaped in _HTML_ESCAPES)


def go_escaped(data: bytes) -> bytes:
    """JSON bytes as Go's encoder writes them (HTML-safe, its default, so kube's answers):
    ``<``, ``>``, ``&``, U+2028 and U+2029 as \\u escapes.  In JSON they can only stand
    inside strings, so a byte replace is exact."""
    for raw, escaped in _HTML_ESCAPED:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


# orjson writes a float in exponent form below 1e-5 and from 1e16; encoding/json below
# 1e-6 and from 1e21.  The tokens between (written by orjson) and JSON's strings, which
# are passed over: ``e-6`` or ``e+16`` inside a string is text, not a number.
_PLAIN_IN_GO = re.compile(rb"e(?:-6|\+1[6-9]|\+20)")  # one scan; ``in`` six times costs 7x
_STRING_OR_SHORT_EXPONENT = re.compile(rb'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?e(?:-6|\+1[6-9]|\+20)\b')


_NUMBER_CHARS = frozenset(b"0123456789.")
_VALUE_STARTS = frozenset(b":,[ \t\r\n")


def _as_value(data: bytes) -> bool:
    """Whether such an exponent ends a number where JSON puts a value (after ``:``,
    ``,``, ``[``, indentation or at the start).  UIDs often hold ``4e-6``: a list of
    pods nearly always matched the first scan, and the string-skipping substitution over
    megabytes was most of a Table's cost; the few places the scan finds are looked at
    here instead."""
    for found in _PLAIN_IN_GO.finditer(data):
        start = end = found.start()
        while start and data[start - 1] in _NUMBER_CHARS:
            start -= 1
        if start == end:
            continue
        if start and data[start - 1] == 0x2D:  # a minus sign
            start -= 1
        if not start or data[start - 1] in _VALUE_STARTS:
            return True
    return False


def go_floats(data: bytes) -> bytes:
    """orjson's JSON with its floats as ``encoding/json`` writes them (kube's answers and
    stored values): ``0.0000015`` for 1.5e-6, ``10000000000000000000`` for 1e19.  A
    custom resource holds such floats as sent; integers past int64 become them too."""
    if _PLAIN_IN_GO.search(data) is None:
        return data
    if not _as_value(data):
        return data  # only inside strings
    return _STRING_OR_SHORT_EXPONENT.sub(_go_float, data)


def _go_float(match: re.Match[bytes]) -> bytes:
    token = match.group()
    if token.startswith(b'"'):
        return token
    return format_float(float(token), json=True).encode()


def object_json(obj: Any, option: int = 0) -> bytes:
    """An object's JSON as kube writes it: orjson's, with Go's float forms
    (``go_floats``).  Every object the server stores or answers is encoded here."""
    return go_floats(orjson.dumps(obj, option=option))


def kept_json(obj: Any) -> bytes:
    """``object_json`` for bytes a cache holds on to (the etcd watch cache, informers):
    orjson (3.12 on) hands back its whole working buffer, at least 4 KiB and never
    shrunk, so each kept ~600-byte object would hold 4 KiB.  These are copied to their
    own size (~0.1 µs); answers, sent and dropped, keep orjson's buffer."""
    return right_sized(object_json(obj))


def right_sized(data: bytes) -> bytes:
    """``data`` in an allocation of its own length (see ``kept_json``)."""
    return memoryview(data).tobytes()


_RUNE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
_RUNE_ESCAPES.update({"\t": "\\t", "\v": "\\v", "\\": "\\\\"})


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def go_text(data: bytes) -> str:
    """Bytes as Go's JSON writes a string of them: each byte that is not UTF-8 (a cut
    character's too) becomes U+FFFD, where Python's ``replace`` makes one of a run."""
    return _ESCAPED_BYTE.sub("\ufffd", data.decode("utf-8", "surrogateescape"))


def quote_rune(char: str, quote: str = "'") -> str:
    """One character as ``strconv.Quote`` writes it inside ``quote``: printable ones as
    they are, the C escapes, ``\\x7f`` under U+0080, ``\\u``/``\\U`` above."""
    if char == quote:
        return "\\" + char
    escaped = _RUNE_ESCAPES.get(char)
    if escaped is not None:
        return escaped
    if char.isprintable():  # Go's unicode.IsPrint: letters, marks, numbers, symbols,
        return char  # punctuation and the ASCII space, as Python's isprintable
    code = ord(char)
    if code < 0x80:
        return f"\\x{code:02x}"
    if 0xD800 <= code <= 0xDFFF:  # a lone surrogate: Go holds the bytes as U+FFFD
        return "\ufffd"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def open_error(path: str, error: OSError) -> str:
    """An OSError as Go's ``os.Open`` words it: ``open p: no such file or directory``."""
    return f"open {path}: {(error.strerror or str(error)).lower()}"


def quote(value: str) -> str:
    """``%q`` of a string (``strconv.Quote``), as kube's messages print names."""
    if value.isascii() and value.isprintable():
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return '"' + "".join(quote_rune(c, '"') for c in value) + '"'


def quote_bytes(data: bytes) -> str:
    """``%q`` of a byte slice: as ``quote``, but a byte that is not UTF-8 is ``\\xNN``."""
    text = data.decode("utf-8", "surrogateescape")
    if text.isascii():
        return quote(text)
    return '"' + "".join(_quoted_byte_or_rune(c) for c in text) + '"'


def _quoted_byte_or_rune(char: str) -> str:
    if "\udc80" <= char <= "\udcff":  # surrogateescape's stand-in for one stray byte
        return f"\\x{ord(char) - 0xDC00:02x}"
    return quote_rune(char, '"')


def marshal(value: Any) -> str:
    """``json.Marshal``: compact, map keys sorted (``Struct`` fields in order), numbers
    and strings in Go's forms; integers beyond int64 were float64 once decoded."""
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if INT64_MIN <= value <= INT64_MAX else marshal(float(value))
    if isinstance(value, float):
        return format_float(value, json=True)
    if isinstance(value, Struct):
        return "{" + ",".join(f"{json_string(k)}:{marshal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ",".join(f"{json_string(k)}:{marshal(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(marshal(v) for v in value) + "]"
    return "null"


def sprint(value: Any, verb: str = "v") -> str:
    """``fmt.Sprint`` (``%v``): ``map[a:1 b:[x y]]``, ``<nil>`` for nil; with ``verb`` "s",
    ``%s``, which prints a value that is no string as ``%!s(int64=1)`` (numbers decoded
    as kube's patches decode them: whole ones int64, others float64)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = " ".join(f"{k}:{_element(v, verb)}" for k, v in sorted(value.items()))
        return "map[" + inner + "]"
    if isinstance(value, list):
        return "[" + " ".join(_element(v, verb) for v in value) + "]"
    if isinstance(value, bool):
        text, go_type = ("true" if value else "false"), "bool"
    elif isinstance(value, int):
        text, go_type = str(value), "int64"
    elif isinstance(value, float):
        text, go_type = format_float(value), "float64"
    elif value is None:
        return "<nil>" if verb == "v" else "%!s(<nil>)"
    else:
        return str(value)
    return text if verb == "v" else f"%!{verb}({go_type}={text})"


def _element(value: Any, verb: str) -> str:
    """A map's or slice's element: fmt prints a nil one as ``<nil>`` whatever the verb."""
    return "<nil>" if value is None else sprint(value, verb)


def json_kind(value: Any) -> str:
    """The JSON kind Go's decoder names in ``cannot unmarshal <kind>``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string" if isinstance(value, str) else "null"


# The struct kube's decoders read a document's kind and version into, as Go names it.
TYPE_META_STRUCT = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)


def typemeta_problem(value: Any) -> str:
    """Why kube's JSON (or YAML) decoder could not read a kind out of ``value``, a
    document that is no object."""
    return (
        "couldn't get version/kind; json parse error: json: cannot unmarshal "
        f"{json_kind(value)} into Go value of type {TYPE_META_STRUCT}"
    )


JSON_MAP = "map[string]interface {}"
_KEY_TYPES = {type(None): 0, str: 1, int: 2, float: 3, bool: 4}
YAML_MAP = "map[interface {}]interface {}"  # go-yaml v2's maps: keys of any type


def go_syntax(value: Any, map_type: str = JSON_MAP) -> str:
    """``%#v`` of a decoded JSON value: ``map[string]interface {}{"a":1}``,
    ``[]interface {}{"x", true}``, ``interface {}(nil)``; or of a YAML one, whose maps
    are ``map_type`` and whose keys may be numbers or booleans (fmt sorts keys by their
    type, in an order of kube's binary, then by value)."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: (_KEY_TYPES.get(type(kv[0]), 5), kv[0]))
        inner = ", ".join(f"{go_syntax(k, map_type)}:{go_syntax(v, map_type)}" for k, v in items)
        return map_type + "{" + inner + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_syntax(v, map_type) for v in value) + "}"
    return sprint(value)


def go_type(value: Any) -> str:
    """``%T``: the Go type of the decoded value (an int may name its own, ``GO_TYPE``)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return getattr(value, "GO_TYPE", "int64")
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return "interface {}"


def go_time(value: datetime, fraction: str = "") -> str:
    """A time as Go's RFC 3339 layouts print it, in UTC: four-digit years (strftime's
    ``%Y`` writes year 1 as ``1``), ``fraction`` (``.000000``, or none) before the Z."""
    v = value.astimezone(UTC)
    return (
        f"{v.year:04d}-{v.month:02d}-{v.day:02d}T"
        f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}{fraction}Z"
    )


_DIGITS = "0123456789abcdef"
_PREFIXES = {"0x": 16, "0o": 8, "0b": 2}


def path_clean(path: str) -> str:
    """Go's ``path.Clean``: POSIX's normal form, except that Go also folds a leading
    ``//`` (POSIX keeps exactly two)."""
    cleaned = posixpath.normpath(path)
    return "/" + cleaned.lstrip("/") if cleaned.startswith("//") else cleaned


def parse_int(text: str, unsigned: bool = False, base: int = 10, bits: int = 64) -> int:
    """Go's ``strconv.ParseInt(text, base, bits)`` (``ParseUint`` when ``unsigned``), for
    base 10 or 0 (``0x1F``, ``0o17``, ``0b101``, ``012`` octal, and underscores between
    digits as in Go literals: ``1_000``, ``0x_1F``).

    Python's ``int()`` also takes `` 1 ``, non-ASCII digits and any size; Go does not.
    ValueError carries Go's whole message (``strconv.ParseInt: parsing "x": invalid syntax``).
    """
    func = "ParseUint" if unsigned else "ParseInt"
    signed = not unsigned and text.startswith(("+", "-"))
    body = text[1:] if signed else text
    radix = base
    if base == 0 and "_" in body:
        if not _underscores_ok(body):
            raise ValueError(f"strconv.{func}: parsing {quote(text)}: invalid syntax")
        body = body.replace("_", "")
    if base == 0:
        prefix = body[:2].lower()
        if prefix in _PREFIXES:
            radix, body = _PREFIXES[prefix], body[2:]
        else:
            radix = 8 if body[:1] == "0" else 10
    allowed = _DIGITS[:radix]
    if not body or not all(c in allowed for c in body.lower()):
        raise ValueError(f"strconv.{func}: parsing {quote(text)}: invalid syntax")
    digits = body.lstrip("0") or "0"  # int() refuses over 4300 digits; Go says out of range
    value = int(digits[:65], radix) * (-1 if signed and text[0] == "-" else 1)
    low, high = (0, (1 << bits) - 1) if unsigned else (-(1 << bits - 1), (1 << bits - 1) - 1)
    if len(digits) > 64 or not low <= value <= high:
        raise ValueError(f"strconv.{func}: parsing {quote(text)}: value out of range")
    return value


def _underscores_ok(body: str) -> bool:
    """Go's underscoreOK (sign already gone): each ``_`` between two digits, or between
    a base prefix and a digit."""
    saw, i, hexadecimal = "^", 0, False
    if len(body) >= 2 and body[0] == "0" and body[1].lower() in "box":
        saw, i, hexadecimal = "0", 2, body[1].lower() == "x"
    for char in body[i:]:
        if char in "0123456789" or (hexadecimal and char.lower() in "abcdef"):
            saw = "0"
        elif char == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"
