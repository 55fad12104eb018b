"""cel-go's strings extension (v2), kube's lists and regex libraries."""
# ruff: noqa: RUF001  (Greek letters test code-point indexing)

from __future__ import annotations

import datetime

import pytest

from tests.cel.conftest import compile_error, run, runtime_error


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("'tacocat'.charAt(3)", "o"),
        ("'tacocat'.charAt(7)", ""),
        ("'©αT'.charAt(1)", "α"),
        ("'tacocat'.indexOf('')", 0),
        ("'tacocat'.indexOf('ac')", 1),
        ("'tacocat'.indexOf('none') == -1", True),
        ("'tacocat'.indexOf('', 3)", 3),
        ("'tacocat'.indexOf('a', 3)", 5),
        ("'ta©o©αT'.indexOf('©')", 2),
        ("'tacocat'.lastIndexOf('')", 7),
        ("'tacocat'.lastIndexOf('at')", 5),
        ("'tacocat'.lastIndexOf('none') == -1", True),
        ("'tacocat'.lastIndexOf('', 3)", 3),
        ("'tacocat'.lastIndexOf('a', 3)", 1),
        ("'TacoCat'.lowerAscii()", "tacocat"),
        ("'TacoCÆt Xii'.lowerAscii()", "tacocÆt xii"),
        ("'tacoCat'.upperAscii()", "TACOCAT"),
        ("'12 days 12 hours'.replace('{0}', '2')", "12 days 12 hours"),
        ("'{0} days {0} hours'.replace('{0}', '2')", "2 days 2 hours"),
        ("'{0} days {0} hours'.replace('{0}', '2', 1).replace('{0}', '23')", "2 days 23 hours"),
        ("'hello world'.split(' ')", ["hello", "world"]),
        ("'hello world events!'.split(' ', 0)", []),
        ("'hello world events!'.split(' ', 1)", ["hello world events!"]),
        ("'hello world events!'.split(' ', 2)", ["hello", "world events!"]),
        ("'tacocat'.substring(4)", "cat"),
        ("'tacocat'.substring(0, 4)", "taco"),
        ("'ta©o©αT'.substring(2, 6)", "©o©α"),
        ("' \\ttrim\\n    '.trim()", "trim"),
        ("['x', 'y'].join()", "xy"),
        ("['x', 'y'].join('-')", "x-y"),
        ("strings.quote('first\\nsecond')", '"first\\nsecond"'),
        ("strings.quote('bell\\a')", '"bell\\a"'),
        ("'%s is %d years old'.format(['John', 42])", "John is 42 years old"),
        ("'%.3f'.format([1.2345])", "1.234"),
        ("'%f'.format([1234.5])", "1,234.500000"),
        ("'%e'.format([1234.5])", "1.234500e+03"),
        ("'%b %o %x %X'.format([5, 8, 255, 255])", "101 10 ff FF"),
        ("'%x'.format(['hi'])", "6869"),
        ("'%s'.format([[1, 'a', 2.5]])", '[1, "a", 2.500000]'),
        ("'%s'.format([{'b': 1, 'a': true}])", '{"a":true, "b":1}'),
        ("'%s %s'.format([1.5, 1000000.0])", "1.5 1e+06"),
        ("'%s'.format([duration('90s')])", "90s"),
        (
            "'%s'.format([timestamp('0001-01-01T00:00:02Z')])",
            "0001-01-01T00:00:02Z",
        ),  # Go pads years
        ("'%s'.format([null])", "null"),
        ("'100%%'.format([])", "100%"),
    ],
)
def test_strings(expr: str, value: object) -> None:
    assert run(expr) == value


