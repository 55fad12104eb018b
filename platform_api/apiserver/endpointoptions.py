"""kube-apiserver's flags for how the server announces itself in the ``kubernetes``
Service: ``--advertise-address``, ``--endpoint-reconciler-type`` and the deprecated
``--apiserver-count``; and kube's choice of address when none is given.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass

from platform_api.apiserver.flagvalues import ConfigError, parse_int, parse_ip

Given = Callable[[str], str | None]
LEASE, MASTER_COUNT, NONE = "lease", "master-count", "none"
TYPES = (MASTER_COUNT, LEASE, NONE)

# (flag, default shown in --help, description), appended to serverflags.FLAGS.
ENDPOINT_FLAGS: list[tuple[str, str, str]] = [
    (
        "advertise-address",
        "",
        "The IP address on which to advertise the apiserver to members of the cluster. This "
        "address must be reachable by the rest of the cluster. If blank, the --bind-address "
        "will be used. If --bind-address is unspecified, the host's default interface will "
        "be used.",
    ),
    (
        "endpoint-reconciler-type",
        LEASE,
        "Use an endpoint reconciler (master-count, lease, none) master-count is deprecated, "
        "and will be removed in a future version.",
    ),
    (
        "apiserver-count",
        "1",
        "(Deprecated) The number of apiservers running in the cluster, must be a positive "
        "number. (In use when --endpoint-reconciler-type=master-count is enabled.)",
    ),
]
# An address no packet is sent to: connecting a UDP socket to it only asks the kernel
# which source address its default route would use (TEST-NET-3, RFC 5737).
_PROBE = {4: ("203.0.113.1", socket.AF_INET), 6: ("2001:db8::1", socket.AF_INET6)}


@dataclass
class EndpointOptions:
    advertise_address: str = ""  # empty: chosen at start (advertised_address)
    reconciler: str = LEASE
    apiserver_count: int = 1


def from_flags(given: Given) -> EndpointOptions:
    out = EndpointOptions()
    if given("advertise-address"):
        out.advertise_address = parse_ip("advertise-address", str(given("advertise-address")))
    reconciler = given("endpoint-reconciler-type")
    if reconciler is not None:
        if reconciler not in TYPES:  # kube exits with this line at start
            raise ConfigError(f"Reconciler not implemented: {reconciler}")
        out.reconciler = reconciler
    if given("apiserver-count") is not None:
        out.apiserver_count = parse_int("apiserver-count", str(given("apiserver-count")), -(2**31))
        if out.apiserver_count <= 0:
            raise ConfigError(
                "--apiserver-count should be a positive number, but value "
                f"'{out.apiserver_count}' provided"
            )
    return out


def usable(address: str) -> bool:
    """Go's IsGlobalUnicast: what kube will advertise (private ranges included)."""
    ip = ipaddress.ip_address(address)
    return not (
        ip.is_unspecified
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or address == "255.255.255.255"
    )


def _default_route_source(version: int) -> str | None:
    probe, family = _PROBE[version]
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((probe, 9))
            found = str(s.getsockname()[0]).split("%", 1)[0]
    except OSError:
        return None
    return found if usable(found) else None


def _host_addresses(version: int) -> list[str]:
    family = socket.AF_INET if version == 4 else socket.AF_INET6
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, family)
    except OSError:
        return []
    found = (str(info[4][0]).split("%", 1)[0] for info in infos)
    return [a for a in found if usable(a)]


def advertised_address(options: EndpointOptions, bind_address: str) -> str | None:
    """kube's DefaultAdvertiseAddress: the flag; else a bind address that is neither
    unspecified nor loopback; else the host's address on its default route (any of the
    host's addresses without one), in the bind address's family.  None when the host has
    no address but loopback: kube refuses to start then; this server starts, and keeps
    no Endpoints for the ``kubernetes`` Service."""
    given = options.advertise_address
    if given and not ipaddress.ip_address(given).is_unspecified:
        return given
    bind = ipaddress.ip_address(bind_address or "0.0.0.0")
    if not (bind.is_unspecified or bind.is_loopback):
        return str(bind)
    for v in (4, 6) if bind.version == 4 else (6, 4):  # the bind address's family first
        found = _default_route_source(v) or next(iter(_host_addresses(v)), None)
        if found:
            return found
    return None
