"""The aggregator's flags as kube-apiserver names them, and their errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.aggregatoroptions import from_flags
from platform_api.apiserver.flagvalues import ConfigError


def test_defaults_route_to_cluster_ips_without_a_client_certificate() -> None:
    options = from_flags(lambda name: None)
    assert not options.endpoint_routing
    assert options.client_pems() == (None, None)


def test_the_client_certificate_is_read_from_its_files(tmp_path: Path) -> None:
    (tmp_path / "c.crt").write_bytes(b"CERT")
    (tmp_path / "c.key").write_bytes(b"KEY")
    flags = {
        "proxy-client-cert-file": str(tmp_path / "c.crt"),
        "proxy-client-key-file": str(tmp_path / "c.key"),
        "enable-aggregator-routing": "true",
    }
    options = from_flags(flags.get)
    assert options.endpoint_routing
    assert options.client_pems() == (b"CERT", b"KEY")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"proxy-client-cert-file": "/x.crt"},
            "--proxy-client-cert-file and --proxy-client-key-file must be given together",
        ),
        (
            {"proxy-client-cert-file": "/nope.crt", "proxy-client-key-file": "/nope.key"},
            "--proxy-client-cert-file: /nope.crt: no such file",
        ),
        (
            {"enable-aggregator-routing": "maybe"},
            'invalid argument "maybe" for "--enable-aggregator-routing" flag: '
            'strconv.ParseBool: parsing "maybe": invalid syntax',
        ),
    ],
)
def test_bad_flags(flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_flags(flags.get)
    assert str(caught.value) == message
