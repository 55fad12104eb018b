"""LimitRange and PriorityClass validation, with the reference kube-apiserver's messages."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api import errors
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.limitrange import validate_limit_range
from platform_api.registry.scheduling import validate_priority_class
from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme

Obj = dict[str, Any]


def texts(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


def test_limit_range_rules_in_kube_order() -> None:
    limits = [
        {
            "type": "Container",
            "min": {"cpu": "2"},
            "max": {"cpu": "1000m"},
            "default": {"cpu": "500m", "memory": "1Gi", "example.com/gpu": "1"},
            "defaultRequest": {"cpu": "3", "example.com/gpu": "2"},
            "maxLimitRequestRatio": {"cpu": "500m"},
        },
        {"type": "Container"},
        {
            "type": "Pod",
            "default": {"cpu": "1"},
            "defaultRequest": {"cpu": "1"},
            "max": {"foo": "1"},
        },
        {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}},
        {"type": "bogus"},
        {
            "type": "example.com/x",
            "min": {"a": "1", "memory": "2"},
            "max": {"memory": "1"},
            "maxLimitRequestRatio": {"memory": "5"},
        },
    ]
    assert texts(validate_limit_range({"spec": {"limits": limits}})) == [
        'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1',
        'spec.limits[0].defaultRequest[cpu]: Invalid value: "3": default request value 3 is greater than max value 1',
        'spec.limits[0].defaultRequest[cpu]: Invalid value: "3": default request value 3 is greater than default limit value 500m',
        'spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default value 500m',
        'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1',
        'spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: "2": default request value 2 is greater than default limit value 1',
        'spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: "2": default value 1 must equal to defaultRequest value 2 in example.com/gpu',
        'spec.limits[1].type: Duplicate value: "Container"',
        'spec.limits[2].max[foo]: Invalid value: "foo": must be a standard resource type or fully qualified',
        'spec.limits[2].max[foo]: Invalid value: "foo": must be a standard resource for containers',
        "spec.limits[2].default: Forbidden: may not be specified when `type` is 'Pod'",
        "spec.limits[2].defaultRequest: Forbidden: may not be specified when `type` is 'Pod'",
        "spec.limits[3].limits: Required value: either minimum or maximum storage value is required, but neither was provided",
        'spec.limits[4].type: Invalid value: "bogus": must be a standard limit type or fully qualified',
        'spec.limits[5].min[a]: Invalid value: "a": must be a standard resource type or fully qualified',
        'spec.limits[5].min[memory]: Invalid value: "2": min value 2 is greater than max value 1',
        'spec.limits[5].maxLimitRequestRatio[memory]: Invalid value: "5": ratio 5 is greater than max/min = 0.500000',
    ]


def test_a_sound_limit_range_passes() -> None:
    limits = [
        {
            "type": "Container",
            "max": {"cpu": "1"},
            "default": {"cpu": "500m"},
            "defaultRequest": {"cpu": "100m"},
        },
        {
            "type": "Pod",
            "max": {"memory": "2Gi"},
            "min": {"memory": "1Mi"},
            "maxLimitRequestRatio": {"memory": "2"},
        },
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}},
    ]
    assert validate_limit_range({"spec": {"limits": limits}}) == []


# LimitRanges sent to kube-apiserver v1.36 (dry runs): the stored limits, or the 422 message.
KUBE_DEFAULTS = json.loads(
    (Path(__file__).parent / "fixtures" / "limitrange_defaults_kube.json").read_text()
)


@pytest.mark.parametrize("name", sorted(KUBE_DEFAULTS))
def test_container_limits_default_from_max_default_and_min_as_kube(name: str) -> None:
    """A default limit from the max, a default request from the default limit and then
    the min; the defaults are checked against the bounds like given ones."""
    limits = copy.deepcopy(KUBE_DEFAULTS[name]["limits"])
    status, answer = KUBE_DEFAULTS[name]["kube"]
    obj = {"apiVersion": "v1", "kind": "LimitRange", "spec": {"limits": limits}}
    apply_defaults("", "LimitRange", obj)
    errs = validate_limit_range(obj)
    if status == 201:
        assert (errs, limits) == ([], answer)
        assert [list(limit) for limit in limits] == [list(limit) for limit in answer]
    else:
        assert errors.invalid("LimitRange", "", name, errs).message == answer


def pc(name: str, value: int, **extra: Any) -> Obj:
    return {"metadata": {"name": name}, "value": value, **extra}


def test_priority_class_rules() -> None:
    assert texts(validate_priority_class(pc("big", 1000000001, preemptionPolicy="Bogus"))) == [
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        'preemptionPolicy: Unsupported value: "Bogus": supported values: "PreemptLowerPriority", "Never"',
    ]
    reserved = "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: "
    assert texts(validate_priority_class(pc("system-foo", 5))) == [
        reserved + "system-foo is not a known system priority class"
    ]
    assert texts(validate_priority_class(pc("system-node-critical", 5))) == [
        reserved + "value of system-node-critical PriorityClass must be 2000001000"
    ]
    assert texts(
        validate_priority_class(pc("system-cluster-critical", 2000000000, globalDefault=True))
    ) == [reserved + "globalDefault of system-cluster-critical PriorityClass must be false"]
    assert texts(validate_priority_class(pc("e", 1, preemptionPolicy=""))) == [
        "preemptionPolicy: Required value"
    ]
    assert validate_priority_class(pc("system-node-critical", 2000001000)) == []


def test_priority_class_strategy_defaults_and_immutability() -> None:
    rt = builtin_scheme().lookup("scheduling.platform.io", "v1", "priorityclasses")
    assert rt is not None
    strategy = strategy_for(rt)
    obj = {"metadata": {"name": "high"}, "value": 1000}
    apply_defaults("scheduling.platform.io", "PriorityClass", obj)  # as the write is decoded
    strategy.prepare_for_create(obj)
    assert (obj["preemptionPolicy"], obj["metadata"]["generation"]) == ("PreemptLowerPriority", 1)
    obj["metadata"]["resourceVersion"] = "1"
    new = {
        "metadata": {**obj["metadata"]},
        "value": 2000,
        "preemptionPolicy": "Never",
    }
    assert texts(strategy.validate_update(new, obj)) == [
        "value: Forbidden: may not be changed in an update.",
        'preemptionPolicy: Invalid value: "Never": field is immutable',
    ]
