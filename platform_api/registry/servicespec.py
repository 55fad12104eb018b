"""Service validation: kube's ``ValidateService`` rules for the spec's ports, type,
selector, session affinity and external name, in its order and words."""

from __future__ import annotations

import re
from typing import Any

import orjson

from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.ips import cidr_errors, special_ip_errors
from platform_api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    validate_labels,
)

Obj = dict[str, Any]
TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
AFFINITIES = ["ClientIP", "None"]
NODE_PORTS = (30000, 32767)  # --service-node-port-range's default
_PORT_NAME = re.compile(r"^[-a-z0-9]+\Z")
_LETTER = re.compile(r"[a-z]")


def port_number_errors(value: int) -> list[str]:
    """``validation.IsValidPortNum``."""
    return [] if 1 <= value <= 65535 else ["must be between 1 and 65535, inclusive"]


def port_name_errors(value: str) -> list[str]:
    """``validation.IsValidPortName``: an IANA service name."""
    errs = []
    if len(value) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME.match(value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _LETTER.search(value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value and (value[0] == "-" or value[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def validate_service(spec: Obj) -> list[FieldError]:
    kind = spec.get("type", "")
    ports: list[Obj] = spec.get("ports") or []
    headless = spec.get("clusterIP") == "None"
    errs: list[FieldError] = []
    if not ports and not headless and kind != "ExternalName":
        errs.append(field.required("spec.ports"))
    if kind == "ExternalName":
        name = spec.get("externalName", "")
        if not name:
            errs.append(field.required("spec.externalName"))
        errs += [
            field.invalid("spec.externalName", name, m)
            for m in (is_dns1123_subdomain(name.removesuffix(".")) if name else [])
        ]
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _port(port, f"spec.ports[{i}]", len(ports) > 1, names)
    if spec.get("selector") is not None:
        errs += validate_labels(spec["selector"], "spec.selector")
    affinity = spec.get("sessionAffinity")
    if affinity is not None and affinity not in AFFINITIES:
        errs.append(field.not_supported("spec.sessionAffinity", affinity, AFFINITIES))
    if kind not in TYPES:
        errs.append(field.not_supported("spec.type", kind, TYPES))
    errs += _node_ports(kind, ports)
    errs += _duplicate_ports(ports)
    for i, ip in enumerate(spec.get("externalIPs") or []):
        errs += special_ip_errors(ip, f"spec.externalIPs[{i}]")
    ranges: list[str] = spec.get("loadBalancerSourceRanges") or []
    if ranges:
        at = "spec.LoadBalancerSourceRanges"  # sic: kube's path names the Go field
        if kind != "LoadBalancer":
            errs.append(field.forbidden(at, "may only be used when `type` is 'LoadBalancer'"))
        for i, value in enumerate(ranges):  # padded values pass, as kube lets them
            errs += cidr_errors(value.strip(), f"{at}[{i}]")
    return errs


def _port(port: Obj, at: str, require_name: bool, names: set[str]) -> list[FieldError]:
    """``validateServicePort``."""
    errs: list[FieldError] = []
    name = port.get("name", "")
    if require_name and not name:
        errs.append(field.required(f"{at}.name"))
    elif name:
        errs += [field.invalid(f"{at}.name", name, m) for m in is_dns1123_label(name)]
        if name in names:
            errs.append(field.duplicate(f"{at}.name", name))
        names.add(name)
    number = port.get("port", 0)
    errs += [field.invalid(f"{at}.port", number, m) for m in port_number_errors(number)]
    protocol = port.get("protocol", "")
    if not protocol:
        errs.append(field.required(f"{at}.protocol"))
    elif protocol not in PROTOCOLS:
        errs.append(field.not_supported(f"{at}.protocol", protocol, PROTOCOLS))
    target = port.get("targetPort", 0)
    problems = port_name_errors(target) if isinstance(target, str) else port_number_errors(target)
    errs += [field.invalid(f"{at}.targetPort", target, m) for m in problems]
    if port.get("appProtocol") is not None:
        app = port["appProtocol"]
        errs += [field.invalid(f"{at}.appProtocol", app, m) for m in is_qualified_name(app)]
    return errs


def _node_ports(kind: str, ports: list[Obj]) -> list[FieldError]:
    errs: list[FieldError] = []
    low, high = NODE_PORTS
    for i, port in enumerate(ports):
        node_port = port.get("nodePort") or 0
        if not node_port:
            continue
        at = f"spec.ports[{i}].nodePort"
        if kind == "ClusterIP":
            errs.append(field.forbidden(at, "may not be used when `type` is 'ClusterIP'"))
        elif not low <= node_port <= high:
            detail = (
                f"provided port is not in the valid range. The range of valid ports is {low}-{high}"
            )
            errs.append(field.invalid(at, node_port, detail))
    return errs


def _duplicate_ports(ports: list[Obj]) -> list[FieldError]:
    """Two ports with one (protocol, port): kube names the pair as its Go struct."""
    errs: list[FieldError] = []
    seen: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol", ""), port.get("port", 0))
        if key in seen:
            shown = {"Name": "", "Protocol": key[0], "AppProtocol": None, "Port": key[1]}
            shown |= {"TargetPort": 0, "NodePort": 0}
            errs.append(field.duplicate(f"spec.ports[{i}]", GoText(orjson.dumps(shown).decode())))
        seen.add(key)
    return errs
