"""YAML as kube-apiserver v1.36 writes and reads it (sigs.k8s.io/yaml, go-yaml v2).

Each expected line below is what the reference kube-apiserver answered for a ConfigMap
(or a custom resource, for numbers) holding the value, asked with Accept: application/yaml;
each value read, what it stored from a YAML body holding the scalar.
"""

from __future__ import annotations

import math

import pytest

from platform_api.codec import BodyError, UnwritableYAML, parse_yaml, yaml_dumps
from platform_api.codec.goyaml import STR, go_tag

# value -> how kube writes ``k: value``
STRINGS = {
    "2024-01-01T00:00:00Z": 'k: "2024-01-01T00:00:00Z"',
    "2024-01-01": 'k: "2024-01-01"',
    "2024-13-01": "k: 2024-13-01",  # not a date to go-yaml: plain
    "2024-02-30": "k: 2024-02-30",
    "2024-01-01T10:00:00": "k: 2024-01-01T10:00:00",  # T without a zone: not a timestamp
    "2024-01-01 10:00:00": 'k: "2024-01-01 10:00:00"',
    "123": 'k: "123"',
    "0o17": 'k: "0o17"',
    "0x1F": 'k: "0x1F"',
    "0b101": 'k: "0b101"',
    "012": 'k: "012"',
    "09": 'k: "09"',  # not octal, but a float
    "1_000": 'k: "1_000"',
    "1e3": 'k: "1e3"',
    "1e400": "k: 1e400",  # past float64: a string to go-yaml
    ".5": 'k: ".5"',
    "+1": 'k: "+1"',
    "-1": 'k: "-1"',
    "1.0": 'k: "1.0"',
    ".inf": 'k: ".inf"',
    "-.inf": 'k: "-.inf"',
    "0xFFFFFFFFFFFFFFFFFF": "k: 0xFFFFFFFFFFFFFFFFFF",  # wider than uint64
    "18446744073709551615": 'k: "18446744073709551615"',
    "12:30:00": 'k: "12:30:00"',  # a base-60 float
    "true": 'k: "true"',
    "Yes": 'k: "Yes"',
    "on": 'k: "on"',
    "Off": 'k: "Off"',
    "y": 'k: "y"',
    "tRue": "k: tRue",
    "~": 'k: "~"',
    "null": 'k: "null"',
    "": 'k: ""',
    "NaN": "k: NaN",
    "nan": "k: nan",
    "=": "k: =",
    "<<": "k: <<",
    "- x": "k: '- x'",
    "a: b": "k: 'a: b'",
    "*star": "k: '*star'",
    'a"q': 'k: a"q',
    "tab\there": 'k: "tab\\there"',
    "trailing \n": 'k: "trailing \\n"',
    "é": "k: é",
    "日本語": "k: 日本語",
    "emoji 😀": 'k: "emoji \\U0001F600"',
    "\x01ctrl": 'k: "\\x01ctrl"',
    "line1\nline2\n": "k: |\n  line1\n  line2",
    "line1\nline2": "k: |-\n  line1\n  line2",
    " lead\nx": "k: |2-\n   lead\n  x",
}


@pytest.mark.parametrize("value", list(STRINGS))
def test_strings_are_written_as_kube_writes_them(value: str) -> None:
    text = yaml_dumps({"k": value})
    assert text.decode() == STRINGS[value] + "\n"
    if value != "0xFFFFFFFFFFFFFFFFFF":  # parse_yaml reads any hex as an integer
        assert parse_yaml(text)[0] == {"k": value}


# Characters Go's JSON leaves raw and a YAML reader does not take as they are (kube turns
# its JSON into YAML by reading it as YAML): value -> kube's line, recorded from it.
FOLDED = {
    "k\x85": "k: 'k '",  # a NEL is a line break: folded to a space
    "\x85": "k: ' '",
    "a \x85 b": "k: a b",  # with the blanks around it
    "a\x85\x85b": "k: |-\n  a\n  b",  # two breaks: one newline
    "a\x85 \x85 b": "k: |-\n  a\n  b",
    "x\u2028": "k: 'x\u2028'",  # go-yaml: no indent before the closing quote
    "x\u2028y": "k: 'x\u2028  y'",
    "x\u2029y\u2029": "k: 'x\u2029  y\u2029'",
    "x\u2028\u2029": "k: 'x\u2028\u2029'",
    "x\u2028'": "k: 'x\u2028  '''",
    "x\ufeffy": 'k: "x\\uFEFFy"',
}


@pytest.mark.parametrize("value", list(FOLDED))
def test_strings_read_back_from_json_are_written_as_kube_writes_them(value: str) -> None:
    assert yaml_dumps({"k": value}).decode() == FOLDED[value] + "\n"


