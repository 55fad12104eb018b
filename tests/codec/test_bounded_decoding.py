"""The bounded request-body decoders: depth, aliases, numbers, text, tags (codec.bounds)."""

from __future__ import annotations

import math
import time

import orjson
import pytest

from platform_api.codec import BodyError, DepthError, parse_json, parse_yaml
from platform_api.codec.bounds import (
    MAX_DEPTH,
    SAFE_DEPTH,
    OverflowFloat,
    as_interface_values,
    check_json_depth,
    deeper_than,
    whole_floats_to_ints,
)
from platform_api.codec.protobuf_special import raw_json
from platform_api.codec.protobuf_wire import WireError
from platform_api.endpoints.typemeta import summarize


def nest(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def laughs() -> bytes:
    doc = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    prev = "a"
    for name in "bcdefghi":
        doc += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        prev = name
    return doc.encode()


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000, 1_000_000])
def test_json_past_kubes_limit_is_refused_fast(depth: int) -> None:
    started = time.monotonic()
    with pytest.raises(DepthError) as caught:
        parse_json(b'{"a":' + nest(depth) + b"}")
    assert str(caught.value) == "exceeded max depth"
    assert caught.value.char == "[" and caught.value.limit == MAX_DEPTH
    assert time.monotonic() - started < 1


def test_json_past_this_servers_limit_names_it() -> None:
    with pytest.raises(DepthError) as caught:
        parse_json(nest(SAFE_DEPTH + 1))
    assert caught.value.limit == SAFE_DEPTH


def test_json_at_the_limit_parses_and_encodes() -> None:
    value, _ = parse_json(nest(SAFE_DEPTH))
    assert orjson.loads(orjson.dumps(value)) == value


def test_brackets_in_strings_do_not_count() -> None:
    text = b'{"a":"' + b"[" * 50_000 + b'\\"{"}'
    assert parse_json(text)[0] == {"a": "[" * 50_000 + '"{'}
    check_json_depth(b'["' + b"{" * 500 + b'"]')
    escaped = b'{"a":"\\\\","b":"\\"' + b"[" * 500 + b'"}'
    assert parse_json(escaped)[0] == {"a": "\\", "b": '"' + "[" * 500}


def test_objects_count_like_arrays() -> None:
    with pytest.raises(DepthError) as caught:
        parse_json(b'{"a":' * 300 + b"1" + b"}" * 300)
    assert caught.value.char == "{"


def test_numbers_past_float64_keep_their_text() -> None:
    value, _ = parse_json(b'{"a":1e400,"b":-1e400}')
    assert isinstance(value["a"], OverflowFloat) and value["a"].literal == "1e400"
    assert value["b"] == -math.inf and value["b"].literal == "-1e400"


def test_integers_past_cpythons_digit_limit_keep_their_text() -> None:
    """CPython refuses to parse more than 4300 digits; such a number is past float64 too,
    and Go refuses it by its text (an internal error here before)."""
    huge = "9" * 5000
    value, _ = parse_json(f'{{"a":{huge},"b":-{huge}}}'.encode())
    assert isinstance(value["a"], OverflowFloat) and value["a"].literal == huge
    assert value["b"].literal == "-" + huge
    with pytest.raises(BodyError) as raised:
        parse_json(f'{{"a":{huge}}}'.encode(), True)
    assert (
        str(raised.value) == f"json: cannot unmarshal number {huge} into Go value of type float64"
    )
    assert parse_yaml(f"a: {huge}\nb: -{huge}\n".encode())[0] == {"a": huge, "b": "-" + huge}


