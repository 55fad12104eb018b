"""Go's regular expressions (RE2 syntax) on Python's ``re``.

CRD schemas hold ``pattern`` strings that kube compiles with Go's ``regexp``: its syntax
errors are shown to users verbatim (``error parsing regexp: missing closing ): `(a` ``), and
its semantics differ from Python's in places (``$`` is the end of the text, ``\\d`` and
``\\b`` are ASCII, ``{,n}`` is a literal, lookarounds and backreferences do not exist). This
module parses the Go syntax, reports Go's errors, and writes an equivalent Python pattern.
Unicode scripts (``\\p{Greek}``) are approximated from character names, since Python has
no script property; general categories (``\\p{Lu}``) are exact.
"""

from __future__ import annotations

import re
from functools import lru_cache

from platform_api.apiextensions.schema.goregex_tables import (
    MAX_RUNE,
    PERL,
    POSIX,
    Ranges,
    negate_ranges,
    unicode_table,
)


class GoRegexError(ValueError):
    """A Go ``regexp/syntax`` error, worded as Go words it."""

    def __init__(self, code: str, expr: str) -> None:
        super().__init__(f"error parsing regexp: {code}: `{expr}`")


def _class_text(ranges: Ranges, negate: bool = False) -> str:
    if not ranges:
        return "[^\\x00-\\U0010ffff]" if not negate else "[\\x00-\\U0010ffff]"
    body = "".join(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)
    return f"[{'^' if negate else ''}{body}]"


def _fold(text: str, fold: bool) -> str:
    return f"(?i:{text})" if fold else text


_HEX = "0123456789abcdefABCDEF"


class _Atom:
    __slots__ = ("text", "weight")

    def __init__(self, text: str, weight: int = 1) -> None:
        self.text = text
        self.weight = weight


