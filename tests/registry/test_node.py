"""RuntimeClasses: kube's validation messages (from a kube-apiserver v1.36), the
immutable handler, deprecated node label warnings, the table columns."""

from __future__ import annotations

import copy
from typing import Any

from platform_api.endpoints.tables import COLUMNS
from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.tolerations import merge_tolerations

RT = builtin_scheme().by_kind("node.platform.io", "v1", "RuntimeClass")
assert RT is not None
STRATEGY = strategy_for(RT)


def rc(**fields: Any) -> dict[str, Any]:
    return {"kind": "RuntimeClass", "metadata": {"name": "rc"}, **fields}


def errors(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in STRATEGY.validate(obj)]


def test_handler_required_and_a_label() -> None:
    assert errors(rc()) == ["handler: Required value"]
    assert errors(rc(handler="A_b"))[0].startswith(
        'handler: Invalid value: "A_b": a lowercase RFC 1123 label must consist of'
    )


def test_overhead_and_scheduling_rules() -> None:
    obj = rc(
        handler="runc",
        overhead={
            "podFixed": {"cpu": "-1", "foo": "1", "example.com/x": "1.5", "requests.cpu": "1"}
        },
        scheduling={
            "nodeSelector": {"a b": "c"},
            "tolerations": [
                {"key": "k", "operator": "Bad"},
                {"operator": "Equal"},
                {"key": "k", "operator": "Exists", "value": "v"},
                {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5},
                {"key": "k", "operator": "Exists", "value": "v"},
                {"key": "z", "effect": "Bogus"},
            ],
        },
    )
    got = errors(obj)
    assert got[:5] == [
        'overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        'overhead.limits[foo]: Invalid value: "foo": must be a standard resource type or fully '
        "qualified",
        'overhead.limits[foo]: Invalid value: "foo": must be a standard resource for containers',
        'overhead.limits[example.com/x]: Invalid value: "1500m": must be an integer',
        'overhead.limits[requests.cpu]: Invalid value: "requests.cpu": must be a standard '
        "resource for containers",
    ]
    assert got[5].startswith('scheduling.nodeSelector: Invalid value: "a b": name part must')
    assert got[6:] == [
        'scheduling.tolerations[0].operator: Unsupported value: "Bad": supported values: '
        '"Equal", "Exists"',
        'scheduling.tolerations[1].operator: Invalid value: "Equal": operator must be Exists '
        'when `key` is empty, which means "match all values and all keys"',
        'scheduling.tolerations[2].operator: Invalid value: "v": value must be empty when '
        "`operator` is 'Exists'",
        'scheduling.tolerations[3].effect: Invalid value: "NoSchedule": effect must be '
        "'NoExecute' when `tolerationSeconds` is set",
        'scheduling.tolerations[4].operator: Invalid value: "v": value must be empty when '
        "`operator` is 'Exists'",
        'scheduling.tolerations[5].effect: Unsupported value: "Bogus": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        'scheduling.tolerations[4]: Duplicate value: {"Key":"k","Operator":"Exists","Value":"v",'
        '"Effect":"","TolerationSeconds":null}',
    ]


def test_handler_is_immutable_and_updates_need_a_version() -> None:
    old = rc(handler="runc")
    old["metadata"].update(resourceVersion="1", uid="u")
    new = copy.deepcopy(old)
    new["handler"] = "kata"
    assert [str(e) for e in STRATEGY.validate_update(new, old)] == [
        'handler: Invalid value: "kata": field is immutable'
    ]
    assert STRATEGY.allow_create_on_update and not STRATEGY.allow_unconditional_update


def test_deprecated_node_labels_warn() -> None:
    obj = rc(handler="runc", scheduling={"nodeSelector": {"beta.platform.io/arch": "amd64"}})
    assert STRATEGY.warnings(obj, None) == [
        'scheduling.nodeSelector: deprecated since v1.14; use "platform.io/arch" instead'
    ]


def test_columns() -> None:
    printer = COLUMNS[("node.platform.io", "runtimeclasses")]
    assert [c.name for c in printer.columns] == ["Name", "Handler", "Age"]
    assert printer.cells(rc(handler="runc"))[:2] == ["rc", "runc"]


def test_merge_tolerations_keeps_the_wider_one() -> None:
    pod = [{"key": "dedicated", "operator": "Exists"}]
    extra = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    assert merge_tolerations(pod, extra) == pod
    assert merge_tolerations(extra, pod) == pod
    equal = [{"key": "a", "operator": "Equal", "value": "v"}]
    assert merge_tolerations(equal, copy.deepcopy(equal)) == equal
    assert merge_tolerations([], extra) == extra
