"""IP addresses and CIDRs in kube's words (IsValidIPForLegacyField, IsValidCIDR...,
ValidateNonSpecialIP): Services, EndpointSlices and NetworkPolicies share them.

kube parses "sloppily" (Go's old parser: IPv4 octets may have leading zeros) and, for
the fields of newer kinds (IPAddress names, ServiceCIDRs), then insists on the strict,
canonical form; ``strict_ip_errors`` and ``strict_cidr_errors`` say what it says.
"""

from __future__ import annotations

import ipaddress

from platform_api.validation import field
from platform_api.validation.field import FieldError, go_quote

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
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


def parse_ip_sloppy(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Go's ParseIPSloppy: Python's parser, plus IPv4 octets with leading zeros; no zones."""
    if "%" in value:
        return None
    ip = parse_ip(value)
    if ip is not None:
        return ip
    octets = value.split(".")
    if len(octets) == 4 and all(o.isascii() and o.isdigit() for o in octets):
        numbers = [int(o) for o in octets]
        if all(n <= 255 for n in numbers):
            return ipaddress.IPv4Address(".".join(map(str, numbers)))
    return None


def go_string(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """Go's net.IP String: an IPv4-mapped IPv6 address prints as IPv4."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def legacy_ip_errors(value: str) -> list[str]:
    """kube's IsValidIPForLegacyField with StrictIPCIDRValidation (on in v1.36): a valid
    address, no leading zeros, not IPv4-mapped; any spelling of IPv6."""
    ip = parse_ip_sloppy(value)
    if ip is None:
        return [INVALID_IP]
    errs = []
    if parse_ip(value) is None:
        errs.append("must not have leading 0s")
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        errs.append("must not be an IPv4-mapped IPv6 address")
    return errs


def strict_ip_errors(value: str) -> list[str]:
    """kube's IsValidIP: the legacy checks, then the canonical spelling."""
    errs = legacy_ip_errors(value)
    ip = parse_ip_sloppy(value)
    if not errs and ip is not None and value != go_string(ip):
        errs.append(f'must be in canonical form ("{go_string(ip)}")')
    return errs


def parse_cidr_sloppy(value: str) -> tuple[IP, int, bool] | None:
    """Go's ParseCIDRSloppy: the address (IPv4 octets may have leading zeros), the
    prefix length, and whether it was written IPv4-mapped; None when it does not parse."""
    address, _, bits = value.partition("/")
    ip = parse_ip_sloppy(address)
    if not bits.isascii() or not bits.isdigit() or ip is None:
        return None
    length = int(bits)
    v4 = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    if v4 is not None and length >= 96:  # Go folds ::ffff:a.b.c.d/n into IPv4
        ip, length = v4, length - 96
    if length > ip.max_prefixlen:
        return None
    return ip, length, v4 is not None


def legacy_cidr_errors(value: str) -> list[str]:
    """kube's IsValidCIDRForLegacyField with StrictIPCIDRValidation (on in v1.36): a
    valid CIDR, no leading zeros, not IPv4-mapped, no host bits set; any spelling."""
    parsed = parse_cidr_sloppy(value)
    if parsed is None:
        return [INVALID_CIDR]
    ip, length, mapped = parsed
    address, _, bits = value.partition("/")
    if parse_ip(address) is None or (len(bits) > 1 and bits.startswith("0")):
        return ["must not have leading 0s in IP or prefix length"]
    if mapped:
        return ["must not have an IPv4-mapped IPv6 address"]
    if ipaddress.ip_network(f"{ip}/{length}", strict=False).network_address != ip:
        return ["must not have bits set beyond the prefix length"]
    return []


def strict_cidr_errors(value: str) -> list[str]:
    """kube's IsValidCIDR: the legacy checks, then the canonical spelling."""
    errs = legacy_cidr_errors(value)
    parsed = parse_cidr_sloppy(value)
    if errs or parsed is None:
        return errs
    network = ipaddress.ip_network(f"{parsed[0]}/{parsed[1]}")
    if value != str(network):
        return [f'must be in canonical form ("{network}")']
    return []


def cidr_warnings(value: str, at: str) -> list[str]:
    """kube's GetWarningsForCIDR, for fields checked by ``legacy_cidr_errors``: an
    ambiguous value, a non-standard one, an IPv6 one not in RFC 5952 form."""
    parsed = parse_cidr_sloppy(value)
    if parsed is None:
        return []
    ip, length, mapped = parsed
    network = ipaddress.ip_network(f"{ip}/{length}", strict=False)
    warnings = []
    if network.network_address != ip:
        single = f"{go_string(ip)}/{ip.max_prefixlen}"
        warnings.append(
            f"{at}: CIDR value {go_quote(value)} is ambiguous in this context (should be "
            f"{go_quote(str(network))} or {go_quote(single)}?)"
        )
    address, _, bits = value.partition("/")
    if parse_ip(address) is None or (len(bits) > 1 and bits.startswith("0")) or mapped:
        warnings.append(
            f"{at}: non-standard CIDR value {go_quote(value)} is invalid: use "
            f"{go_quote(str(network))}"
        )
    if not warnings and ip.version == 6 and str(network) != value:
        warnings.append(
            f"{at}: IPv6 CIDR value {go_quote(value)} should be in RFC 5952 canonical "
            f"format ({go_quote(str(network))})"
        )
    return warnings


def ip_warnings(value: str, at: str) -> list[str]:
    """kube's GetWarningsForIP, for fields checked by ``legacy_ip_errors``: a spelling
    Go's strict parser refuses (leading zeros, IPv4-mapped), an IPv6 one not in RFC 5952
    form."""
    ip = parse_ip_sloppy(value)
    if ip is None:
        return []
    strict = parse_ip(value)
    mapped = isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None
    if strict is None or mapped:
        return [
            f"{at}: non-standard IP address {go_quote(value)} will be considered invalid in "
            f"a future Kubernetes release: use {go_quote(go_string(ip))}"
        ]
    if ip.version == 6 and str(ip) != value:
        return [
            f"{at}: IPv6 address {go_quote(value)} should be in RFC 5952 canonical format "
            f"({go_quote(str(ip))})"
        ]
    return []
