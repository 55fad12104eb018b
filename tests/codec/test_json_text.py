"""JSON written as Go's encoding/json writes it (HTML-safe escapes)."""

from __future__ import annotations

import orjson
import pytest

from platform_api.gotext import go_escaped


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("plain", b'"plain"'),
        ("<a href=x>&amp;</a>", b'"\\u003ca href=x\\u003e\\u0026amp;\\u003c/a\\u003e"'),
        ("line\u2028para\u2029", b'"line\\u2028para\\u2029"'),
        ("back\\<slash", b'"back\\\\\\u003cslash"'),  # the backslash stays escaped itself
        ("\u2027\u202a\u00e2", '"\u2027\u202a\u00e2"'.encode()),  # neighbours pass as they are
    ],
)
def test_strings_are_escaped_as_go_writes_them(value: str, written: bytes) -> None:
    data = go_escaped(orjson.dumps({"k": value}))
    assert data == b'{"k":' + written + b"}"
    assert orjson.loads(data) == {"k": value}


def test_keys_are_escaped_too_and_structure_is_untouched() -> None:
    data = go_escaped(orjson.dumps({"a<b": [1, 2.5, None, True, {"&": ""}]}))
    assert data == b'{"a\\u003cb":[1,2.5,null,true,{"\\u0026":""}]}'


def test_bytes_without_those_characters_are_returned_as_they_are() -> None:
    data = orjson.dumps({"k": "v" * 1000})
    assert go_escaped(data) is data
