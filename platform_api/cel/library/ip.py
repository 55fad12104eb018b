"""kube's ip and cidr libraries, with Go's ``net/netip`` parser ported for its exact errors.

Values are ``net.IP`` / ``net.CIDR`` messages holding the canonical text (netip's ``String()``),
so message equality is netip equality.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from platform_api.cel.library.common import NO_SUCH_OVERLOAD, EvalError
from platform_api.cel.library.decl import Function, glob, member
from platform_api.cel.protos import library_class
from platform_api.validation.field import go_quote

IP = library_class("net.IP")
CIDR = library_class("net.CIDR")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class ParseError(ValueError):
    def __init__(self, text: str, msg: str, at: str | None = None) -> None:
        detail = f"ParseAddr({go_quote(text)}): {msg}"
        super().__init__(detail + (f" (at {go_quote(at)})" if at is not None else ""))


def _ipv4_fields(text: str, s: str) -> list[int]:
    fields: list[int] = []
    val, digits = 0, 0
    for i, c in enumerate(s):
        if "0" <= c <= "9":
            if digits == 1 and val == 0:
                raise ParseError(text, "IPv4 field has octet with leading zero")
            val, digits = val * 10 + int(c), digits + 1
            if val > 255:
                raise ParseError(text, "IPv4 field has value >255")
        elif c == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise ParseError(text, "IPv4 field must have at least one digit", s[i:])
            if len(fields) == 3:
                raise ParseError(text, "IPv4 address too long")
            fields.append(val)
            val, digits = 0, 0
        else:
            raise ParseError(text, "unexpected character", s[i:])
    if len(fields) < 3:
        raise ParseError(text, "IPv4 address too short")
    return [*fields, val]


def _ipv6(text: str) -> tuple[bytes, str]:
    s, zone = text, ""
    if "%" in s:
        s, _, zone = s.partition("%")
        if not zone:
            raise ParseError(text, "zone must be a non-empty string")
    ip = bytearray(16)
    ellipsis, i = -1, 0
    if s.startswith("::"):
        ellipsis, s = 0, s[2:]
        if not s:
            return bytes(ip), zone
    while i < 16:
        off, acc = 0, 0
        while off < len(s) and s[off] in "0123456789abcdefABCDEF":
            acc = (acc << 4) + int(s[off], 16)
            if off > 3:
                raise ParseError(text, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise ParseError(text, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise ParseError(text, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise ParseError(
                    text, "embedded IPv4 address must replace the final 2 fields of the address", s
                )
            if i + 4 > 16:
                raise ParseError(
                    text, "too many hex fields to fit an embedded IPv4 at the end of the address", s
                )
            ip[i : i + 4] = bytes(_ipv4_fields(text, s))
            s, i = "", i + 4
            break
        ip[i], ip[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise ParseError(text, "unexpected character, want colon", s)
        if len(s) == 1:
            raise ParseError(text, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise ParseError(text, "multiple :: in address", s)
            ellipsis, s = i, s[1:]
            if not s:
                break
    if s:
        raise ParseError(text, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise ParseError(text, "address string too short")
        n = 16 - i
        ip[ellipsis + n : 16] = ip[ellipsis:i]
        ip[ellipsis : ellipsis + n] = bytes(n)
    elif ellipsis >= 0:
        raise ParseError(text, "the :: must expand to at least one field of zeros", s)
    return bytes(ip), zone


def parse_addr(text: str) -> tuple[Address, str]:
    """Go's netip.ParseAddr: (address, zone)."""
    for c in text:
        if c == ".":
            return ipaddress.IPv4Address(bytes(_ipv4_fields(text, text))), ""
        if c == ":":
            packed, zone = _ipv6(text)
            return ipaddress.IPv6Address(packed), zone
        if c == "%":
            raise ParseError(text, "missing IPv6 address")
    raise ParseError(text, "unable to parse IP")


def _is_4in6(addr: Address) -> bool:
    return isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None


def parse_ip(text: str) -> Address:
    try:
        addr, zone = parse_addr(text)
    except ParseError as e:
        raise EvalError(
            f"IP Address {go_quote(text)} parse error during conversion from string: {e}"
        ) from None
    if zone:
        raise EvalError(f"IP address {go_quote(text)} with zone value is not allowed")
    if _is_4in6(addr):
        raise EvalError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return addr


def addr_text(addr: Address) -> str:
    return str(addr)  # Python's compressed form is RFC 5952, as netip's String()


def parse_cidr(text: str) -> tuple[Address, int]:
    prefix = "network address parse error during conversion from string: "
    slash = text.rfind("/")

    def fail(msg: str) -> EvalError:
        return EvalError(f"{prefix}netip.ParsePrefix({go_quote(text)}): {msg}")

    if slash < 0:
        raise fail("no '/'")
    try:
        addr, zone = parse_addr(text[:slash])
    except ParseError as e:
        raise fail(str(e)) from None
    if zone:
        raise fail("IPv6 zones cannot be present in a prefix")
    bits_text = text[slash + 1 :]
    if (len(bits_text) > 1 and not "1" <= bits_text[0] <= "9") or not (
        bits_text.isascii() and bits_text.isdigit()
    ):
        raise fail(f"bad bits after slash: {go_quote(bits_text)}")
    bits = int(bits_text)
    if bits > addr.max_prefixlen:
        raise fail("prefix length out of range")
    if _is_4in6(addr):
        raise EvalError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return addr, bits


