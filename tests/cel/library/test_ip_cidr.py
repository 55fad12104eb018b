"""kube's ip and cidr libraries (cases of library/ip_test.go and cidr_test.go)."""

from __future__ import annotations

import pytest

from tests.cel.conftest import compile_error, run, runtime_error


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ('isIP("192.168.0.1")', True),
        ('isIP("192.168.0.1.0")', False),
        ('ip.isCanonical("127.0.0.1")', True),
        ('ip("192.168.0.1").family()', 4),
        ('ip("0.0.0.0").isUnspecified()', True),
        ('ip("127.0.0.1").isUnspecified()', False),
        ('ip("127.0.0.1").isLoopback()', True),
        ('ip("1.2.3.4").isLoopback()', False),
        ('ip("224.0.0.1").isLinkLocalMulticast()', True),
        ('ip("224.0.1.1").isLinkLocalMulticast()', False),
        ('ip("169.254.169.254").isLinkLocalUnicast()', True),
        ('ip("192.168.0.1").isLinkLocalUnicast()', False),
        ('ip("192.168.0.1").isGlobalUnicast()', True),
        ('ip("255.255.255.255").isGlobalUnicast()', False),
        ('isIP("2001:db8::68")', True),
        ('isIP("2001:db8:::68")', False),
        ('ip.isCanonical("2001:db8::68")', True),
        ('ip.isCanonical("2001:DB8::68")', False),
        ('ip("2001:db8::68").family()', 6),
        ('ip("::").isUnspecified()', True),
        ('ip("::1").isUnspecified()', False),
        ('ip("::1").isLoopback()', True),
        ('ip("2001:db8::abcd").isLoopback()', False),
        ('ip("ff02::1").isLinkLocalMulticast()', True),
        ('ip("fd00::1").isLinkLocalMulticast()', False),
        ('ip("fe80::1").isLinkLocalUnicast()', True),
        ('ip("fd80::1").isLinkLocalUnicast()', False),
        ('ip("2001:db8::abcd").isGlobalUnicast()', True),
        ('ip("ff00::1").isGlobalUnicast()', False),
        ('string(ip("192.168.0.1"))', "192.168.0.1"),
        ('type(ip("192.168.0.1")) == net.IP', True),
        ('ip("192.168.0.1") == ip("192.168.0.1")', True),
        ('cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', True),
        ('cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))', False),
        ('cidr("192.168.0.0/24").containsIP("192.168.0.1")', True),
        ('cidr("192.168.0.0/24").containsIP("192.168.1.1")', False),
        ('cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))', True),
        ('cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.1/32"))', True),
        ('cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))', False),
        ('cidr("192.168.0.0/24").containsCIDR(cidr("192.169.0.1/32"))', False),
        ('cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', True),
        ('cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")', False),
        ('cidr("192.168.0.0/24").ip() == ip("192.168.0.0")', True),
        ('cidr("192.168.0.0/24").masked() == cidr("192.168.0.0/24")', True),
        ('cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', True),
        ('cidr("192.168.0.0/24").prefixLength()', 24),
        ('cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', True),
        ('cidr("2001:db8::/32").containsIP(ip("2001:dc8::1"))', False),
        ('cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))', True),
        ('cidr("2001:db8::/32").containsCIDR("2001:db8::/31")', False),
        ('cidr("2001:db8::/32").ip() == ip("2001:db8::")', True),
        ('cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")', True),
        ('cidr("2001:db8::/32").prefixLength()', 32),
        ('string(cidr("192.168.0.0/24"))', "192.168.0.0/24"),
        ('type(cidr("192.168.0.0/24")) == net.CIDR', True),
        ('isCIDR("192.168.0.0/24") && !isCIDR("192.168.0.0/33")', True),
    ],
)
def test_ip_and_cidr(expr: str, value: object) -> None:
    assert run(expr) == value


def test_errors() -> None:
    assert runtime_error('ip("192.168.0.1.0") == ip("1.2.3.4")') == (
        'IP Address "192.168.0.1.0" parse error during conversion from string: '
        'ParseAddr("192.168.0.1.0"): IPv4 address too long'
    )
    assert runtime_error('ip.isCanonical("2001:db8:::68")') == (
        'IP Address "2001:db8:::68" parse error during conversion from string: '
        'ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit '
        '(at ":68")'
    )
    assert runtime_error('cidr("192.168.0.0/") == cidr("1.2.3.4/32")') == (
        "network address parse error during conversion from string: network address parse "
        'error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after '
        'slash: ""'
    )
    assert runtime_error('ip("::ffff:1.2.3.4") == ip("1.2.3.4")') == (
        'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'
    )
    assert runtime_error('ip("fe80::1%eth0") == ip("1.2.3.4")') == (
        'IP address "fe80::1%eth0" with zone value is not allowed'
    )
    # containsIP finds no IP in a string that does not parse; containsCIDR passes the
    # parse error on (the reference's answers)
    assert runtime_error('cidr("10.0.0.0/8").containsIP("bad")') == "no such overload"
    assert runtime_error('cidr("10.0.0.0/8").containsCIDR("bad")') == (
        "network address parse error during conversion from string: network address parse "
        "error during conversion from string: netip.ParsePrefix(\"bad\"): no '/'"
    )
    assert "found no matching overload for 'isIP' applied to '(net.CIDR)'" in compile_error(
        'isIP(cidr("192.168.0.0/24"))'
    )