def test_unstructured_numbers_follow_go_interface_decoding() -> None:
    value, _ = parse_json(b'{"big":99999999999999999999,"ok":9223372036854775807}', True)
    assert value == {"big": 1e20, "ok": 9223372036854775807}
    assert isinstance(value["big"], float)
    with pytest.raises(BodyError) as caught:
        parse_json(b'{"a":[1e400]}', unstructured=True)
    assert str(caught.value) == "json: cannot unmarshal number 1e400 into Go value of type float64"
    assert caught.value.bare


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"a":NaN}', "invalid character 'N' looking for beginning of value"),
        (b'{"a":Infinity}', "invalid character 'I' looking for beginning of value"),
        (b'{"a":-Infinity}', "invalid character 'I' in numeric literal"),
        (b'\xef\xbb\xbf{"a":1}', "invalid character '\\ufeff' looking for beginning of value"),
        # broken literals, as kube-apiserver v1.36 words them (reference)
        (b"nope", "invalid character 'o' in literal null (expecting 'u')"),
        (b'{"metadata": {"name": nul}}', "invalid character '}' in literal null (expecting 'l')"),
        (b"[tru", "unexpected end of JSON input"),
        (b"[fals]", "invalid character ']' in literal false (expecting 'e')"),
        # Go's scanner names a byte that is not UTF-8 (reference, 2026-11-30)
        (b"\x81\x82", "invalid character '\\x81' looking for beginning of value"),
        (b'{"a":"\x81"} \xe2\x82', "invalid character '\\xe2' after top-level value"),
        (b"\xef\xbf\xbd", "invalid character '\ufffd' looking for beginning of value"),
    ],
)
def test_go_json_refusals(body: bytes, message: str) -> None:
    with pytest.raises(BodyError) as caught:
        parse_json(body)
    assert str(caught.value) == message


def test_invalid_utf8_and_lone_surrogates_become_replacement_characters() -> None:
    value, _ = parse_json(b'{"a":"\xff ok","b":["x\\ud800y"],"\\udc00":"\\ud83d\\ude00"}')
    assert value == {"a": "\ufffd ok", "b": ["x\ufffdy"], "\ufffd": "\U0001f600"}
    orjson.dumps(value)


def test_duplicate_keys_still_recorded() -> None:
    value, duplicates = parse_json(b'{"a":1,"a":2}')
    assert value == {"a": 2} and list(duplicates.values()) == [[("a", 1)]]


def test_yaml_billion_laughs_is_refused_fast() -> None:
    started = time.monotonic()
    with pytest.raises(BodyError) as caught:
        parse_yaml(laughs())
    assert str(caught.value) == "yaml: document contains excessive aliasing"
    assert caught.value.bare
    assert time.monotonic() - started < 1


def test_yaml_few_aliases_expand() -> None:
    value, _ = parse_yaml(b"a: &l {x: v}\nb: *l\nc:\n  <<: *l\n  z: w\n")
    assert value == {"a": {"x": "v"}, "b": {"x": "v"}, "c": {"x": "v", "z": "w"}}


@pytest.mark.parametrize(("depth", "limit"), [(MAX_DEPTH + 1, MAX_DEPTH), (100_000, MAX_DEPTH)])
def test_yaml_flow_depth_past_kubes_limit(depth: int, limit: int) -> None:
    started = time.monotonic()
    with pytest.raises(DepthError) as caught:
        parse_yaml(b"a: 1\nb: " + nest(depth) + b"\n")
    assert str(caught.value) == f"yaml: line 2: exceeded max depth of {limit}"
    assert time.monotonic() - started < 1.5


def test_yaml_depth_past_this_servers_limit_and_on_the_first_line() -> None:
    with pytest.raises(DepthError) as caught:
        parse_yaml(nest(SAFE_DEPTH + 1))
    assert str(caught.value) == f"yaml: exceeded max depth of {SAFE_DEPTH}"


def test_yaml_block_depth() -> None:
    doc = "".join(" " * i + "a:\n" for i in range(SAFE_DEPTH + 5)).encode()
    with pytest.raises(DepthError):
        parse_yaml(doc)


def test_yaml_aliases_cannot_nest_past_the_limit() -> None:
    doc = "a0: &a0 " + "[" * 150 + "]" * 150 + "\n"
    doc += "a1: &a1 " + "[" * 150 + "*a0" + "]" * 150 + "\n"
    with pytest.raises(DepthError):
        parse_yaml(doc.encode())


def test_yaml_first_document_only() -> None:
    assert parse_yaml(b"a: 1\n---\nb: 2\n")[0] == {"a": 1}
    assert parse_yaml(b"")[0] is None