class _Parser:
    """Go's left-to-right parse, emitting Python syntax as it goes."""

    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.pos = 0
        self.fold = False
        self.multiline = False
        self.dotnl = False
        self.ungreedy = False
        self.weight = 1  # the largest repeat product inside the group just parsed

    def error(self, code: str, expr: str) -> GoRegexError:
        return GoRegexError(code, expr)

    def parse(self) -> str:
        return self.alternation(0)

    # -- structure ---------------------------------------------------------------

    def alternation(self, depth: int) -> str:
        branches: list[str] = []
        atoms: list[_Atom] = []
        last_repeat = ""
        weight = 1
        s = self.s
        while self.pos < len(s):
            c = s[self.pos]
            repeat = ""
            if c == "(":
                atom = self.group(depth)
                if atom is not None:
                    atoms.append(atom)
            elif c == ")":
                if depth == 0:
                    raise self.error("unexpected )", s)
                branches.append("".join(a.text for a in atoms))
                self.weight = max([weight] + [a.weight for a in atoms])
                return "|".join(branches)
            elif c == "|":
                branches.append("".join(a.text for a in atoms))
                weight = max([weight] + [a.weight for a in atoms])
                atoms = []
                self.pos += 1
            elif c in "*+?":
                repeat = self.repeat(atoms, c, 0, 0, last_repeat)
            elif c == "{":
                bounds = self.repeat_bounds()
                if bounds is None:
                    atoms.append(_Atom(_fold(re.escape("{"), self.fold)))
                    self.pos += 1
                else:
                    repeat = self.repeat(atoms, "{", bounds[0], bounds[1], last_repeat, bounds[2])
            else:
                atoms.append(self.simple())
            last_repeat = repeat
        if depth > 0:
            raise self.error("missing closing )", s)
        branches.append("".join(a.text for a in atoms))
        return "|".join(branches)

    def group(self, depth: int) -> _Atom | None:
        s = self.s
        saved = (self.fold, self.multiline, self.dotnl, self.ungreedy)
        if s.startswith("(?", self.pos):
            if not self.perl_flags():
                return None  # a flag change such as (?i): no group opened
        else:
            self.pos += 1
        inner = self.alternation(depth + 1)
        self.pos += 1  # the closing paren
        self.fold, self.multiline, self.dotnl, self.ungreedy = saved
        return _Atom(f"(?:{inner})", self.weight)

    def perl_flags(self) -> bool:
        """Parse ``(?...``; True when a group opens, False for a bare flag change."""
        s, start = self.s, self.pos
        t = s[start:]
        if (len(t) > 4 and t[2] == "P" and t[3] == "<") or (len(t) > 3 and t[2] == "<"):
            name_start = 4 if t[2] == "P" else 3
            end = t.find(">")
            if end < 0:
                raise self.error("invalid named capture", t)
            name = t[name_start:end]
            if not name or not all(c == "_" or (c.isascii() and c.isalnum()) for c in name):
                raise self.error("invalid named capture", t[: end + 1])
            self.pos = start + end + 1
            return True
        i = start + 2
        fold, multiline, dotnl, ungreedy = self.fold, self.multiline, self.dotnl, self.ungreedy
        negate = False
        saw_flag = False
        while i < len(s):
            c = s[i]
            i += 1
            if c in "imsU":
                value = not negate
                if c == "i":
                    fold = value
                elif c == "m":
                    multiline = value
                elif c == "s":
                    dotnl = value
                else:
                    ungreedy = value
                saw_flag = True
            elif c == "-" and not negate:
                negate = True
                saw_flag = False
            elif c in ":)" and not (negate and not saw_flag):
                self.fold, self.multiline, self.dotnl, self.ungreedy = (
                    fold, multiline, dotnl, ungreedy,
                )  # fmt: skip
                self.pos = i
                return c == ":"
            else:
                break
        raise self.error("invalid or unsupported Perl syntax", s[start:i])

    def repeat_bounds(self) -> tuple[int, int, int] | None:
        """``{n}``, ``{n,}``, ``{n,m}``: (min, max or -1, end); None if ``{`` is a literal."""
        m = re.match(r"\{([0-9]+)(,([0-9]*))?\}", self.s[self.pos :])
        if m is None:
            return None
        low = _go_int(m.group(1))
        if m.group(2) is None:
            high = low
        elif m.group(3) == "":
            high = -1
        else:
            high = _go_int(m.group(3))
            if high is not None and high < 0:
                low = -1
        if low is None or high is None:
            return None
        return low, high, self.pos + m.end()

    def repeat(
        self, atoms: list[_Atom], op: str, low: int, high: int, last: str, end: int = -1
    ) -> str:
        s = self.s
        before = self.pos
        after = end if op == "{" else before + 1
        if op == "{" and (low < 0 or low > 1000 or high > 1000 or (high >= 0 and low > high)):
            raise self.error("invalid repeat count", s[before:after])
        greedy = not self.ungreedy
        if after < len(s) and s[after] == "?":
            after += 1
            greedy = not greedy
        if last:
            raise self.error("invalid nested repetition operator", s[before - len(last) : after])
        if not atoms:
            raise self.error("missing argument to repetition operator", s[before:after])
        atom = atoms[-1]
        weight = atom.weight
        if op == "{":
            count = high if high >= 0 else low
            if (low >= 2 or high >= 2) and count > 0:
                weight *= count
                if weight > 1000:
                    raise self.error("invalid repeat count", s[before:after])
            suffix = f"{{{low}}}" if low == high else f"{{{low},{'' if high < 0 else high}}}"
        else:
            suffix = op
        atoms[-1] = _Atom(f"(?:{atom.text}){suffix}{'' if greedy else '?'}", weight)
        self.pos = after
        return s[before:after]

    # -- atoms -------------------------------------------------------------------

    def simple(self) -> _Atom:
        c = self.s[self.pos]
        if c == "^":
            self.pos += 1
            return _Atom("(?m:^)" if self.multiline else "\\A")
        if c == "$":
            self.pos += 1
            return _Atom("(?m:$)" if self.multiline else "\\Z")
        if c == ".":
            self.pos += 1
            return _Atom("[\\x00-\\U0010ffff]" if self.dotnl else "[^\\n]")
        if c == "[":
            return _Atom(_fold(_class_text(self.char_class()), self.fold))
        if c == "\\":
            return self.backslash()
        self.pos += 1
        return _Atom(_fold(re.escape(c), self.fold))

    def backslash(self) -> _Atom:
        s, pos = self.s, self.pos
        nxt = s[pos + 1] if pos + 1 < len(s) else ""
        simple = {"A": "\\A", "z": "\\Z", "b": "(?a:\\b)", "B": "(?a:\\B)"}
        if nxt in simple:
            self.pos += 2
            return _Atom(simple[nxt])
        if nxt == "C":
            raise self.error("invalid escape sequence", s[pos : pos + 2])
        if nxt == "Q":
            end = s.find("\\E", pos + 2)
            literal = s[pos + 2 :] if end < 0 else s[pos + 2 : end]
            self.pos = len(s) if end < 0 else end + 2
            return _Atom("".join(_fold(re.escape(ch), self.fold) for ch in literal))
        ranges = self.named_escape()
        if ranges is not None:
            return _Atom(_fold(_class_text(ranges), self.fold))
        rune = self.escape()
        return _Atom(_fold(re.escape(chr(rune)), self.fold))

    def named_escape(self) -> Ranges | None:
        """``\\pN``, ``\\p{Name}``, ``\\d`` and friends, as ranges; None if not one."""
        s, pos = self.s, self.pos
        nxt = s[pos + 1] if pos + 1 < len(s) else ""
        if nxt in ("p", "P"):
            return self.unicode_class()
        if nxt.lower() in PERL:
            self.pos += 2
            ranges = PERL[nxt.lower()]
            return negate_ranges(ranges) if nxt.isupper() else list(ranges)
        return None

    def unicode_class(self) -> Ranges:
        s, pos = self.s, self.pos
        negate = s[pos + 1] == "P"
        if pos + 2 >= len(s):
            raise self.error("invalid character class range", s[pos:])
        if s[pos + 2] != "{":
            seq, name = s[pos : pos + 3], s[pos + 2]
        else:
            end = s.find("}", pos)
            if end < 0:
                raise self.error("invalid character class range", s[pos:])
            seq, name = s[pos : end + 1], s[pos + 3 : end]
        if name.startswith("^"):
            negate, name = not negate, name[1:]
        ranges = unicode_table(name)
        if ranges is None:
            raise self.error("invalid character class range", seq)
        self.pos = pos + len(seq)
        return negate_ranges(ranges) if negate else ranges

    def escape(self) -> int:
        """One escaped character (``parseEscape``)."""
        s, start = self.s, self.pos
        if start + 1 >= len(s):
            raise self.error("trailing backslash at end of expression", "")
        c = s[start + 1]
        i = start + 2
        if c.isascii() and not c.isalnum():
            self.pos = i
            return ord(c)
        if c in "01234567" and (c == "0" or (i < len(s) and s[i] in "01234567")):
            value = int(c)
            for _ in range(2):
                if i < len(s) and s[i] in "01234567":
                    value = value * 8 + int(s[i])
                    i += 1
            self.pos = i
            return value
        if c == "x" and i < len(s):
            rune, i = self.hex_escape(i)
            if rune is not None:
                self.pos = i
                return rune
        controls = {"a": 7, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
        if c in controls:
            self.pos = i
            return controls[c]
        raise self.error("invalid escape sequence", s[start:i])

    def hex_escape(self, i: int) -> tuple[int | None, int]:
        s = self.s
        if s[i] == "{":
            i += 1
            digits = ""
            while i < len(s) and s[i] != "}":
                if s[i] not in _HEX or int(digits + s[i], 16) > MAX_RUNE:
                    return None, i + 1
                digits += s[i]
                i += 1
            if i >= len(s) or not digits:
                return None, min(i + 1, len(s))
            return int(digits, 16), i + 1
        pair = s[i : i + 2]
        if len(pair) == 2 and pair[0] in _HEX and pair[1] in _HEX:
            return int(pair, 16), i + 2
        return None, min(i + 2, len(s))

    def char_class(self) -> Ranges:
        s, start = self.s, self.pos
        i = start + 1
        negate = i < len(s) and s[i] == "^"
        if negate:
            i += 1
        ranges: Ranges = []
        first = True
        while i >= len(s) or s[i] != "]" or first:
            first = False
            if s.startswith("[:", i):
                end = s.find(":]", i + 2)
                if end >= 0:
                    name = s[i : end + 2]
                    body = name[2:-2]
                    group = POSIX.get(body.lstrip("^"))
                    if group is None:
                        raise self.error("invalid character class range", name)
                    ranges += negate_ranges(group) if body.startswith("^") else group
                    i = end + 2
                    continue
            self.pos = i
            named = self.named_escape() if s.startswith("\\", i) else None
            if named is not None:
                ranges += named
                i = self.pos
                continue
            low_start = i
            low, i = self.class_char(i, start)
            high = low
            if i + 1 < len(s) and s[i] == "-" and s[i + 1] != "]":
                high, i = self.class_char(i + 1, start)
                if high < low:
                    raise self.error("invalid character class range", s[low_start:i])
            ranges.append((low, high))
        self.pos = i + 1
        return negate_ranges(ranges) if negate else ranges

    def class_char(self, i: int, class_start: int) -> tuple[int, int]:
        s = self.s
        if i >= len(s):
            raise self.error("missing closing ]", s[class_start:])
        if s[i] == "\\":
            self.pos = i
            rune = self.escape()
            return rune, self.pos
        return ord(s[i]), i + 1


def _go_int(text: str) -> int | None:
    """``parseInt`` of the repeat parser: no leading zeros, at most 8 digits."""
    if len(text) >= 2 and text[0] == "0":
        return None
    if len(text) > 8:
        return -1
    return int(text)


@lru_cache(maxsize=4096)
def translate(pattern: str) -> str:
    """The Python equivalent of a Go pattern; raises ``GoRegexError`` as Go's parser does."""
    return _Parser(pattern).parse()


@lru_cache(maxsize=4096)
def compile_go(pattern: str) -> re.Pattern[str]:
    """A compiled Python pattern that matches as Go's ``regexp.MustCompile`` would."""
    return re.compile(translate(pattern))


def go_error(pattern: str) -> str | None:
    """Go's compile error for a pattern, or None when it compiles."""
    try:
        translate(pattern)
    except GoRegexError as e:
        return str(e)
    return None
