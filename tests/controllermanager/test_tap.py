"""The manager's flags: kube-controller-manager's names, defaults and checks."""

from __future__ import annotations

import pytest

from platform_api.apiserver.flagvalues import ConfigError
from platform_api.controllermanager.tap import Options, from_flags
from platform_api.controllers import registry


def test_defaults_are_kubes() -> None:
    cfg = from_flags({"kubeconfig": "admin.kubeconfig"})
    assert cfg.controllers == registry.default_on()
    assert (cfg.leader_elect, cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (
        True,
        15.0,
        10.0,
        2.0,
    )
    assert (cfg.lock_namespace, cfg.lock_name) == ("platform-system", "platform-controller-manager")
    assert cfg.secure_port == 10257


def test_options_parse_kube_command_lines() -> None:
    options = Options()
    options.parseOptions(
        [
            "--kubeconfig=k",
            "--controllers=*,-garbagecollector",
            "--leader-elect=false",
            "--concurrent-gc-syncs=20",
            "--leader-elect-resource-name=mine",
        ]
    )
    cfg = options.config
    assert "garbage-collector-controller" not in cfg.controllers
    assert not cfg.leader_elect and cfg.lock_name == "mine"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"controllers": "nope"}, '--controllers: "nope" is not in the list of known controllers'),
        (
            {"leader-elect-lease-duration": "5s"},
            "leaseDuration must be greater than renewDeadline",
        ),
        (
            {"leader-elect-retry-period": "9s"},
            "renewDeadline must be greater than retryPeriod*JitterFactor",
        ),
    ],
)
def test_invalid_flags_are_refused(flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        from_flags({"kubeconfig": "k", **flags})
    assert str(e.value) == message


def test_empty_controllers_select_none() -> None:
    assert from_flags({"kubeconfig": "k", "controllers": ""}).controllers == frozenset()
