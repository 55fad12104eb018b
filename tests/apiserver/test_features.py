"""--feature-gates: kube v1.36's gates, stages and refusals, worded as component-base."""

from __future__ import annotations

import pytest

from platform_api.apiserver.config import ConfigError, from_flags
from platform_api.apiserver.features import KNOWN, FeatureGates


def test_defaults_are_kubes() -> None:
    gates = from_flags({}).feature_gates
    assert not gates.enabled("CBORServingAndStorage")  # alpha
    assert gates.enabled("APIResponseCompression")  # beta, on
    assert gates.enabled("AuthorizeWithSelectors")  # GA, locked
    assert KNOWN["DeclarativeValidation"].locked


def test_setting_gates() -> None:
    gates = from_flags(
        {"feature-gates": "CBORServingAndStorage=true, APIResponseCompression=False,"}
    ).feature_gates
    assert gates.enabled("CBORServingAndStorage")
    assert not gates.enabled("APIResponseCompression")
    assert gates.enabled("AuthorizeWithSelectors")


def test_unknown_gates_are_only_reported() -> None:
    gates = FeatureGates.parse("NoSuchGate=true,CBORServingAndStorage=1")
    assert gates.unrecognized == ("NoSuchGate",)
    assert gates.enabled("CBORServingAndStorage")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("CBORServingAndStorage", "missing bool value for CBORServingAndStorage"),
        (
            "CBORServingAndStorage=yes",
            'invalid value of CBORServingAndStorage=yes, err: strconv.ParseBool: parsing "yes": '
            "invalid syntax",
        ),
        (
            "AuthorizeWithSelectors=false",
            "cannot set feature gate AuthorizeWithSelectors to false, feature is locked to true",
        ),
        (
            "AuthorizeWithSelectors=false,DeclarativeValidation=false",
            "[cannot set feature gate AuthorizeWithSelectors to false, feature is locked to true, "
            "cannot set feature gate DeclarativeValidation to false, feature is locked to true]",
        ),
    ],
)
def test_refusals(value: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_flags({"feature-gates": value})
    assert str(caught.value) == f'invalid argument "{value}" for "--feature-gates" flag: {message}'