@pytest.mark.parametrize("value", ["x\x7fy", "x\x80y", "x\x9f", "x\ufffey", "x\uffff"])
def test_control_characters_cannot_be_written(value: str) -> None:
    """go-yaml's reader refuses them; kube answers the request with a 500."""
    for obj in ({"k": value}, {value: "v"}, {"items": [{"k": value}]}):
        with pytest.raises(UnwritableYAML, match=r"^yaml: control characters are not allowed$"):
            yaml_dumps(obj)


def test_keys_follow_the_same_rules() -> None:
    assert yaml_dumps({"labels": {"n": "y", "app": "x"}}) == b'labels:\n  app: x\n  "n": "y"\n'


# float64 -> how kube writes it: its JSON, read back by go-yaml
NUMBERS = {
    1e20: "1e+20",
    1234567.5: "1.2345675e+06",
    0.1: "0.1",
    1e-7: "1e-07",
    -2.5: "-2.5",
    1.5e300: "1.5e+300",
    12345678901234567890.0: "12345678901234567000",  # its JSON is a uint64 to go-yaml
    1.0: "1",
}


@pytest.mark.parametrize("value", list(NUMBERS))
def test_floats_are_written_as_kube_writes_them(value: float) -> None:
    assert yaml_dumps({"k": value}).decode() == f"k: {NUMBERS[value]}\n"


def test_other_scalars() -> None:
    assert yaml_dumps({"a": 5, "b": None, "c": True, "d": [], "e": {}}) == (
        b"a: 5\nb: null\nc: true\nd: []\ne: {}\n"
    )


def test_go_tag_reads_plain_scalars_as_go_yaml_does() -> None:
    assert go_tag("5") == "tag:yaml.org,2002:int"
    assert go_tag("1e+06") == "tag:yaml.org,2002:float"
    assert go_tag("-9223372036854775808") == "tag:yaml.org,2002:int"
    assert go_tag("-9223372036854775809") == "tag:yaml.org,2002:float"
    assert go_tag("+.inf") == "tag:yaml.org,2002:float"
    assert go_tag("2024-02-29") == "tag:yaml.org,2002:timestamp"
    assert go_tag("2023-02-29") == STR
    assert go_tag("x") == go_tag("+") == go_tag("-") == STR
    assert not math.isnan(float(yaml_dumps({"k": 1.5})[3:]))


# plain scalar in a request body -> what kube-apiserver decoded it to (reference)
READ = {
    "0o17": 15,
    "0x1F": 31,
    "012": 10,
    "09": 9.0,
    "1_000": 1000,
    "1e3": 1000.0,
    "-0b101": -5,
    "9223372036854775808": 9223372036854775808,  # a uint64
    "0xFFFFFFFFFFFFFFFFFF": "0xFFFFFFFFFFFFFFFFFF",  # past uint64: a string
    "12:30:00": "12:30:00",  # base 60 is YAML 1.1's, not go-yaml's
    "1:30": "1:30",
    "2024-01-01": "2024-01-01",  # timestamps stay strings (through JSON)
    "2024-02-30": "2024-02-30",
    "1e400": "1e400",
    "NaN": "NaN",
    "=": "=",
    "yes": True,
    "n": False,
    "Off": False,
    "tRue": "tRue",
    "~": None,
}


@pytest.mark.parametrize("text", list(READ))
def test_plain_scalars_are_read_as_go_yaml_reads_them(text: str) -> None:
    value = parse_yaml(f"k: {text}\n".encode())[0]["k"]
    assert value == READ[text] and type(value) is type(READ[text])


def test_keys_are_read_then_written_as_sigs_yaml_writes_them() -> None:
    body = b"1e3: a\n0o17: b\nyes: c\n1.5: d\n0x10: e\n"
    assert parse_yaml(body)[0] == {"1000": "a", "15": "b", "true": "c", "1.5": "d", "16": "e"}


def test_explicit_tags_and_merge_keys() -> None:
    assert parse_yaml(b"a: !!int 0o17\nb: !!float 2\nc: !!str 5\n")[0] == {
        "a": 15,
        "b": 2.0,
        "c": "5",
    }
    with pytest.raises(BodyError, match=r"yaml: cannot decode !!str `abc` as a !!int"):
        parse_yaml(b"a: !!int abc\n")
    merged = parse_yaml(b"base: &b {x: 1}\nm:\n  <<: *b\n  z: 2\nplain: <<\n")[0]
    assert merged == {"base": {"x": 1}, "m": {"x": 1, "z": 2}, "plain": "<<"}