def test_yaml_tags_decode_as_go_yaml_does() -> None:
    doc = (
        b"a: !foo 12\nb: !!binary aGVsbG8=\nc: !!python/name:os.system\n"
        b'd: !!python/object/apply:os.system ["true"]\ne: !!str 12\nf: 2001-12-14\n'
    )
    assert parse_yaml(doc)[0] == {
        "a": "12",
        "b": "hello",
        "c": "",
        "d": ["true"],
        "e": "12",
        "f": "2001-12-14",
    }


def test_yaml_1_1_scalars_as_go_yaml_reads_them() -> None:
    assert parse_yaml(b"a: y\nb: N\nc: yes\nd: yy\ne: 1.0e400\n")[0] == {
        "a": True,
        "b": False,
        "c": True,
        "d": "yy",
        "e": "1.0e400",
    }


def test_yaml_keys_become_strings() -> None:
    assert parse_yaml(b"1: a\ntrue: b\nfalse: c\n")[0] == {"1": "a", "true": "b", "false": "c"}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (b"a: !!int abc\n", "yaml: cannot decode !!str `abc` as a !!int"),
        (b"~: a\n", 'unsupported map key of type: %!s(<nil>), key: <nil>, value: "a"'),
        (b"? [a, b]\n: c\n", 'yaml: invalid map key: []interface {}{"a", "b"}'),
        # the reference's answers: go-yaml's %#v of a collection key, nested and typed
        (
            b"a: {? {b: [1, x, null, 1.5, {2: y}]} : 1}",
            'yaml: invalid map key: map[interface {}]interface {}{"b":[]interface {}{1, "x", '
            "interface {}(nil), 1.5, map[interface {}]interface {}{2:true}}}",
        ),
        (
            b"a: {? [1, {c: d}] : 1}",
            'yaml: invalid map key: []interface {}{1, map[interface {}]interface {}{"c":"d"}}',
        ),
        (b"a: {? {? [1]: 2} : 1}", "yaml: invalid map key: []interface {}{1}"),
        (
            b"a: {? {b: 1e6, a: 1000000.0, c: 0x10, d: 1e-7} : 1}",
            'yaml: invalid map key: map[interface {}]interface {}{"a":1e+06, "b":1e+06, '
            '"c":16, "d":1e-07}',
        ),
        (
            b"a: {? {b: c, null: 1, 1.5: 2, 1: a} : 1}",
            "yaml: invalid map key: map[interface {}]interface {}{interface {}(nil):1, "
            '"b":"c", 1:"a", 1.5:2}',
        ),
        (b"a: 1\nb:\n  c: *abels\n", "yaml: unknown anchor 'abels' referenced"),
        (b"- *b\n", "yaml: unknown anchor 'b' referenced"),
        (b"a: .inf\n", "json: unsupported value: +Inf"),
        (b"a: [-.inf]\n", "json: unsupported value: -Inf"),
        (b"a: .nan\n", "json: unsupported value: NaN"),
        (b'a: "\xff"\n', "yaml: invalid leading UTF-8 octet"),
        (b"a: 1\nb:\n  c: [\n", "yaml: line 3: did not find expected node content"),
        (b"a: 1\nb:\n\tc: 1\n", "yaml: line 3: found character that cannot start any token"),
        (b"a: b: c\n", "yaml: mapping values are not allowed in this context"),
    ],
)
def test_yaml_refusals(doc: bytes, message: str) -> None:
    with pytest.raises(BodyError) as caught:
        parse_yaml(doc)
    assert str(caught.value) == message and caught.value.bare


def test_yaml_maps_are_sorted_as_sigs_yaml_hands_them_on() -> None:
    """kube decodes the JSON go-yaml's maps were written to, keys sorted: of two bad
    fields it names the first in that order (the reference names annotations here)."""
    value = parse_yaml(
        b"metadata:\n  labels: {x: 1}\n  annotations: {x: 1}\ndata: {b: 1, a: [z]}\n"
    )[0]
    assert list(value) == ["data", "metadata"]
    assert list(value["metadata"]) == ["annotations", "labels"]
    assert list(value["data"]) == ["a", "b"]


def test_yaml_long_scalar() -> None:
    assert parse_yaml(b"a: " + b"x" * 1_000_000 + b"\n")[0] == {"a": "x" * 1_000_000}


