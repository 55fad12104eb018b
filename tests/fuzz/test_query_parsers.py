"""Property tests of the parsers that read query parameters and scalar texts.

Each parser meets arbitrary input with only its documented error (SelectorError,
StatusError, ValueError, QuantityError, ...) and round-trips what it prints.
"""

from __future__ import annotations

import contextlib
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from platform_api import quantity
from platform_api.apiextensions.schema import netfmt
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.apiserver.flagvalues import parse_duration as parse_flag_duration
from platform_api.endpoints import continuation
from platform_api.endpoints.list import parse_revision
from platform_api.errors import StatusError
from platform_api.fieldselectors import parse_field_selector
from platform_api.goduration import format_duration, parse_duration, parse_openapi_duration
from platform_api.gotext import parse_int as go_parse_int
from platform_api.selectors import Requirement, SelectorError, parse_label_selector

INT64 = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)
SELECTOR_TEXT = st.one_of(st.text(), st.text(alphabet=" =!(),<>\\innotx-_./a9", max_size=40))
NUMERIC_TEXT = st.one_of(st.text(), st.text(alphabet="0123456789+-_ .eEiKMGmnu\u0661", max_size=30))


@given(SELECTOR_TEXT)
def test_label_selector_raises_only_selector_error(text: str) -> None:
    with contextlib.suppress(SelectorError):
        parse_label_selector(text)


@given(SELECTOR_TEXT)
def test_field_selector_raises_only_selector_error(text: str) -> None:
    with contextlib.suppress(SelectorError):
        parse_field_selector(text)


_NAME = st.from_regex(r"\A[a-z0-9]([a-z0-9._-]{0,10}[a-z0-9])?\Z")
_KEY = st.one_of(_NAME, st.builds("{}/{}".format, st.from_regex(r"\A[a-z]{1,8}\.io\Z"), _NAME))
_REQUIREMENT = st.one_of(
    st.builds(Requirement, _KEY, st.sampled_from(["=", "==", "!="]), st.tuples(_NAME)),
    st.builds(
        Requirement,
        _KEY,
        st.sampled_from(["in", "notin"]),
        st.lists(_NAME, min_size=1, max_size=3, unique=True).map(lambda v: tuple(sorted(v))),
    ),
    st.builds(Requirement, _KEY, st.sampled_from(["exists", "!"])),
    st.builds(
        Requirement,
        _KEY,
        st.sampled_from([">", "<"]),
        st.tuples(st.integers(0, (1 << 63) - 1).map(str)),
    ),  # "-1" is no label value
)


def _render(r: Requirement) -> str:
    if r.op == "exists":
        return r.key
    if r.op == "!":
        return "!" + r.key
    if r.op in ("in", "notin"):
        return f"{r.key} {r.op} ({','.join(r.values)})"
    return f"{r.key}{r.op}{r.values[0]}"


@given(st.lists(_REQUIREMENT, max_size=4))
def test_label_selector_round_trip(requirements: list[Requirement]) -> None:
    parsed = parse_label_selector(",".join(_render(r) for r in requirements))
    # the fast path keeps one of each repeated term (the same matches as kube's list)
    assert set(parsed.requirements) == set(requirements)
    keys = [r.key for r in parsed.requirements]
    assert keys == sorted(keys)


_FIELD_VALUE = st.text(alphabet=string.ascii_letters + "\\,=.-_ ", max_size=12)


@given(st.lists(st.tuples(st.from_regex(r"\A[a-z][a-zA-Z.]{0,15}\Z"), _FIELD_VALUE), max_size=3))
def test_field_selector_round_trip(terms: list[tuple[str, str]]) -> None:
    """Escaped values (``\\,`` ``\\=`` ``\\\\``) come back as written."""

    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")

    parsed = parse_field_selector(",".join(f"{f}={escape(v)}" for f, v in terms))
    assert sorted((t.field, t.value) for t in parsed.terms) == sorted(terms)


@given(st.one_of(st.text(), st.text(alphabet=string.ascii_letters + string.digits + "-_=")))
def test_continue_token_raises_only_status_error(token: str) -> None:
    try:
        continuation.decode(token)
    except StatusError as e:
        assert e.status()["code"] == 400


# A name or namespace segment: kube refuses the names "." and ".." (path segment names),
# so no start key the list handler writes holds them (and path.Clean would change it).
_SEGMENT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1
).filter(lambda segment: segment not in (".", ".."))


@given(
    st.integers(min_value=-1, max_value=(1 << 63) - 1).filter(bool),
    st.one_of(_SEGMENT, st.tuples(_SEGMENT, _SEGMENT).map("/".join)),
)
def test_continue_token_round_trip(revision: int, key: str) -> None:
    """Every start key the list handler writes (``<name>\\x00``, ``<ns>/<name>\\x00``)
    reads back as written."""
    start = key + "\x00"
    assert continuation.decode(continuation.encode(revision, start)) == (revision, start)


def test_continue_token_bool_revision_is_rejected() -> None:
    """Finding: ``"rv": true`` passed as revision 1 (bool is an int to Python)."""
    import base64

    raw = b'{"v":"meta.platform.io/v1","rv":true,"start":"a\\u0000"}'
    with pytest.raises(StatusError) as caught:
        continuation.decode(base64.urlsafe_b64encode(raw).decode().rstrip("="))
    assert "cannot unmarshal bool" in str(caught.value.status()["message"])


