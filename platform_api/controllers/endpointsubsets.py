"""Endpoints subsets in kube's canonical layout (pkg/api/v1/endpoints RepackSubsets), and
the EndpointSlice names the endpoint controllers share.

An Endpoints object can say the same thing many ways (one subset per port, one per
address, repeats); repacking expands it to (address, port) pairs and regroups them: one
subset per set of addresses, holding every port those addresses share.  An address that
is not ready on some port stays not ready there.  kube orders ports and subsets by a hash
of Go's in-memory form; here they are ordered by their contents (addresses by IP, then
target UID, as kube does).

The label keys and manager names on EndpointSlices are kube's own
(``kubernetes.io/service-name`` and so on): kube-proxy, ingress controllers and the
aggregator (aggregator/resolver.py) find a Service's slices by them.
"""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.validation.ips import go_string, parse_ip_sloppy

Obj = dict[str, Any]
SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NO_PORT: tuple[Any, ...] = ()  # an address without ports (kube's Port -1 sentinel)


def _port_key(port: Obj) -> tuple[Any, ...]:
    return (
        port.get("name") or "",
        int(port.get("port") or 0),
        port.get("protocol") or "TCP",
        port.get("appProtocol") or "",
    )


def _address_key(address: Obj) -> tuple[str, str]:
    return address.get("ip") or "", ((address.get("targetRef") or {}).get("uid") or "")


def canonical(value: Any) -> bytes:
    """A value's bytes with sorted keys: for comparing and ordering."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def repack_subsets(subsets: list[Obj]) -> list[Obj]:
    """kube's RepackSubsets: the canonical form of an Endpoints object's subsets."""
    addresses: dict[tuple[str, str], Obj] = {}
    ports: dict[tuple[Any, ...], Obj] = {}
    ready_by_port: dict[tuple[Any, ...], dict[tuple[str, str], bool]] = {}
    for given in subsets:
        keys = [_port_key(p) for p in given.get("ports") or []] or [NO_PORT]
        for port, key in zip(given.get("ports") or [{}], keys, strict=False):
            if key != NO_PORT:
                ports.setdefault(key, port)
            for is_ready, field in ((True, "addresses"), (False, "notReadyAddresses")):
                for address in given.get(field) or []:
                    akey = _address_key(address)
                    addresses.setdefault(akey, address)
                    marks = ready_by_port.setdefault(key, {})
                    marks[akey] = marks.get(akey, True) and is_ready
    grouped: dict[bytes, tuple[dict[tuple[str, str], bool], list[tuple[Any, ...]]]] = {}
    for key, marks in ready_by_port.items():
        group = canonical(sorted(marks.items()))
        entry = grouped.setdefault(group, (marks, []))
        if key != NO_PORT:
            entry[1].append(key)
    out = []
    for marks, port_keys in grouped.values():
        ordered = sorted(marks)
        subset: Obj = {}
        ready = [addresses[a] for a in ordered if marks[a]]
        not_ready = [addresses[a] for a in ordered if not marks[a]]
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        if port_keys:
            subset["ports"] = [ports[k] for k in sorted(port_keys)]
        out.append(subset)
    return sorted(out, key=canonical)


def controller_ref(kind: str, meta: Obj) -> Obj:
    """The owner reference a controller puts on what it makes for a core object."""
    return {
        "apiVersion": "v1",
        "kind": kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def normalized_ip(text: str) -> tuple[str, str] | None:
    """(the IP as Go prints it, "IPv4" or "IPv6"), read as kube's ParseIPSloppy reads it
    (leading zeros allowed), or None for no IP."""
    ip = parse_ip_sloppy(text)
    if ip is None:
        return None
    printed = go_string(ip)  # an IPv4-mapped IPv6 address prints, and counts, as IPv4
    return printed, "IPv6" if ":" in printed else "IPv4"


def slice_ports_key(ports: list[Obj]) -> bytes:
    """Which slices carry the same ports (kube's port map key): order does not matter."""
    return canonical(sorted(_port_key(p) for p in ports))
