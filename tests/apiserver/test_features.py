"""--feature-gates: kube v1.36's gate table, stages and refusals, worded as component-base."""

from __future__ import annotations

import pytest

from platform_api.apiserver.config import ConfigError, from_flags
from platform_api.apiserver.features import (
    ALPHA,
    BETA,
    DEPRECATED,
    FEATURE_ENABLED,
    GA,
    KNOWN,
    FeatureGates,
    Spec,
)
from platform_api.apiserver.metrics import REGISTRY


def test_defaults_are_kubes() -> None:
    gates = from_flags({}).feature_gates
    assert not gates.enabled("CBORServingAndStorage")  # alpha
    assert gates.enabled("APIResponseCompression")  # beta, on
    assert gates.enabled("AuthorizeWithSelectors")  # GA, locked
    assert KNOWN["DeclarativeValidation"].locked


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("AllAlpha", Spec(False, ALPHA)),
        ("AllBeta", Spec(False, BETA)),
        ("APIServerTracing", Spec(True, GA, locked=True)),
        ("AllowServiceExternalIPs", Spec(True, GA)),
        ("ClusterTrustBundle", Spec(False, BETA)),
        ("StructuredAuthenticationConfiguration", Spec(True, GA, locked=True)),
        ("DeclarativeValidationTakeover", Spec(False, DEPRECATED)),
        ("LoggingAlphaOptions", Spec(False, ALPHA)),
        ("LoggingBetaOptions", Spec(True, BETA)),
        ("WatchList", Spec(True, BETA)),
        ("WatchListClient", Spec(True, BETA)),
        ("CRDObservedGenerationTracking", Spec(True, BETA)),
        ("ComponentStatusz", Spec(True, BETA)),
        ("CloudControllerManagerWebhook", Spec(False, ALPHA)),
    ],
)
def test_table_holds_kubes_gates(name: str, spec: Spec) -> None:
    assert KNOWN[name] == spec


def test_table_size_and_openshift_gates_left_out() -> None:
    stages = [spec.stage for spec in KNOWN.values()]
    # kube-apiserver v1.36 --help lists 156 alpha/beta gates besides AllAlpha/AllBeta.
    assert stages.count(ALPHA) + stages.count(BETA) == 150
    assert "RouteExternalCertificate" not in KNOWN


def test_setting_gates() -> None:
    gates = from_flags(
        {"feature-gates": "CBORServingAndStorage=true, APIResponseCompression=False,"}
    ).feature_gates
    assert gates.enabled("CBORServingAndStorage")
    assert not gates.enabled("APIResponseCompression")
    assert gates.enabled("AuthorizeWithSelectors")
    assert gates.warnings == ()


def test_kube_prefix() -> None:
    gates = FeatureGates.parse("kube:CBORServingAndStorage=true,kube:WatchList=false")
    assert gates.enabled("CBORServingAndStorage")
    assert not gates.enabled("WatchList")


def test_unknown_gates_are_only_reported() -> None:
    # component-base v1.36 logs "unrecognized feature gate: X" and goes on.
    gates = FeatureGates.parse("NoSuchGate=true,CBORServingAndStorage=1")
    assert gates.unrecognized == ("NoSuchGate",)
    assert gates.enabled("CBORServingAndStorage")


def test_ga_and_deprecated_gates_warn() -> None:
    gates = FeatureGates.parse("AuthorizeWithSelectors=true,DeclarativeValidationTakeover=true")
    assert gates.warnings == (
        '"Warning: setting GA feature gate. It will be removed in a future release." '
        'featureGate="AuthorizeWithSelectors" value=true',
        '"Warning: setting deprecated feature gate. It will be removed in a future release." '
        'featureGate="DeclarativeValidationTakeover" value=true',
    )


def test_all_alpha_fills_the_unset_alpha_gates() -> None:
    gates = FeatureGates.parse("AllAlpha=true,LoggingAlphaOptions=false")
    assert gates.enabled("CBORServingAndStorage")
    assert not gates.enabled("LoggingAlphaOptions")
    assert not gates.enabled("ClusterTrustBundle")  # beta: untouched
    assert not FeatureGates.parse("AllBeta=false").enabled("WatchList")


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
        (
            "kube:WatchList=true,CBORServingAndStorage=true",
            "set kube feature gates with default empty prefix or kube: prefix consistently, "
            "do not mix use",
        ),
        ("wardle:Foo=true", "component not registered: wardle"),
        (
            "ClusterTrustBundleProjection=true",
            "ClusterTrustBundleProjection is enabled, but depends on features that are "
            "disabled: [ClusterTrustBundle]",
        ),
        (
            "ClusterTrustBundleProjection=true,StorageVersionAPI=true,APIServerIdentity=false",
            "[ClusterTrustBundleProjection is enabled, but depends on features that are "
            "disabled: [ClusterTrustBundle], StorageVersionAPI is enabled, but depends on "
            "features that are disabled: [APIServerIdentity], "
            "UnknownVersionInteroperabilityProxy is enabled, but depends on features that are "
            "disabled: [APIServerIdentity]]",
        ),
    ],
)
def test_refusals(value: str, message: str) -> None:
    # The err text kube-apiserver v1.36 exits with ("command failed" err=...).
    with pytest.raises(ConfigError) as caught:
        from_flags({"feature-gates": value})
    assert str(caught.value) == message


def test_feature_enabled_gauge() -> None:
    FeatureGates.parse("CBORServingAndStorage=true").record_metrics()

    def value(name: str, stage: str) -> float | None:
        return REGISTRY.get_sample_value(
            "kubernetes_feature_enabled", {"name": name, "stage": stage}
        )

    assert value("CBORServingAndStorage", "ALPHA") == 1
    assert value("AuthorizeWithSelectors", "") == 1
    assert value("DeclarativeValidationTakeover", "DEPRECATED") == 0
    assert value("AllAlpha", "ALPHA") == 0
    assert FEATURE_ENABLED._documentation.startswith("[BETA] This metric records")
    samples = next(iter(FEATURE_ENABLED.collect())).samples
    assert len(samples) == len(KNOWN)
