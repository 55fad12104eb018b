"""IP addresses and CIDRs in kube's words (IsValidIPForLegacyField, IsValidCIDR...,
ValidateNonSpecialIP): Services, EndpointSlices and NetworkPolicies share them."""

from __future__ import annotations

import ipaddress

from platform_api.validation import field
from platform_api.validation.field import FieldError

INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
INVALID_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_LINK_LOCAL_MULTICAST = {
    4: ipaddress.ip_network("224.0.0.0/24"),
    6: ipaddress.ip_network("ff02::/16"),
}


def parse_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def parse_cidr(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """Go's ParseCIDR: host bits may be set; a prefix length is required."""
    if "/" not in value:
        return None
    try:
        return ipaddress.ip_network(value, strict=False)
    except ValueError:
        return None


def cidr_errors(value: str, at: str) -> list[FieldError]:
    return [] if parse_cidr(value) is not None else [field.invalid(at, value, INVALID_CIDR)]


def special_ip_errors(value: str, at: str, loopback: bool = False) -> list[FieldError]:
    """ValidateNonSpecialIP / ValidateEndpointIP: an address something may be reached
    at (not unspecified, loopback or link-local); ``loopback`` lets 127.0.0.1 pass."""
    ip = parse_ip(value)
    if ip is None:
        return [field.invalid(at, value, INVALID_IP)]
    errs: list[FieldError] = []
    if ip.is_unspecified:
        errs.append(field.invalid(at, value, f"may not be unspecified ({value})"))
    if ip.is_loopback and not loopback:
        errs.append(
            field.invalid(at, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)")
        )
    if ip.is_link_local and not ip.is_multicast:
        detail = "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
        errs.append(field.invalid(at, value, detail))
    if ip in _LINK_LOCAL_MULTICAST[ip.version]:
        detail = "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
        errs.append(field.invalid(at, value, detail))
    return errs