def _ip(msg: Any) -> Address:
    return ipaddress.ip_address(msg.addr)


def _cidr(msg: Any) -> tuple[Address, int]:
    addr, _, bits = msg.prefix.rpartition("/")
    return ipaddress.ip_address(addr), int(bits)


def _network(addr: Address, bits: int) -> Any:
    return ipaddress.ip_network(f"{addr}/{bits}", strict=False)


def to_ip(text: str) -> Any:
    return IP(addr=addr_text(parse_ip(text)))


def to_cidr(text: str) -> Any:
    try:
        addr, bits = parse_cidr(text)
    except EvalError as e:
        raise EvalError(f"network address parse error during conversion from string: {e}") from None
    return CIDR(prefix=f"{addr_text(addr)}/{bits}")


def _valid(parse: Any, text: str) -> bool:
    try:
        parse(text)
    except EvalError:
        return False
    return True


def _contains_ip(cidr: Any, ip: Any) -> bool:
    addr, bits = _cidr(cidr)
    if isinstance(ip, str):
        # kube's cidrContainsIP finds no IP in the string's parse error and answers
        # "no such overload" (containsCIDR passes its parse error on)
        try:
            ip = to_ip(ip)
        except EvalError:
            raise EvalError(NO_SUCH_OVERLOAD) from None
    other = _ip(ip)
    return other.version == addr.version and other in _network(addr, bits)


def _contains_cidr(cidr: Any, other: Any) -> bool:
    addr, bits = _cidr(cidr)
    o_addr, o_bits = _cidr(to_cidr(other) if isinstance(other, str) else other)
    if addr.version != o_addr.version or bits > o_bits:
        return False
    return bool(_network(o_addr, o_bits).subnet_of(_network(addr, bits)))


def _global_unicast(addr: Address) -> bool:
    if isinstance(addr, ipaddress.IPv4Address) and str(addr) in ("0.0.0.0", "255.255.255.255"):
        return False
    return not (addr.is_unspecified or addr.is_loopback or addr.is_multicast or addr.is_link_local)


def _link_local_multicast(addr: Address) -> bool:
    if isinstance(addr, ipaddress.IPv4Address):
        return addr in ipaddress.ip_network("224.0.0.0/24")
    return (int(addr) >> 112) & 0xFF0F == 0xFF02


def _ip_pred(oid: str, pred: Any) -> Any:
    return member(oid, ("net.IP",), "bool", lambda m: pred(_ip(m)))


def _masked(cidr: Any) -> Any:
    addr, bits = _cidr(cidr)
    return CIDR(prefix=str(_network(addr, bits)))


_C = "net.CIDR"
IP_FUNCTIONS = [
    Function("ip", [glob("string_to_ip", ("string",), "net.IP", to_ip)]),
    Function("family", [member("ip_family", ("net.IP",), "int", lambda m: _ip(m).version)]),
    Function(
        "ip.isCanonical",
        [
            glob("ip_is_canonical", ("string",), "bool", lambda s: addr_text(parse_ip(s)) == s),
        ],
    ),
    Function("isUnspecified", [_ip_pred("ip_is_unspecified", lambda a: a.is_unspecified)]),
    Function("isLoopback", [_ip_pred("ip_is_loopback", lambda a: a.is_loopback)]),
    Function(
        "isLinkLocalMulticast", [_ip_pred("ip_is_link_local_multicast", _link_local_multicast)]
    ),
    Function(
        "isLinkLocalUnicast", [_ip_pred("ip_is_link_local_unicast", lambda a: a.is_link_local)]
    ),
    Function("isGlobalUnicast", [_ip_pred("ip_is_global_unicast", _global_unicast)]),
    Function("isIP", [glob("is_ip", ("string",), "bool", lambda s: _valid(parse_ip, s))]),
    Function("string", [glob("ip_to_string", ("net.IP",), "string", lambda m: m.addr)]),
]

CIDR_FUNCTIONS = [
    Function("cidr", [glob("string_to_cidr", ("string",), _C, to_cidr)]),
    Function(
        "containsIP",
        [
            member("cidr_contains_ip_string", (_C, "string"), "bool", _contains_ip),
            member("cidr_contains_ip_ip", (_C, "net.IP"), "bool", _contains_ip),
        ],
    ),
    Function(
        "containsCIDR",
        [
            member("cidr_contains_cidr_string", (_C, "string"), "bool", _contains_cidr),
            member("cidr_contains_cidr", (_C, _C), "bool", _contains_cidr),
        ],
    ),
    Function("ip", [member("cidr_ip", (_C,), "net.IP", lambda m: IP(addr=addr_text(_cidr(m)[0])))]),
    Function("prefixLength", [member("cidr_prefix_length", (_C,), "int", lambda m: _cidr(m)[1])]),
    Function("masked", [member("cidr_masked", (_C,), _C, _masked)]),
    Function("isCIDR", [glob("is_cidr", ("string",), "bool", lambda s: _valid(parse_cidr, s))]),
    Function("string", [glob("cidr_to_string", (_C,), "string", lambda m: m.prefix)]),
]
