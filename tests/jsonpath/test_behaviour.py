"""Behaviour beyond kube's own tables, each text checked against kube's implementation:
printing of numbers and strings, filter comparisons, kube's quirks, JSON output."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.jsonpath import NO_VALUE, JSONPathError, parse

POD: dict[str, Any] = {
    "metadata": {"name": "web-1", "labels": {"app": "web"}, "annotations": None},
    "spec": {"replicas": 3, "weight": 0.5, "big": 1e21, "million": 1000000.0, "tiny": 1.5e-7},
    "status": {
        "ready": True,
        "conditions": [
            {"type": "Ready", "status": "True", "count": 2},
            {"type": "Synced", "status": "False", "count": 5, "reason": "a<b&c>"},
        ],
        "phase": "",
    },
}

# (template, data, allow missing keys, Execute output, kube's error text)
GO_CHECKED: list[tuple[str, Any, bool, str | None, str | None]] = [
    # numbers print as Go's %v (scalars) or encoding/json (inside maps and lists)
    ("{.spec.replicas} {.spec.weight}", POD, False, "3 0.5", None),
    ("{.spec.big} {.spec.million} {.spec.tiny}", POD, False, "1e+21 1e+06 1.5e-07", None),
    (
        "{.spec}",
        POD,
        False,
        '{"big":1e+21,"million":1000000,"replicas":3,"tiny":1.5e-7,"weight":0.5}',
        None,
    ),
    ("{.status.conditions[1].reason}", POD, False, "a<b&c>", None),
    (
        "{.status.conditions[1]}",
        POD,
        False,
        '{"count":5,"reason":"a\\u003cb\\u0026c\\u003e","status":"False","type":"Synced"}',
        None,
    ),
    ("{.metadata.annotations}", POD, False, "null", None),
    ("{.status.phase}|{.status.ready}", POD, False, "|true", None),
    ("{1}{true}{1.5}{-2}", POD, False, "1true1.5-2", None),
    ("{@}", None, False, "<no value>", None),
    ("{}", None, False, "<no value>", None),
    # filters
    ('{.status.conditions[?(@.type=="Ready")].status}', POD, False, "True", None),
    ("{.status.conditions[?(@.count>2)].type}", POD, False, "Synced", None),
    ("{.status.conditions[?(@.count<=2)].type}", POD, False, "Ready", None),
    ("{.status.conditions[?(@.type!='Ready')].type}", POD, False, "Synced", None),
    ('{.status.conditions[?(@.type<"S")].type}', POD, False, "Ready", None),
    ("{.status.conditions[?(@.reason)].type}", POD, False, "Synced", None),
    ("{.status.conditions[?(@.count>=@.count)].type}", POD, False, "Ready Synced", None),
    (
        "{.status.conditions[?(@.count==2.0)].type}",
        POD,
        False,
        None,
        "incompatible types for comparison",
    ),
    (
        "{.status.conditions[?(@.count=='2')].type}",
        POD,
        False,
        None,
        "incompatible types for comparison",
    ),
    ("{.status.conditions[?(@==1)].type}", POD, False, None, "invalid type for comparison"),
    ("{[?(@<true)]}", [True], False, None, "invalid type for comparison"),
    (
        "{.status.conditions[?(@.*=='x')]}",
        POD,
        False,
        None,
        "can only compare one element at a time",
    ),
    ("{.status.conditions[?(@.reason=='x')]}", POD, False, None, "reason is not found"),
    ("{.status.conditions[?(@.reason=='x')]}", POD, True, "", None),
    (
        "{.metadata[?(@.name)]}",
        POD,
        False,
        None,
        "map[annotations:<nil> labels:map[app:web] name:web-1] is not array or slice and cannot be"
        " filtered",
    ),
    (
        "{.metadata.annotations[?(@.a)]}",
        POD,
        False,
        None,
        "<nil> is not array or slice and cannot be filtered",
    ),
    # an existence filter keeps elements whose path fails with a non-empty partial result
    ("{[?(@.a[0])].n}", [{"a": {"x": 1}, "n": 1}, {"a": [], "n": 2}, {"n": 3}], True, "1 2", None),
    ("{[?(nonsense)].n}", [{"n": 1}], False, "1", None),
    # unions, wildcards, recursion, ranges
    ("{.status.conditions[0,1].type}", POD, False, "Ready Synced", None),
    ("{.status.conditions[*]['type','count']}", POD, False, "Ready Synced 2 5", None),
    ("{[0,?(@.n)]}", [{"n": 1}, {"m": 2}], False, '{"n":1} {"n":1}', None),
    ("{.metadata.name.*}", POD, False, "119 101 98 45 49", None),
    ("{..type}", POD, False, "Ready Synced", None),
    ("{[]}", ["a", "b"], False, "a", None),
    ("{[0:0]}", [1], False, "", None),
    ("{[0:0]}{.x}", [1], False, None, "x is not found"),
    ("{range .a}{@}{end}", {"a": [None, 1]}, False, "[null,1]", None),
    ("{range .a[*]}{@}{end}", {"a": [None, 1]}, False, "<no value>1", None),
    (
        "{range .a[*]}{@[0]}{end}",
        {"a": [None]},
        False,
        None,
        "reflect: call of reflect.Value.Type on zero Value",
    ),
    ("{range .a[*]}{@}-{end}{end}", {"a": [1]}, False, None, "not in range, nothing to end"),
    ("{range .a[*]}{@}", {"a": [1, 2]}, False, '12{"a":[1,2]}', None),  # no end: run again on top
    ("{range .a[*]}{.b}", {"a": [{"b": 1}], "b": 2}, False, "12", None),
    ("{end}", {}, False, None, "not in range, nothing to end"),
    ("{.a[5]}", {"a": [1]}, False, None, "array index out of bounds: index 5, length 1"),
    ("{.a[0]}", {"a": []}, False, None, "array index out of bounds: index 0, length 0"),
    ("{.a[0:3]}", {"a": [1]}, False, None, "array index out of bounds: index 2, length 1"),
    ("{.a[0]}", {"a": "s"}, False, None, "string is not array or slice"),
    ("{5[0]}", {}, False, None, "int is not array or slice"),
    ("{.a.*[0]}", {"a": "s"}, False, None, "uint8 is not array or slice"),
    ("{.a.b}", {"a": None}, False, None, "b is not found"),
    ("{.a.b}", {"a": "x"}, True, "", None),
    ("{.}", {"": 1}, False, "1", None),
    ("{['a b']}", {"a": {}}, False, None, "unrecognized identifier b"),
    ('{.a}{"\\u00e9\\x41"}', {"a": "\u00e9"}, False, "\u00e9\u00e9A", None),
]


@pytest.mark.parametrize(("template", "data", "allow", "text", "error"), GO_CHECKED)
def test_against_kube(
    template: str, data: Any, allow: bool, text: str | None, error: str | None
) -> None:
    path = parse(template, allow_missing_keys=allow)
    if error is None:
        assert path.execute(data) == text
    else:
        with pytest.raises(JSONPathError) as caught:
            path.execute(data)
        assert str(caught.value) == error


def test_field_chains_match_the_general_evaluator() -> None:
    """``{.a.b}`` takes a shortcut; it must answer as the node-by-node evaluation does."""
    datas: list[Any] = [POD, None, {}, {"metadata": None}, {"metadata": {"name": None}}, [1]]
    for template in ("{.metadata.name}", "{.metadata}", "{.spec.replicas}", "{.x.y.z}"):
        for allow in (False, True):
            fast = parse(template, allow_missing_keys=allow)
            slow = parse(template, allow_missing_keys=allow)
            slow._chain = None  # the node-by-node evaluation
            assert fast._chain is not None
            for data in datas:
                try:
                    expected: Any = slow.find_results(data)
                except JSONPathError as e:
                    expected = str(e)
                try:
                    got: Any = fast.find_results(data)
                except JSONPathError as e:
                    got = str(e)
                assert got == expected, (template, allow, data)


def test_printer_column_use() -> None:
    """As kube's table convertor: missing keys allowed, the first value of the first result."""
    path = parse('{.status.conditions[?(@.type=="Ready")].status}', allow_missing_keys=True)
    assert path.find_results(POD) == [["True"]]
    assert path.find_results({"status": {}}) == [[]]
    assert path.print_results([2.5]) == "2.5"
    assert path.print_results([{"b": 1, "a": [True, None]}]) == '{"a":[true,null],"b":1}'
    assert path.print_results(["a", 1, None, NO_VALUE]) == "a 1 null <no value>"


def test_json_output() -> None:
    path = parse("{.status.conditions[*].type}{.spec.replicas}", output_json=True)
    assert path.execute(POD) == '[\n    "Ready",\n    "Synced"\n]\n[\n    3\n]\n'
    assert path.print_results([]) == "[]\n"
    assert parse("{.spec}", output_json=True).execute({"spec": {"b": {}, "a": [1.0]}}) == (
        '[\n    {\n        "a": [\n            1\n        ],\n        "b": {}\n    }\n]\n'
    )


def test_results_keep_the_data_objects() -> None:
    path = parse("{.status.conditions[0]}")
    assert path.find_results(POD)[0][0] is POD["status"]["conditions"][0]
    assert parse("{@}").find_results(None) == [[NO_VALUE]]
