"""Metric deprecation lifecycle and --show-hidden-metrics-for-version."""

from __future__ import annotations

import pytest
from prometheus_client import Counter

from platform_api.apiserver import hiddenmetrics
from platform_api.apiserver.config import ConfigError, from_flags
from platform_api.apiserver.metrics import REGISTRY


@pytest.mark.parametrize("value", ["1.34", "1.36", "2.0", "x"])
def test_only_the_previous_minor_is_allowed(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_flags({"show-hidden-metrics-for-version": value})
    assert str(caught.value) == (
        f'metrics.showHiddenMetricsForVersion: Invalid value: "{value}": must be omitted or '
        "have the value '1.35'; only the previous minor version is allowed"
    )


def test_previous_minor_accepted() -> None:
    assert from_flags({"show-hidden-metrics-for-version": "1.35"}).show_hidden_metrics_for_version
    assert from_flags({}).show_hidden_metrics_for_version == ""


@pytest.mark.parametrize(
    ("stability", "deprecated", "hidden"),
    [
        ("ALPHA", "1.36.0", True),
        ("ALPHA", "1.37.0", False),
        ("BETA", "1.36.0", False),
        ("BETA", "1.35.0", True),
        ("STABLE", "1.34.0", False),  # apiserver_storage_objects: still shown
        ("STABLE", "1.33.0", True),
        ("ALPHA", "1.28.0", True),
    ],
)
def test_should_hide(stability: str, deprecated: str, hidden: bool) -> None:
    assert hiddenmetrics.is_hidden(stability, deprecated) is hidden


def test_help_text() -> None:
    assert (
        hiddenmetrics.help_text("Number of objects.", "STABLE", "1.34.0")
        == "[STABLE] (Deprecated since 1.34.0) Number of objects."
    )
    assert hiddenmetrics.help_text("Later.", "ALPHA", "1.37.0") == "[ALPHA] Later."
    assert hiddenmetrics.help_text("Plain.", "BETA") == "[BETA] Plain."


def test_hidden_until_shown() -> None:
    shown = hiddenmetrics.declare(
        Counter,
        "test_shown_deprecated",
        "Shown.",
        [],
        stability="STABLE",
        deprecated_version="1.35.0",
    )
    hidden = hiddenmetrics.declare(
        Counter,
        "test_hidden_deprecated",
        "Hidden.",
        [],
        stability="ALPHA",
        deprecated_version="1.30.0",
    )
    shown.inc()
    hidden.inc()
    assert REGISTRY.get_sample_value("test_shown_deprecated_total") == 1
    assert REGISTRY.get_sample_value("test_hidden_deprecated_total") is None
    hiddenmetrics.show_hidden("")
    assert REGISTRY.get_sample_value("test_hidden_deprecated_total") is None
    hiddenmetrics.show_hidden("1.35")
    assert REGISTRY.get_sample_value("test_hidden_deprecated_total") == 1
    assert (
        REGISTRY.get_sample_value("apiserver_storage_db_total_size_in_bytes", {"endpoint": "x"})
        is None
    )
    # kube labels each etcd member's size by its endpoint (LMDB: the data file)
    hiddenmetrics.watch_database("http://127.0.0.1:2379", lambda: 4096.0)
    assert (
        REGISTRY.get_sample_value(
            "apiserver_storage_db_total_size_in_bytes", {"endpoint": "http://127.0.0.1:2379"}
        )
        == 4096
    )