def test_strings_errors() -> None:
    assert runtime_error("'tacocat'.charAt(30) == ''") == "index out of range: 30"
    assert runtime_error("'tacocat'.substring(40) == ''") == "index out of range: 40"
    assert runtime_error("'tacocat'.substring(3, 1) == ''") == (
        "invalid substring range. start: 3, end: 1"
    )
    assert runtime_error("'%d'.format([x]) == ''", x="a") == (
        "error during formatting: decimal clause can only be used on integers, was given string"
    )
    assert runtime_error("'%s %s'.format(x) == ''", x=["a"]) == "index 1 out of range"


def test_literal_format_calls_are_checked_when_compiling() -> None:
    assert compile_error("'%d'.format(['a']) == ''") == (
        "compilation failed: ERROR: <input>:1:14: error during formatting: decimal clause can "
        "only be used on integers, was given string\n | '%d'.format(['a']) == ''\n"
        " | .............^"
    )
    assert compile_error("'%s %s'.format(['a']) == ''").startswith(
        "compilation failed: ERROR: <input>:1:15: index 1 out of range"
    )
    assert compile_error("'%z'.format([1]) == ''").startswith(
        "compilation failed: ERROR: <input>:1:12: could not parse formatting clause: "
        'unrecognized formatting clause "z"'
    )
    assert compile_error("'%s'.format([1, 2]) == ''").startswith(
        "compilation failed: ERROR: <input>:1:12: too many arguments supplied to string.format "
        "(expected 1, got 2)"
    )


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("[1, 2, 3].sum()", 6),
        ("[1.5, 2.5].sum()", 4.0),
        ("[1u, 2u].sum() == 3u", True),
        ("[duration('1s'), duration('2s')].sum()", datetime.timedelta(seconds=3)),
        ("[].sum()", 0),
        ("[1, 2, 3].isSorted()", True),
        ("[3, 2, 1].isSorted()", False),
        ("['a', 'b', 'c'].isSorted()", True),
        ("[1, 5, 3].max()", 5),
        ("[1, 5, 3].min()", 1),
        ("['b', 'a'].min()", "a"),
        ("[1, 2, 3, 2].indexOf(2)", 1),
        ("[1, 2, 3, 2].lastIndexOf(2)", 3),
        ("[1, 2].indexOf(5)", -1),
        ("[[1], [2]].indexOf([2])", 1),
        ("[{'a': 1}].indexOf({'a': 1})", 0),
        ("x.indexOf(2)", 1),
        ("x.indexOf('a')", -1),
        # cel-go's optional library (version 2 and later; kube takes the latest)
        ("[1, 2].first().value()", 1),
        ("[1, 2].last().value()", 2),
        ("[].first().hasValue() || [].last().hasValue()", False),
        ("x.last().orValue(0)", 2),
    ],
)
def test_lists(expr: str, value: object) -> None:
    assert run(expr, x=[1, 2]) == value


def test_lists_errors() -> None:
    assert runtime_error("[].min() == 1") == "min called on empty list"
    assert runtime_error("[].max() == 1") == "max called on empty list"
    assert runtime_error("[9223372036854775807, 1].sum() == 1") == "integer overflow"
    assert "found no matching overload for 'sum' applied to 'list(string).()'" in compile_error(
        "['a'].sum() == ''"
    )


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("'abc 123'.find('[0-9]+')", "123"),
        ("'abc'.find('[0-9]+')", ""),
        ("'123 abc 456'.findAll('[0-9]+')", ["123", "456"]),
        ("'123 abc 456'.findAll('[0-9]+', 1)", ["123"]),
        ("'123 abc 456'.findAll('[0-9]+', 0)", []),
        ("'baaa'.findAll('a*')", ["", "aaa"]),
        ("'héllo wörld'.findAll('\\\\pL+')", ["héllo", "wörld"]),
        ("'abc'.matches('^a')", True),
    ],
)
def test_regex(expr: str, value: object) -> None:
    assert run(expr) == value


def test_regex_errors() -> None:
    assert runtime_error("'x'.find(x) == ''", x="(") == (
        "Illegal regex: error parsing regexp: missing closing ): `(`"
    )
