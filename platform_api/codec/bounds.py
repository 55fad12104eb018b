"""Limits every request-body decoder applies before it builds a value: nesting depth and
YAML alias expansion, as kube's decoders bound them.

kube refuses JSON nested deeper than 10000 (``exceeded max depth``) and YAML that nests
deeper than 10000 or expands aliases too much (go-yaml v2's ``excessive aliasing``).  This
server's own stages (schema decoding, pruning, managed fields, orjson's encoder, which stops
at 254 levels) recurse, so it refuses bodies deeper than ``SAFE_DEPTH`` with the same
answer: a 400, never a RecursionError.  The checks here never recurse themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

import yaml

MAX_DEPTH = 10000  # sigs.k8s.io/json's and go-yaml's limit
# This server's own limit: orjson encodes at most 254 levels and a stored object is nested
# further in lists, watch events and managedFields; see the module docstring.
SAFE_DEPTH = 200


class BodyError(ValueError):
    """The body is not well-formed JSON or YAML; the text follows Go's wording.

    ``bare`` errors carry kube's whole problem text (``yaml: ...``), which a create reports
    without the ``couldn't get version/kind`` lead-in.
    """

    def __init__(self, message: str, bare: bool = False, number: bool = False) -> None:
        super().__init__(message)
        self.bare = bare
        self.number = number  # a number Go cannot hold, found once the body parsed


class DepthError(BodyError):
    """A body nested deeper than the limit; ``char`` opened the level too many."""

    def __init__(self, char: str, limit: int, line: int = 0, from_yaml: bool = False) -> None:
        if from_yaml:
            super().__init__(f"yaml: {self.where(line)}exceeded max depth of {limit}", bare=True)
        else:
            super().__init__("exceeded max depth")
        self.char = char
        self.limit = limit

    @staticmethod
    def where(line: int) -> str:
        """go-yaml names the line of a problem unless it is the first."""
        return f"line {line + 1}: " if line else ""

    def yaml_text(self) -> str:
        """The refusal as go-yaml words it (kube's apply parses JSON as YAML too)."""
        return str(self) if self.bare else f"yaml: exceeded max depth of {self.limit}"


class OverflowFloat(float):
    """A JSON number beyond float64's range (an infinity) that keeps its text, which Go's
    decoders quote in their refusal (``cannot unmarshal number 1e400 ...``)."""

    literal: str

    def __new__(cls, literal: str) -> OverflowFloat:
        number = super().__new__(cls, float(literal))
        number.literal = literal
        return number


def parse_float(text: str) -> float:
    number = float(text)
    return OverflowFloat(text) if number in (_INF, -_INF) else number


def parse_int(text: str) -> int | float:
    """A JSON integer; one too long for Python's int parser (CPython refuses more than
    4300 digits, to bound its quadratic conversion) is far past float64 as well, so it
    keeps its text as an OverflowFloat, which Go's decoders refuse with that text."""
    return int(text) if len(text) <= _INT_DIGITS else OverflowFloat(text)


_INT_DIGITS = 4000  # under CPython's default limit, past float64's 309 digits
_INF = float("inf")
_INT64 = (-(2**63), 2**63 - 1)


# Digits enough for a number past int64 (19 in a row), or an exponent past float64
# (``e``/``E``, an optional ``+``, 3 digits): only bodies that hold one need the walk
# below.  With every digit read as 0 and E as e, that is three substring searches in C:
# the regular expression it replaces cost 20 ns a byte, ~5% of an update's CPU.
_NUMBER_SHAPE = bytes.maketrans(b"123456789E", b"000000000e")
_WIDE_SHAPES = (b"0" * 19, b"e000", b"e+000")


def wide_number(data: bytes) -> bool:
    """Whether ``data`` may hold a number past int64 or float64 (or digits like one)."""
    shape = data.translate(_NUMBER_SHAPE)
    return any(wide in shape for wide in _WIDE_SHAPES)


def as_interface_values(data: bytes, value: Any) -> None:
    """Make a decoded body's numbers what Go's interface{} decoding makes them, in place:
    integers wider than int64 become float64, a number past float64 is refused
    (``json: cannot unmarshal number 1e400 into Go value of type float64``).  Custom
    resources, patches and free-form fields of built-in kinds decode this way."""
    if not wide_number(data):
        return
    for item, key, child in scalars(value):
        if isinstance(child, OverflowFloat):
            raise _unmarshal(child.literal)
        if isinstance(child, int) and not _INT64[0] <= child <= _INT64[1]:
            try:  # bools are ints too, and always in range
                item[key] = float(child)
            except OverflowError:
                raise _unmarshal(str(child)) from None


def whole_floats_to_ints(value: Any) -> None:
    """Whole floats (``2.0``) become integers, in place.  A custom resource keeps Go's
    float64 for them, which encoding/json writes as ``2``: as an int, orjson writes the
    same."""
    for item, key, child in scalars(value):
        if type(child) is float and child.is_integer() and abs(child) < 2**63:
            item[key] = int(child)


def scalars(value: Any) -> Iterator[tuple[Any, Any, Any]]:
    """(container, key, value) of every scalar in a decoded JSON value, without
    recursion; the container may be changed at that key as the walk goes."""
    stack = [value] if isinstance(value, dict | list) else []
    while stack:
        item = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in list(pairs):
            if isinstance(child, dict | list):
                stack.append(child)
            else:
                yield item, key, child


def _unmarshal(literal: str) -> BodyError:
    return BodyError(
        f"json: cannot unmarshal number {literal} into Go value of type float64",
        bare=True,
        number=True,
    )


def _outside_strings(data: bytes) -> bytes:
    """The JSON text between strings: escapes dropped (escaped backslashes first, as a
    left-to-right reader pairs them), then every other piece between quotes."""
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(unescaped.split(b'"')[0::2])


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def check_json_depth(data: bytes, limit: int = SAFE_DEPTH) -> None:
    """Refuse JSON nested deeper than ``limit`` without parsing it; brackets inside
    strings do not count.  Linear, and in C but for one pass over the brackets."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return
    brackets = _outside_strings(data).translate(None, _NOT_BRACKETS)
    steps = memoryview(brackets.translate(_STEPS)).cast("b")
    deepest = max(accumulate(steps), default=0)
    if deepest > limit:  # the bracket that opened one level too many
        at = next(i for i, depth in enumerate(accumulate(steps)) if depth > limit)
        raise DepthError(chr(brackets[at]), MAX_DEPTH if deepest > MAX_DEPTH else limit)


def deeper_than(value: Any, limit: int = SAFE_DEPTH) -> bool:
    """Whether decoded JSON values nest past ``limit`` (for decoders that bound their
    own recursion only loosely, as Protobuf's does); iterative."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _allowed_alias_ratio(decodes: int) -> float:
    """go-yaml v2's share of decoded nodes that may come from aliases."""
    if decodes <= 400_000:
        return 0.99
    if decodes >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * (decodes - 400_000) / 3_600_000


def check_yaml_events(data: bytes, loader: type) -> None:
    """Refuse a first YAML document nested deeper than ``SAFE_DEPTH`` before anything
    builds it (libyaml's composer recurses in C, its scanner slows with depth).  Whether
    kube's own limit is passed too only picks the number in the message: the brackets
    outside quotes tell it.  Parse errors are left to the loader."""
    if not _may_nest_past(data, SAFE_DEPTH):
        return
    depth = 0
    try:
        for event in yaml.parse(data, Loader=loader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > SAFE_DEPTH:
                    limit = MAX_DEPTH if _bracket_depth(data) > MAX_DEPTH else SAFE_DEPTH
                    raise DepthError("[", limit, _line(event), from_yaml=True)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.DocumentEndEvent):
                return
    except yaml.YAMLError:
        return


_LEAD = re.compile(rb"^ *(?:[-?:] +|[&!]\S* +)*", re.MULTILINE)


def _may_nest_past(data: bytes, limit: int) -> bool:
    """A cheap upper bound on a YAML text's nesting, so that most bodies skip the event
    pass (which costs a quarter of a full load).  A block collection starts to the right
    of its parent but for a sequence that is a mapping's value, so block nesting is at
    most twice the column where the deepest collection starts, plus one; that column is
    at most the longest run of indentation, ``- ``/``? ``/``: `` indicators and anchors or
    tags that opens a line.  Flow nesting is at most the number of ``[`` and ``{``."""
    brackets = data.count(b"[") + data.count(b"{")
    room = (limit - brackets) // 2 - 1  # the widest opening run that stays within limit
    if room <= 0:
        return True
    if b"&" not in data and b"!" not in data:
        return re.search(rb"^[ ?:-]{%d}" % room, data, re.MULTILINE) is not None
    return max(map(len, _LEAD.findall(data)), default=0) >= room


_YAML_QUOTED = re.compile(rb"\"[^\"\\]*(?:\\.[^\"\\]*)*\"|'[^']*'")


def _bracket_depth(data: bytes) -> int:
    brackets = _YAML_QUOTED.sub(b"", data).translate(None, _NOT_BRACKETS)
    return max(accumulate(memoryview(brackets.translate(_STEPS)).cast("b")), default=0)


def _line(item: Any) -> int:
    mark = getattr(item, "start_mark", None)
    return int(mark.line) if mark is not None else 0


def check_yaml_aliases(root: yaml.Node) -> None:
    """Walk the composed document as go-yaml v2 decodes it, aliases expanded, and refuse
    it when aliases make up too much of it or expansion nests it past ``SAFE_DEPTH``.
    Nodes reached through an alias are the same objects, so the walk is what expansion
    costs; it stops as soon as go-yaml's ratio is exceeded."""
    decodes = aliased = 0
    # (node, depth, inside an alias) — an explicit stack, never recursion
    stack: list[tuple[Any, int, bool]] = [(root, 0, False)]
    seen: set[int] = set()
    while stack:
        node, depth, in_alias = stack.pop()
        decodes += 1
        if in_alias:
            aliased += 1
        if aliased > 100 and decodes > 1000 and aliased / decodes > _allowed_alias_ratio(decodes):
            raise BodyError("yaml: document contains excessive aliasing", bare=True)
        if isinstance(node, yaml.ScalarNode):
            continue
        if depth >= SAFE_DEPTH:
            raise DepthError("[", SAFE_DEPTH, _line(node), from_yaml=True)
        # Composed nodes have no alias marker: a node met twice is an alias's target.
        inner = in_alias or id(node) in seen
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1, inner) for child in node.value)
        else:
            for key, value in node.value:
                stack.append((key, depth + 1, inner))
                stack.append((value, depth + 1, inner))
