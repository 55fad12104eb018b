"""The pod-spec rules two of kube v1.36's alpha gates change, as the reference answered
them with the gates on (TaintTolerationComparisonOperators, UserNamespacesHostNetworkSupport)
and off; and the options kube computes for a write from its gates and the old object."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from platform_api import errors
from platform_api.registry.gateddrops import (
    TAINT_TOLERATION_COMPARISON_OPERATORS,
    USER_NAMESPACES_HOST_NETWORK_SUPPORT,
    kube_defaults,
    pod_options,
)
from platform_api.registry.podspec import validate_pod_spec
from platform_api.validation import podoptions
from platform_api.validation.podoptions import PodOptions
from platform_api.validation.tolerations import validate_tolerations

Obj = dict[str, Any]
ON = PodOptions(toleration_comparisons=True, userns_host_network=True)


def _spec(**extra: Any) -> Obj:
    return {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Always", **extra}


def _lt(value: str | None, operator: str = "Lt", key: str = "k") -> Obj:
    toleration = {"key": key, "operator": operator} if key else {"operator": operator}
    return _spec(tolerations=[toleration if value is None else {**toleration, "value": value}])


def _message(spec: Obj, options: PodOptions) -> str:
    with podoptions.using(options):
        errs = validate_pod_spec(copy.deepcopy(spec), "spec", "p")
    return errors.invalid("Pod", "", "p", errs).message if errs else ""


V = "spec.tolerations[0].value"
CANONICAL = "must be a valid decimal integer in canonical form"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (_lt("10"), ""),
        (_lt("-5", "Gt"), ""),
        (
            _lt(None),
            f'[{V}: Invalid value: "": must be non-empty, {V}: Invalid value: "": '
            'strconv.ParseInt: parsing "": invalid syntax]',
        ),
        (
            _lt("abc"),
            f'[{V}: Invalid value: "abc": {CANONICAL}, {V}: Invalid value: "abc": '
            'strconv.ParseInt: parsing "abc": invalid syntax]',
        ),
        (_lt("010"), f'{V}: Invalid value: "010": {CANONICAL}'),
        (
            _lt("-"),
            f'[{V}: Invalid value: "-": {CANONICAL}, {V}: Invalid value: "-": '
            'strconv.ParseInt: parsing "-": invalid syntax]',
        ),
        (_lt("-0"), f'{V}: Invalid value: "-0": {CANONICAL}'),
        (_lt("+5"), f'{V}: Invalid value: "+5": {CANONICAL}'),
        (
            _lt("99999999999999999999"),
            f'{V}: Invalid value: "99999999999999999999": '
            'strconv.ParseInt: parsing "99999999999999999999": value out of range',
        ),
        (
            _lt(" 5"),
            f'[{V}: Invalid value: " 5": {CANONICAL}, {V}: Invalid value: " 5": '
            'strconv.ParseInt: parsing " 5": invalid syntax]',
        ),
        (
            _lt("5", "Gt", key=""),
            'spec.tolerations[0].operator: Invalid value: "Gt": operator '
            'must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
        (_spec(hostUsers=False, hostNetwork=True), ""),
        (
            _spec(hostUsers=False, hostNetwork=True, hostPID=True),
            "spec.HostPID: Forbidden: when `hostUsers` is false",
        ),
    ],
)
def test_with_the_gates_on(spec: Obj, message: str) -> None:
    assert _message(spec, ON) == (f'Pod "p" is invalid: {message}' if message else "")


def test_with_the_gates_off() -> None:
    assert _message(_lt("10"), PodOptions()) == (
        'Pod "p" is invalid: spec.tolerations[0].operator: Unsupported value: "Lt": '
        'supported values: "Equal", "Exists", "Lt", "Gt"'
    )
    assert _message(_spec(hostUsers=False, hostNetwork=True), PodOptions()) == (
        'Pod "p" is invalid: spec.hostNetwork: Forbidden: when `hostUsers` is false'
    )


def test_outside_a_write_the_options_are_kube_s_zero_ones() -> None:
    """A RuntimeClass's or the toleration-restriction plugin's tolerations: kube passes
    PodValidationOptions{}, so Lt stays refused whatever the gates."""
    (error,) = validate_tolerations([{"key": "k", "operator": "Lt", "value": "5"}], "t")
    assert error.type == "FieldValueNotSupported"


def _gates(*on: str) -> Any:
    return lambda name: name in on or kube_defaults(name)


def test_the_options_of_a_write_follow_the_gates() -> None:
    assert pod_options("", "Pod", None, kube_defaults) == PodOptions()
    gates = _gates(TAINT_TOLERATION_COMPARISON_OPERATORS, USER_NAMESPACES_HOST_NETWORK_SUPPORT)
    assert pod_options("apps", "Deployment", None, gates) == ON
    assert pod_options("node.platform.io", "RuntimeClass", None, gates) == PodOptions()


def test_an_update_keeps_what_the_old_object_uses() -> None:
    """A gate turned off: objects written while it was on stay updatable."""
    old_pod = {"spec": {**_lt("5", "Gt"), "hostUsers": False, "hostNetwork": True}}
    assert pod_options("", "Pod", old_pod, kube_defaults) == ON
    old_template = {"spec": {"template": {"spec": _lt("5")}}}
    assert pod_options("apps", "Deployment", old_template, kube_defaults) == PodOptions(
        toleration_comparisons=True
    )
    plain = {"spec": {"template": {"spec": _spec(hostUsers=False)}}}
    assert pod_options("batch", "Job", plain, kube_defaults) == PodOptions()
