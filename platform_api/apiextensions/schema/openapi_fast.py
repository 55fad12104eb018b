"""A quick "certainly valid" check per schema node, to skip the exact validator.

Most objects a server sees are valid, and proving that is cheaper than reproducing
kube-openapi's error collection: each ``VNode`` gets a predicate built from the checks it
actually has. It answers True only when kube would report nothing; False means "not sure",
and the caller then runs ``openapi_check.validate`` for the exact errors. Anything unusual
(junctors, multipleOf, uniqueItems, nulls, floats where integers are expected, mixed-type
enums) is left to the exact validator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.apiextensions.schema.gotext import INT64_MAX, INT64_MIN
from platform_api.apiextensions.schema.openapi import VNode
from platform_api.apiextensions.schema.ranges import range_error

Check = Callable[[Any], bool]
_FLOAT32_MAX = 3.4028234663852886e38


def _never(_: Any) -> bool:
    return False


def fast_check(v: VNode) -> Check:
    """The predicate of ``v`` (built once, kept on the node)."""
    if v.fast is None:
        v.fast = _Builder().build(v)
    check: Check = v.fast
    return check


class _Builder:
    """Writes one Python function per schema node, with only the checks the node has."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {"INT_MIN": INT64_MIN, "INT_MAX": INT64_MAX}
        self.count = 0

    def constant(self, value: Any) -> str:
        self.count += 1
        name = f"c{self.count}"
        self.names[name] = value
        return name

    def build(self, v: VNode) -> Check:
        lines = self.body(v)
        if lines is None:
            return _never
        self.count += 1
        name = f"f{self.count}"
        source = f"def {name}(x):\n" + "".join(f"    {line}\n" for line in lines)
        exec(compile(source, f"<schema check {name}>", "exec"), self.names)
        check: Check = self.names[name]
        return check

    def body(self, v: VNode) -> list[str] | None:
        if v.all_of or v.any_of or v.one_of or v.not_ is not None:
            return None
        if v.multiple_of is not None or v.unique_items or (v.format and not v.types):
            return None
        lines = _kind_lines(v)
        if lines is None:
            return None
        for part in (self.enum_lines, self.string_lines, self.number_lines):
            more = part(v)
            if more is None:
                return None
            lines += more
        nested = self.array_lines(v) if "array" in v.types or not v.types else []
        if nested is None:
            return None
        lines += nested
        nested = self.object_lines(v) if "object" in v.types or not v.types else []
        if nested is None:
            return None
        return [*lines, *nested, "return True"]

    def enum_lines(self, v: VNode) -> list[str] | None:
        if v.enum is None:
            return []
        if all(type(m) is str for m in v.enum):
            allowed = self.constant(frozenset(v.enum))
            return [f"if type(x) is not str or x not in {allowed}: return False"]
        if all(type(m) is int for m in v.enum):
            allowed = self.constant(frozenset(v.enum))
            return [f"if type(x) is not int or x not in {allowed}: return False"]
        return None

    def string_lines(self, v: VNode) -> list[str] | None:
        checks = []
        if v.max_length is not None:
            checks.append(f"len(x) > {int(v.max_length)}")
        if v.min_length is not None:
            checks.append(f"len(x) < {int(v.min_length)}")
        if v.pattern:
            if v.pattern_rx is None:
                return None
            checks.append(f"{self.constant(v.pattern_rx.search)}(x) is None")
        if v.format_check is not None:
            checks.append(f"not {self.constant(v.format_check)}(x)")
        if not checks:
            return []
        return [f"if type(x) is str and ({' or '.join(checks)}): return False"]

    def number_lines(self, v: VNode) -> list[str] | None:
        lines = []
        for bound, exclusive, upper in (
            (v.maximum, v.exclusive_maximum, True),
            (v.minimum, v.exclusive_minimum, False),
        ):
            if bound is None:
                continue
            if range_error(bound, v.num_type, v.num_format, "", "") is not None:
                return None
            op = ("<" if exclusive else "<=") if upper else (">" if exclusive else ">=")
            edge = self.constant(bound)
            lines.append(f"if type(x) is float and not x {op} {edge}: return False")
            if not -(2.0**63) <= bound < 2.0**63:
                lines.append("if type(x) is int: return False")
            else:
                limit = self.constant(int(bound))  # Go: int64 against int64(bound)
                lines.append(f"if type(x) is int and not x {op} {limit}: return False")
        return lines

    def array_lines(self, v: VNode) -> list[str] | None:
        checks = []
        if v.max_items is not None:
            checks.append(f"len(x) > {int(v.max_items)}")
        if v.min_items is not None:
            checks.append(f"len(x) < {int(v.min_items)}")
        lines = [f"if type(x) is list and ({' or '.join(checks)}): return False"] if checks else []
        if v.items is not None:
            item = fast_check(v.items)
            if item is _never:
                return None
            name = self.constant(item)
            lines += [
                "if type(x) is list:",
                "    for i in x:",
                f"        if not {name}(i): return False",
            ]
        return lines

    def object_lines(self, v: VNode) -> list[str] | None:
        props = {k: fast_check(s) for k, s in v.properties.items()}
        additional = fast_check(v.additional) if v.additional is not None else None
        if _never in props.values() or additional is _never:
            return None
        closed = v.additional_present and not v.additional_allows
        lines = ["if type(x) is dict:"]
        if v.min_properties is not None:
            lines.append(f"    if len(x) < {int(v.min_properties)}: return False")
        if v.max_properties is not None:
            lines.append(f"    if len(x) > {int(v.max_properties)}: return False")
        if props or closed or additional is not None:
            table = self.constant(props)
            lines += ["    for k, y in x.items():", f"        c = {table}.get(k)"]
            lines.append("        if c is not None:")
            lines.append("            if not c(y): return False")
            if closed:
                lines.append("        else: return False")
            elif additional is not None:
                lines.append(f"        elif not {self.constant(additional)}(y): return False")
        for key in v.required:
            lines.append(f"    if {key!r} not in x: return False")
        return lines if len(lines) > 1 else []


def _kind_lines(v: VNode) -> list[str] | None:
    types = v.types
    int_ok = "type(x) is int and INT_MIN <= x <= INT_MAX"
    if not types:
        return ["if x is None: return False"]
    if types == ("integer", "string"):
        return [f"if not (type(x) is str or ({int_ok})): return False"]
    if len(types) != 1:
        return None
    kind = types[0]
    simple = {"string": "str", "object": "dict", "array": "list"}
    if kind in simple:
        return [f"if type(x) is not {simple[kind]}: return False"]
    if kind == "boolean":
        return ["if x is not True and x is not False: return False"]
    if kind == "integer":
        if v.num_format == "int32":
            return ["if type(x) is not int or not -2147483648 <= x <= 2147483647: return False"]
        return [f"if not ({int_ok}): return False"]
    if kind == "number":
        lines = [f"if not (type(x) is float or ({int_ok})): return False"]
        if v.num_format == "float":
            lines.append(f"if abs(x) > {_FLOAT32_MAX!r}: return False")
        return lines
    return None
