"""Evaluation and printing against kube's jsonpath_test.go cases (exact texts), and more."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.jsonpath import JSONPathError, parse
from tests.jsonpath.cases import (
    ANNOTATED,
    NESTED,
    NODES,
    POINTS,
    RUNNING,
    STORE,
    TYPES,
    containers,
)

PODS4 = containers(4)
PODS6 = containers(6)
ONE = '{"name":"one","type":"integer","value":1}'
TWO = '{"name":"two","type":"float","value":2.002}'
THREE = '{"name":"three","type":"integer","value":3}'
FOUR = '{"name":"four","type":"float","value":4.004}'

# (template, data, expected Execute output) with missing keys an error.
CASES: list[tuple[str, Any, str]] = [
    # TestTypesInput
    ("{ .bools }", TYPES, "[true,false,true,false]"),
    ("{ .bools[0] }", TYPES, "true"),
    ("{ .bools[-1] }", TYPES, "false"),
    ("{ .bools[0:2] }", TYPES, "true false"),
    ("{ .bools[:2] }", TYPES, "true false"),
    ("{ .bools[:4:2] }", TYPES, "true true"),
    ("{ .integers }", TYPES, "[1,2,3,4]"),
    ("{ .integers[0] }", TYPES, "1"),
    ("{ .integers[-2] }", TYPES, "3"),
    ("{ .integers[0:2] }", TYPES, "1 2"),
    ("{ .integers[:4:2] }", TYPES, "1 3"),
    ("{ .floats }", TYPES, "[1,2.2,3.3,4]"),
    ("{ .floats[0] }", TYPES, "1"),
    ("{ .floats[-2] }", TYPES, "3.3"),
    ("{ .floats[:2] }", TYPES, "1 2.2"),
    ("{ .floats[:4:2] }", TYPES, "1 3.3"),
    ("{ .strings }", TYPES, '["one","two","three","four"]'),
    ("{ .strings[-2] }", TYPES, "three"),
    ("{ .strings[:4:2] }", TYPES, "one three"),
    ("{ .interfaces }", TYPES, '[true,"one",1,1.1]'),
    ("{ .interfaces[-2] }", TYPES, "1"),
    ("{ .interfaces[0:2] }", TYPES, "true one"),
    ("{ .interfaces[:4:2] }", TYPES, "true 1"),
    (
        "{ .maps }",
        TYPES,
        '[{"name":"one","value":1},{"name":"two","value":2.02},'
        '{"name":"three","value":3.03},{"name":"four","value":4.04}]',
    ),
    ("{ .maps[-2] }", TYPES, '{"name":"three","value":3.03}'),
    ("{ .maps[0:2] }", TYPES, '{"name":"one","value":1} {"name":"two","value":2.02}'),
    ("{ .maps[::2] }", TYPES, '{"name":"one","value":1} {"name":"three","value":3.03}'),
    ("{ .maps[1::2] }", TYPES, '{"name":"two","value":2.02} {"name":"four","value":4.04}'),
    ("{ .structs }", TYPES, f"[{ONE},{TWO},{THREE},{FOUR}]"),
    ("{ .structs[0] }", TYPES, ONE),
    ("{ .structs[-2] }", TYPES, THREE),
    ("{ .structs[:2] }", TYPES, f"{ONE} {TWO}"),
    ("{ .structs[::2] }", TYPES, f"{ONE} {THREE}"),
    ("{ .structs[1::2] }", TYPES, f"{TWO} {FOUR}"),
    # TestStructInput
    ("hello jsonpath", None, "hello jsonpath"),
    ("{..}", [1, 2, 3], "[1,2,3]"),
    ("{[?(@<5)]}", [2, 6, 3, 7], "2 3"),
    ('{"{"}', None, "{"),
    ("{[1,3,4]}", [0, 1, 2, 3, 4], "1 3 4"),
    ("{[0:2]}", ["Monday", "Tudesday"], "Monday Tudesday"),
    ("hello {.Name}", STORE, "hello jsonpath"),
    ("{$.Labels.web/html}", STORE, "15"),
    ("{$.Employees.jason}", STORE, "manager"),
    ("{$.Employees.dan}", STORE, "clerk"),
    ("{.Labels.k8s-app}", STORE, "20"),
    ("{.Bicycle[*].Color}", STORE, "red green"),
    ("{.Book[*].Author}", STORE, "Nigel Rees Evelyn Waugh Herman Melville"),
    (
        '{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}',
        STORE,
        "{red 19.95 true} {green 20.01 false} ",
    ),
    ("{..Price}", STORE, "8.95 12.99 8.99 19.95 20.01"),
    ("{...Price}", STORE, "8.95 12.99 8.99 19.95 20.01"),
    (
        "{.Bicycle}",
        STORE,
        '[{"Color":"red","IsNew":true,"Price":19.95},{"Color":"green","IsNew":false,"Price":20.01}]',
    ),
    (
        '{range .Bicycle[*]}{ @ }{ " " }{end}',
        STORE,
        '{"Color":"red","IsNew":true,"Price":19.95} {"Color":"green","IsNew":false,"Price":20.01} ',
    ),
    (
        "{.Book[-1:]}",
        STORE,
        '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}',
    ),
    (
        "{..Book[2]}",
        STORE,
        '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}',
    ),
    ("{.Bicycle[?(@.IsNew==true)]}", STORE, '{"Color":"red","IsNew":true,"Price":19.95}'),
    # TestJSONInput
    ("{[?(@.z)].id}", POINTS, "i2 i5"),
    ("{[0]['id']}", POINTS, "i1"),
    ("{[-1]['x']}", POINTS, "null"),
    # TestKubernetes
    ("{range .items[*]}{.metadata.name}, {end}{.kind}", NODES, "127.0.0.1, 127.0.0.2, List"),
    ('{range .items[*]}{.metadata.name}{"\\t"}{end}', NODES, "127.0.0.1\t127.0.0.2\t"),
    ("{.items[*].status.addresses[*].address}", NODES, "127.0.0.1 127.0.0.2 127.0.0.3"),
    (
        "{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}",
        NODES,
        "127.0.0.1, 127.0.0.2, 127.0.0.3, ",
    ),
    ("{.items[*].metadata.name}", NODES, "127.0.0.1 127.0.0.2"),
    (
        "{.items[*]['metadata.name', 'status.capacity']}",
        NODES,
        '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}',
    ),
    (
        "{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}",
        NODES,
        '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] ',
    ),
    ('{.users[?(@.name=="e2e")].user.password}', NODES, "secret"),
    ("{.items[0].metadata.labels.platform\\.io/hostname}", NODES, "127.0.0.1"),
    (
        '{.items[?(@.metadata.labels.platform\\.io/hostname=="127.0.0.1")].kind}',
        NODES,
        "None",
    ),
    ("{.items[?(@..ready==true)].metadata.name}", NODES, "127.0.0.1"),
    ("{..name}", NODES, "127.0.0.1 127.0.0.2 myself e2e"),
    # TestNestedRanges
    (
        '{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}'
        '{"+"}{end}',
        NESTED,
        "pod1:foo,bar,+pod2:baz,+",
    ),
    (
        '{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}'
        '{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}',
        NESTED,
        "pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#",
    ),
    (
        '{range .items[*]}{.metadata.name}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}'
        '{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\n"}{end}',
        NESTED,
        "pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n",
    ),
    # TestNegativeIndex
    ("{.spec.containers[0].name}", PODS4, "fake0"),
    ("{.spec.containers[0:0].name}", PODS4, ""),
    ("{.spec.containers[0:-1].name}", PODS4, "fake0 fake1 fake2"),
    ("{.spec.containers[-1].name}", PODS4, "fake3"),
    ("{.spec.containers[-1:].name}", PODS4, "fake3"),
    ("{.spec.containers[-2].name}", PODS4, "fake2"),
    ("{.spec.containers[-2:].name}", PODS4, "fake2 fake3"),
    ("{.spec.containers[-3].name}", PODS4, "fake1"),
    ("{.spec.containers[-4].name}", PODS4, "fake0"),
    ("{.spec.containers[-4:].name}", PODS4, "fake0 fake1 fake2 fake3"),
    ("{.spec.containers[5:5].name}", PODS4, ""),
    ("{.spec.containers[-5:-5].name}", PODS4, ""),
    # TestStep
    ("{.spec.containers[0:].name}", PODS6, "fake0 fake1 fake2 fake3 fake4 fake5"),
    ("{.spec.containers[0:6:].name}", PODS6, "fake0 fake1 fake2 fake3 fake4 fake5"),
    ("{.spec.containers[0:6:1].name}", PODS6, "fake0 fake1 fake2 fake3 fake4 fake5"),
    ("{.spec.containers[1:4:2].name}", PODS6, "fake1 fake3"),
    ("{.spec.containers[1:4:3].name}", PODS6, "fake1"),
    ("{.spec.containers[1:4:4].name}", PODS6, "fake1"),
    ("{.spec.containers[0:6:2].name}", PODS6, "fake0 fake2 fake4"),
    ("{.spec.containers[0:6:3].name}", PODS6, "fake0 fake3"),
    ("{.spec.containers[0:6:5].name}", PODS6, "fake0 fake5"),
    ("{.spec.containers[0:6:6].name}", PODS6, "fake0"),
]

# Cases with AllowMissingKeys(true).
MISSING_ALLOWED: list[tuple[str, Any, str]] = [
    ("{.hello}", STORE, ""),
    ("before-{.hello}after", STORE, "before-after"),
    ("{range .items[*]}{.metadata.name}{end}", {"items": []}, ""),
    (
        '{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}'
        '{"+"}{end}',
        {"items": []},
        "",
    ),
    ('{.items[?(@.metadata.annotations.color=="blue")].metadata.name}', ANNOTATED, "pod1 pod4"),
    (
        '{range .items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\\n"}{end}',
        RUNNING,
        "pod1 is Running\npod2 is Running\npod3 is Running\n",
    ),
]

# (template, data, allow missing keys, kube's error text).
ERRORS: list[tuple[str, Any, bool, str]] = [
    ("{hello}", STORE, False, "unrecognized identifier hello"),
    ("{.hello}", STORE, False, "hello is not found"),
    ("{.Labels[0]}", STORE, False, "map[string]interface {} is not array or slice"),
    ("{.Book[?(@.Price<>10)]}", STORE, False, "unrecognized filter operator <>"),
    ("{range .Labels.*}{@}{end}{end}", STORE, False, "not in range, nothing to end"),
    (
        "{............................................................Price}",
        STORE,
        False,
        "invalid multiple recursive descent",
    ),
    (
        '{.items[?(@.metadata.annotations.color=="blue")].metadata.name}',
        ANNOTATED,
        False,
        "annotations is not found",
    ),
    (
        "{.spec.containers[-1:0].name}",
        PODS4,
        False,
        "starting index 3 is greater than ending index 0",
    ),
    ("{.spec.containers[-5].name}", PODS4, False, "array index out of bounds: index -1, length 4"),
    (
        "{.spec.containers[3:1].name}",
        PODS4,
        False,
        "starting index 3 is greater than ending index 1",
    ),
    (
        "{.spec.containers[-1:-2].name}",
        PODS4,
        False,
        "starting index 3 is greater than ending index 2",
    ),
    ("{.spec.containers[0:6:0].name}", PODS6, False, "step must be > 0"),
    ("{.spec.containers[0:6:-1].name}", PODS6, False, "step must be > 0"),
]


def test_kube_cases() -> None:
    for template, data, expected in CASES:
        assert parse(template).execute(data) == expected, template


def test_kube_cases_allowing_missing_keys() -> None:
    for template, data, expected in MISSING_ALLOWED:
        assert parse(template, allow_missing_keys=True).execute(data) == expected, template


@pytest.mark.parametrize(("template", "data", "allow", "message"), ERRORS)
def test_kube_errors(template: str, data: Any, allow: bool, message: str) -> None:
    with pytest.raises(JSONPathError) as caught:
        parse(template, allow_missing_keys=allow).execute(data)
    assert str(caught.value) == message


def test_find_results_keep_one_list_per_text_action_and_range_pass() -> None:
    path = parse("{range .items[*]}{.metadata.name}, {end}{.kind}")
    assert path.find_results(NODES) == [["127.0.0.1"], [", "], ["127.0.0.2"], [", "], ["List"]]
    assert path.find_results(NODES) == path.find_results(NODES)  # parse once, evaluate many
    assert parse("{.items[*].metadata.name}").find_results(NODES) == [["127.0.0.1", "127.0.0.2"]]
