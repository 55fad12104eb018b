"""The load balancer status a Service's or an Ingress's controller reports, checked as
kube's ValidateLoadBalancerStatus and ValidateIngressLoadBalancerStatus check it.

Each ingress point: an IP that is one (addresses already stored may stay, kube's
ratcheting), a hostname that is a DNS subdomain and not an IP; for a Service, only when
it is of type LoadBalancer, with an ``ipMode`` that needs an IP and is ``VIP`` or
``Proxy`` (defaulted to ``VIP`` where an IP is given, defaults.py).
"""

from __future__ import annotations

from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.ips import legacy_ip_errors, parse_ip_sloppy
from platform_api.validation.names import is_dns1123_subdomain

Obj = dict[str, Any]
IP_MODES = ["Proxy", "VIP"]
_AT = "status.loadBalancer.ingress"


def validate_service_status(status: Obj, old_status: Obj, spec: Obj) -> list[FieldError]:
    points = _points(status)
    if not points:
        return []
    if spec.get("type", "ClusterIP") != "LoadBalancer":
        return [field.forbidden(_AT, "may only be used when `spec.type` is 'LoadBalancer'")]
    errs: list[FieldError] = []
    kept = _ips(old_status)
    for i, point in enumerate(points):
        at, ip, mode = f"{_AT}[{i}]", point.get("ip") or "", point.get("ipMode")
        if ip and ip not in kept:
            errs += [field.invalid(f"{at}.ip", ip, m) for m in legacy_ip_errors(ip)]
        if mode is None and ip:
            errs.append(field.required(f"{at}.ipMode", "must be specified when `ip` is set"))
        elif mode is not None and not ip:
            errs.append(
                field.forbidden(f"{at}.ipMode", "may not be specified when `ip` is not set")
            )
        elif mode is not None and mode not in IP_MODES:
            errs.append(field.not_supported(f"{at}.ipMode", mode, IP_MODES))
        errs += _hostname(point, at)
    return errs


def validate_ingress_status(status: Obj, old_status: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    kept = _ips(old_status)
    for i, point in enumerate(_points(status)):
        at, ip = f"{_AT}[{i}]", point.get("ip") or ""
        if ip and ip not in kept:
            errs += [field.invalid(f"{at}.ip", ip, m) for m in legacy_ip_errors(ip)]
        errs += _hostname(point, at)
    return errs


def default_ip_modes(obj: Obj) -> None:
    """SetDefaults_Service: a LoadBalancer's ingress IPs are ``VIP`` unless told."""
    if (obj.get("spec") or {}).get("type") != "LoadBalancer":
        return
    for point in _points(obj.get("status") or {}):
        if point.get("ip") and point.get("ipMode") is None:
            point["ipMode"] = "VIP"


def _points(status: Any) -> list[Obj]:
    balancer = status.get("loadBalancer") if isinstance(status, dict) else None
    points = balancer.get("ingress") if isinstance(balancer, dict) else None
    return [p for p in points if isinstance(p, dict)] if isinstance(points, list) else []


def _ips(status: Obj) -> set[str]:
    return {p["ip"] for p in _points(status) if isinstance(p.get("ip"), str)}


def _hostname(point: Obj, at: str) -> list[FieldError]:
    name = point.get("hostname") or ""
    if not name:
        return []
    errs = [field.invalid(f"{at}.hostname", name, m) for m in is_dns1123_subdomain(name)]
    if parse_ip_sloppy(name) is not None:
        errs.append(field.invalid(f"{at}.hostname", name, "must be a DNS name, not an IP address"))
    return errs