@given(NUMERIC_TEXT)
@example("1_0")
@example(" 1")
@example("\u0661")
@example("9" * 5000)
def test_go_parse_int_matches_strconv(text: str) -> None:
    body = text[1:] if text[:1] in ("+", "-") else text
    go_valid = body != "" and all(c in string.digits for c in body)
    try:
        value = go_parse_int(text)
    except ValueError as e:
        assert str(e).startswith('strconv.ParseInt: parsing "')
        assert not go_valid or "value out of range" in str(e)
        return
    assert (
        go_valid
        and -(1 << 63) <= value < 1 << 63
        and value == int(body) * (-1 if text[0] == "-" else 1)
    )


@given(INT64)
def test_go_parse_int_round_trip(value: int) -> None:
    assert go_parse_int(str(value)) == value


@given(INT64, st.sampled_from([(16, "0x"), (16, "0X"), (8, "0o"), (8, "0"), (2, "0b")]))
def test_go_parse_int_base_zero_reads_go_literals(value: int, form: tuple[int, str]) -> None:
    """strconv's base 0: a prefix names the base, a leading 0 is octal."""
    radix, prefix = form
    digits = format(abs(value), {16: "x", 8: "o", 2: "b"}[radix])
    text = ("-" if value < 0 else "") + prefix + digits
    assert go_parse_int(text, base=0) == value


def test_go_parse_int_base_zero_refuses_what_strconv_refuses() -> None:
    for text in ("09", "0x", "0b2", "0o8", "1__0", "_1", "0x_", " 1"):  # Go takes 1_0, 0x_1
        with pytest.raises(ValueError, match="invalid syntax"):
            go_parse_int(text, base=0)
    assert go_parse_int("18446744073709551615", unsigned=True, base=0) == (1 << 64) - 1
    with pytest.raises(ValueError, match="value out of range"):
        go_parse_int("0x" + "f" * 17, unsigned=True, base=0)


@given(NUMERIC_TEXT)
@example("\u0661")
@example("18446744073709551616")
def test_resource_version_raises_only_bad_request(text: str) -> None:
    try:
        revision = parse_revision(text)
    except StatusError as e:
        assert e.status()["code"] == 400
        return
    assert text.isascii() and text.isdigit() and 0 <= revision < 1 << 64


@pytest.mark.parametrize(
    ("text", "tail"),
    [
        ("\u0661", "invalid syntax"),
        ("99999999999999999999999", "value out of range"),
        ("-1", "invalid syntax"),
    ],
)
def test_resource_version_go_messages(text: str, tail: str) -> None:
    """Finding: U+0661 (Arabic-Indic one) was revision 1 and 10**23 reached storage (500)."""
    with pytest.raises(StatusError) as caught:
        parse_revision(text)
    assert caught.value.status()["message"] == (
        f'invalid resource version: resourceVersion: Invalid value: "{text}": '
        f'strconv.ParseUint: parsing "{text}": {tail}'
    )


DURATION_TEXT = st.one_of(st.text(), st.text(alphabet="0123456789.+-hmsunµμ ", max_size=20))


@given(DURATION_TEXT)
def test_go_durations_raise_only_their_errors(text: str) -> None:
    with contextlib.suppress(ValueError):
        parse_duration(text)
    with contextlib.suppress(ConfigError):
        parse_flag_duration("timeout", text)
    assert parse_openapi_duration(text) is None or isinstance(parse_openapi_duration(text), int)
    assert isinstance(netfmt.is_duration(text), bool)


@given(INT64)
def test_go_duration_round_trip(nanos: int) -> None:
    assert parse_duration(format_duration(nanos)) == nanos
    assert parse_openapi_duration(format_duration(nanos)) == nanos


@given(NUMERIC_TEXT)
@example("1" * 5000)
@example("1e10000000")
def test_quantity_raises_only_quantity_error(text: str) -> None:
    try:
        q = quantity.parse(text)
    except quantity.QuantityError:
        return
    canonical = str(q)
    assert quantity.parse(canonical).value == q.value
    assert quantity.canonical(canonical) == canonical
    assert isinstance(q.milli_value(), int) and isinstance(q.int_value(), int)


_QUANTITY = st.builds(
    "{}{}{}".format,
    st.sampled_from(["", "-", "+"]),
    st.from_regex(r"\A([0-9]{1,25}|[0-9]{0,12}\.[0-9]{1,12})\Z"),
    st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ei", "n", "u", "e3", "E-7", "e40"]),
)


@given(_QUANTITY)
def test_quantity_canonical_round_trip(text: str) -> None:
    q = quantity.parse(text)
    again = quantity.parse(str(q))
    assert again.value == q.value
    assert str(again) == str(q)


def test_huge_quantities_scale_like_go() -> None:
    """Findings: ``1e10000000`` raised decimal.Overflow from milli_value (500 on a
    ResourceQuota) and 5000 digits raised int()'s digit-limit ValueError."""
    assert quantity.parse("1e10000000").milli_value() == 0  # Go's overflowing int64 answer
    assert str(quantity.parse("1" * 5000)) == "1" * 5000
    assert quantity.parse("2k").milli_value() == 2_000_000
