"""kube's strict IP and CIDR checks (IsValidIP, IsValidCIDR), in its words."""

from __future__ import annotations

import pytest

from platform_api.validation.ips import (
    INVALID_CIDR,
    INVALID_IP,
    parse_ip_sloppy,
    strict_cidr_errors,
    strict_ip_errors,
)


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("192.168.1.5", []),
        ("2001:db8::1", []),
        ("192.168.1.05", ["must not have leading 0s"]),
        ("2001:db8:0:0::1", ['must be in canonical form ("2001:db8::1")']),
        ("2001:DB8::1", ['must be in canonical form ("2001:db8::1")']),
        ("::ffff:1.2.3.4", ["must not be an IPv4-mapped IPv6 address"]),
        ("10.0.0.", [INVALID_IP]),
        ("fe80::1%eth0", [INVALID_IP]),
        ("1.2.3.4 ", [INVALID_IP]),
        ("", [INVALID_IP]),
    ],
)
def test_strict_ips(value: str, errors: list[str]) -> None:
    assert strict_ip_errors(value) == errors


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("10.9.0.0/24", []),
        ("fd00:9::/112", []),
        ("0.0.0.0/0", []),
        ("10.0.0.1/24", ["must not have bits set beyond the prefix length"]),
        ("010.0.0.0/24", ["must not have leading 0s in IP or prefix length"]),
        ("10.0.0.0/024", ["must not have leading 0s in IP or prefix length"]),
        ("::ffff:10.0.0.0/104", ["must not have an IPv4-mapped IPv6 address"]),
        ("FD00::/64", ['must be in canonical form ("fd00::/64")']),
        ("10.0.0.0/33", [INVALID_CIDR]),
        ("10.0.0.0", [INVALID_CIDR]),
        ("10.0.0.0/x", [INVALID_CIDR]),
        ("foo", [INVALID_CIDR]),
    ],
)
def test_strict_cidrs(value: str, errors: list[str]) -> None:
    assert strict_cidr_errors(value) == errors


def test_sloppy_parsing_reads_go_s_old_leading_zeros() -> None:
    assert str(parse_ip_sloppy("010.001.0.9")) == "10.1.0.9"
    assert parse_ip_sloppy("256.0.0.1") is None and parse_ip_sloppy("1.2.3") is None
