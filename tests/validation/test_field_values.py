"""How a refused value is shown: %q for a plain string, json.Marshal for a value of a named
Go type (enums) and for structs, as kube-apiserver v1.36 shows them (reference, 2026-12-06)."""

from __future__ import annotations

from platform_api.registry.workloadspec import SURGE_ROLLING, go_strategy
from platform_api.validation import field


def test_a_plain_string_is_quoted_as_go_quotes_it() -> None:
    error = field.invalid("metadata.name", "a\x01<b>")
    assert error.body() == 'Invalid value: "a\\x01<b>"'


def test_an_enum_is_marshaled() -> None:
    error = field.not_supported("spec.pathType", "\x01<", ["Exact", "Prefix"])
    assert (
        error.body() == 'Unsupported value: "\\u0001\\u003c": supported values: "Exact", "Prefix"'
    )
    operator = field.invalid("operator", field.named("x\x01"), "not a valid selector operator")
    assert operator.body() == 'Invalid value: "x\\u0001": not a valid selector operator'


def test_a_value_already_rendered_is_not_rendered_again() -> None:
    shown = go_strategy({"type": "\x01", "rollingUpdate": {"maxSurge": "25%"}}, SURGE_ROLLING)
    error = field.not_supported("spec.strategy", shown, ["Recreate", "RollingUpdate"])
    assert error.body() == (
        'Unsupported value: {"Type":"\\u0001","RollingUpdate":{"MaxUnavailable":0,'
        '"MaxSurge":"25%"}}: supported values: "Recreate", "RollingUpdate"'
    )


def test_a_plain_go_string_where_kube_expects_an_enum_keeps_its_quoting() -> None:
    """A CRD schema's ``type`` is a plain string in kube's types: %q, not JSON."""
    error = field.not_supported("spec.type", field.plain("a > b"), ["object", "string"])
    assert error.body() == 'Unsupported value: "a > b": supported values: "object", "string"'


def test_too_many_words_a_negative_limit_without_its_number() -> None:
    """field.TooMany: a schema's ``maxProperties: -1`` (kube accepts it) refuses every
    object as ``has too many items`` (the reference's answer)."""
    assert str(field.too_many("spec", 0, -1)) == "spec: Too many: 0: has too many items"
    assert str(field.too_many("spec", 3, 1)) == "spec: Too many: 3: must have at most 1 item"
    assert str(field.too_many("spec", -1, 2)) == "spec: Too many: must have at most 2 items"