def test_decoded_depth_is_measured_without_recursion() -> None:
    value: object = 1
    for _ in range(100_000):
        value = {"a": [value]}
    assert deeper_than(value)
    assert not deeper_than(orjson.loads(nest(SAFE_DEPTH)))
    assert deeper_than(orjson.loads(nest(SAFE_DEPTH + 1)))


def test_protobuf_raw_json_goes_through_the_bounded_parser() -> None:
    assert raw_json(b'{"a":99999999999999999999}', lambda _: None) == {"a": 1e20}  # type: ignore[arg-type,return-value]
    with pytest.raises(WireError) as caught:
        raw_json(nest(SAFE_DEPTH + 1), lambda _: None)  # type: ignore[arg-type,return-value]
    assert str(caught.value) == "invalid raw JSON: exceeded max depth"


def test_interface_numbers_in_place() -> None:
    data = b'{"a":[99999999999999999999,1,true],"b":{"c":9223372036854775807}}'
    value = orjson.loads(data.replace(b"99999999999999999999", b"1"))
    value["a"][0] = 99999999999999999999
    as_interface_values(data, value)
    assert value == {"a": [1e20, 1, True], "b": {"c": 9223372036854775807}}
    assert isinstance(value["a"][0], float) and value["a"][2] is True
    huge = b"1" + b"0" * 400
    with pytest.raises(BodyError) as caught:
        as_interface_values(huge, [int(huge)])
    assert str(caught.value) == (
        f"json: cannot unmarshal number {huge.decode()} into Go value of type float64"
    )
    untouched = [10**30]
    as_interface_values(b"[short]", untouched)  # no long digit run in the text: no walk
    assert untouched == [10**30]


def test_yaml_integers_past_float64_stay_strings() -> None:
    huge = "1" + "0" * 400
    assert parse_yaml(f"a: {huge}\nb: 0x1f\n".encode())[0] == {"a": huge, "b": 31}


def _densest_block_nesting(levels: int) -> bytes:
    """Mapping, then sequence at the same column, then mapping one column in: the most
    levels YAML's block style packs into a column (two)."""
    lines = []
    for i in range(levels // 2):
        lines += [" " * i + f"k{i}:", " " * i + "-"]
    return ("\n".join(lines) + " x\n").encode()


def test_yaml_cheap_bound_covers_the_densest_block_nesting() -> None:
    assert parse_yaml(_densest_block_nesting(190))[0] is not None
    with pytest.raises(DepthError) as caught:
        parse_yaml(_densest_block_nesting(SAFE_DEPTH + 2))
    assert str(caught.value).endswith(f"exceeded max depth of {SAFE_DEPTH}")


def test_yaml_flat_documents_skip_the_event_pass_quickly() -> None:
    doc = b"a:\n" + b"- 1\n" * 20_000
    started = time.monotonic()
    assert len(parse_yaml(doc)[0]["a"]) == 20_000
    assert time.monotonic() - started < 2


def test_whole_floats_become_ints_in_place() -> None:
    value = {"a": 2.0, "b": [1.5, -3.0, True, {"c": 1e300}], "d": "2.0"}
    whole_floats_to_ints(value)
    assert value == {"a": 2, "b": [1.5, -3, True, {"c": 1e300}], "d": "2.0"}
    assert type(value["a"]) is int and type(value["b"][3]["c"]) is float


def test_a_refused_body_is_summarized_as_go_cuts_and_writes_it() -> None:
    """kube cuts the body at 30 bytes, then JSON writes each byte that is not UTF-8 (a cut
    character's too) as U+FFFD (reference, 2026-11-30)."""
    body = '{"metadata":{"name":"x"},"data":{"ab":"éé"}} x'.encode()
    assert summarize(body) == '{"metadata":{"name":"x"},"data ...'
    cut = '{"metadata":{"name":"x"},"d":éé}'.encode()  # byte 30 is half an é
    assert summarize(cut) == '{"metadata":{"name":"x"},"d":\ufffd ...'
    assert summarize(b'{"a":"\x81"} \xe2\x82') == '{"a":"\ufffd"} \ufffd\ufffd'
