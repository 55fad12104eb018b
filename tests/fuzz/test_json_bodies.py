"""Property tests of the JSON body parser: its orjson fast path and the careful parser
give the same value, and a key held twice is always found."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from platform_api.codec.bounds import wide_number
from platform_api.codec.text import parse_json
from tests.fuzz.test_documents import JSON

_SEPARATORS = st.sampled_from([(",", ":"), (", ", ": "), (" ,\n", " :\t")])


def _holds_twice(data: bytes) -> bool:
    seen: list[bool] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        seen.append(len(keys) != len(set(keys)))
        return dict(items)

    json.loads(data, object_pairs_hook=pairs)
    return any(seen)


@given(JSON, _SEPARATORS)
@example({"a": 'x\\":', "b": ['"c":']}, (",", ":"))
def test_fast_and_careful_parsers_agree(value: Any, separators: tuple[str, str]) -> None:
    data = json.dumps(value, separators=separators).encode()
    parsed, duplicates = parse_json(data)
    assert parsed == json.loads(data)
    assert duplicates == {}


@given(JSON, st.sampled_from(["a", "name", 'q"', "\\"]), _SEPARATORS)
@example({}, "a", (",", ":"))
def test_a_key_held_twice_is_found(value: Any, key: str, separators: tuple[str, str]) -> None:
    inner = json.dumps(value, separators=separators)
    k = json.dumps(key)
    data = f'{{{k}:1,"other":{inner},{k}:2}}'.encode()
    parsed, duplicates = parse_json(data)
    assert parsed == json.loads(data)
    assert _holds_twice(data)
    assert list(duplicates.values()) == [[(key, 2)]]


# What ``wide_number`` finds, as the regular expression it replaced wrote it.
_WIDE = re.compile(rb"\d{19}|[eE]\+?\d{3}")


@given(st.text(alphabet='0123456789eE+-. x"\\', max_size=60))
@example("1" * 19)
@example("1" * 18 + "x1")
@example("2E+308")
@example("2e+30")
@example("3e0000")
def test_wide_numbers_found_as_the_pattern_finds_them(text: str) -> None:
    data = text.encode()
    assert wide_number(data) == (_WIDE.search(data) is not None)
