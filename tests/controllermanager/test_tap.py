"""The manager's flags: kube-controller-manager's names, defaults and checks."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

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


def test_enable_garbage_collector_false_leaves_it_off() -> None:
    options = Options()
    options.parseOptions(["--kubeconfig=k", "--enable-garbage-collector=false"])
    assert "garbage-collector-controller" not in options.config.controllers
    options = Options()
    options.parseOptions(["--kubeconfig=k", "--enable-garbage-collector"])
    assert "garbage-collector-controller" in options.config.controllers


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


def test_the_token_signing_key_and_root_ca_are_read_at_start(tmp_path: Any) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    (tmp_path / "sa.key").write_bytes(pem)
    (tmp_path / "ca.crt").write_bytes(
        b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    )
    (tmp_path / "junk").write_bytes(b"junk")
    given = {"kubeconfig": "k", "service-account-private-key-file": str(tmp_path / "sa.key")}
    cfg = from_flags({**given, "root-ca-file": str(tmp_path / "ca.crt")})
    assert cfg.service_account_key.public_key() == key.public_key()
    assert cfg.root_ca == (tmp_path / "ca.crt").read_bytes()
    assert from_flags({"kubeconfig": "k"}).service_account_key is None
    with pytest.raises(ConfigError) as e:
        from_flags({"kubeconfig": "k", "service-account-private-key-file": str(tmp_path / "no")})
    assert str(e.value).startswith(
        "error reading key for service account token controller: [Errno 2] No such file"
    )
    with pytest.raises(ConfigError) as e:
        from_flags({**given, "root-ca-file": str(tmp_path / "junk")})
    assert str(e.value) == (
        f"error parsing root-ca-file at {tmp_path / 'junk'}: data does not contain any valid "
        "RSA or ECDSA certificates"
    )
