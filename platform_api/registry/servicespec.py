"""Service validation: kube's ``ValidateService`` rules for the spec's ports, type,
selector, session affinity, external name and cluster IP fields, in its order and words."""

from __future__ import annotations

import re
from typing import Any

import orjson

from platform_api.registry.servicetypes import (
    externally_accessible,
    load_balancer,
    needs_health_check,
)
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.ips import (
    cidr_errors,
    legacy_ip_errors,
    parse_ip_sloppy,
    special_ip_errors,
)
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
FAMILIES = ["IPv4", "IPv6"]
POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"]
_PORT_NAME = re.compile(r"^[-a-z0-9]+\Z")
_LETTER = re.compile(r"[a-z]")


TRAFFIC_POLICIES = ["Cluster", "Local"]
# kube lists them unsorted (with its PreferSameTrafficDistribution gate on, the default).
TRAFFIC_DISTRIBUTIONS = ["PreferClose", "PreferSameZone", "PreferSameNode"]
LB_ONLY = "may only be used when `type` is 'LoadBalancer'"
_LOCAL_LB_ONLY = (
    "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"
)


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
    if headless and kind in ("LoadBalancer", "NodePort"):  # they need an address
        first = (spec.get("clusterIPs") or ["None"])[0]
        detail = f"may not be set to 'None' for {kind} services"
        errs.append(field.invalid("spec.clusterIPs[0]", first, detail))
    if kind == "ExternalName":
        for key in ("clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if spec.get(key) or (key == "ipFamilyPolicy" and spec.get(key) is not None):
                errs.append(
                    field.forbidden(f"spec.{key}", "may not be set for ExternalName services")
                )
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
    errs += _affinity_config(affinity, spec.get("sessionAffinityConfig"))
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
            errs.append(field.forbidden(at, LB_ONLY))
        for i, value in enumerate(ranges):  # padded values pass, as kube lets them
            errs += cidr_errors(value.strip(), f"{at}[{i}]")
    errs += _type_field_errors(spec)
    return errs + validate_cluster_ips(spec)


def _type_field_errors(spec: Obj) -> list[FieldError]:
    """The fields only some types hold (servicetypes.py), checked after the source
    ranges as kube's ValidateService checks them."""
    errs: list[FieldError] = []
    if spec.get("allocateLoadBalancerNodePorts") is not None and not load_balancer(spec):
        errs.append(field.forbidden("spec.allocateLoadBalancerNodePorts", LB_ONLY))
    lb_class = spec.get("loadBalancerClass")
    if lb_class is not None:
        if not load_balancer(spec):
            errs.append(field.forbidden("spec.loadBalancerClass", LB_ONLY))
        else:
            messages = is_qualified_name(lb_class)
            errs += [field.invalid("spec.loadBalancerClass", lb_class, m) for m in messages]
    policy = spec.get("externalTrafficPolicy") or ""
    if not externally_accessible(spec):
        if policy:
            detail = "may only be set for externally-accessible services"
            errs.append(field.invalid("spec.externalTrafficPolicy", policy, detail))
    elif not policy:
        errs.append(field.required("spec.externalTrafficPolicy"))
    elif policy not in TRAFFIC_POLICIES:
        errs.append(field.not_supported("spec.externalTrafficPolicy", policy, TRAFFIC_POLICIES))
    port = spec.get("healthCheckNodePort") or 0
    if not needs_health_check(spec):
        if port:
            errs.append(field.invalid("spec.healthCheckNodePort", port, _LOCAL_LB_ONLY))
    elif not port:
        errs.append(field.required("spec.healthCheckNodePort"))
    elif isinstance(port, int):
        errs += [
            field.invalid("spec.healthCheckNodePort", port, m) for m in port_number_errors(port)
        ]
    internal = spec.get("internalTrafficPolicy")
    if internal is not None and internal not in TRAFFIC_POLICIES:
        errs.append(field.not_supported("spec.internalTrafficPolicy", internal, TRAFFIC_POLICIES))
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution not in TRAFFIC_DISTRIBUTIONS:
        at = "spec.trafficDistribution"
        errs.append(field.not_supported(at, distribution, TRAFFIC_DISTRIBUTIONS))
    return errs


def load_balancer_class_update_errors(new: Obj, old: Obj) -> list[FieldError]:
    """A LoadBalancer's class is fixed once it is one (its controller owns it)."""
    lb_class = new.get("loadBalancerClass")
    if load_balancer(old) and load_balancer(new) and lb_class != old.get("loadBalancerClass"):
        return [field.invalid("spec.loadBalancerClass", lb_class, "may not change once set")]
    return []


def health_check_update_errors(new: Obj, old: Obj) -> list[FieldError]:
    """kube's validateServiceExternalTrafficFieldsUpdate: while a Service needs a health
    check node port (a LoadBalancer with Local traffic), the port it has is fixed."""
    moved = new.get("healthCheckNodePort") != old.get("healthCheckNodePort")
    if moved and needs_health_check(old) and needs_health_check(new):
        return [field.forbidden("spec.healthCheckNodePort", "field is immutable")]
    return []


def validate_cluster_ips(spec: Obj) -> list[FieldError]:
    """kube's ValidateServiceClusterIPsRelatedFields: clusterIP and clusterIPs agree,
    known families and policy, at most one address of each family, matching ipFamilies."""
    if spec.get("type") == "ExternalName":
        return []
    at = "spec.clusterIPs"
    ips: list[Any] = list(spec.get("clusterIPs") or [])
    errs: list[FieldError] = []
    if spec.get("clusterIP"):
        if not ips:
            errs.append(field.required(at))
        elif ips[0] != spec["clusterIP"]:
            errs.append(field.invalid(at, ips, "first value must match `clusterIP`"))
    elif ips:
        errs.append(field.invalid(at, ips, "must be empty when `clusterIP` is not specified"))
    families: list[Any] = list(spec.get("ipFamilies") or [])
    for i, family in enumerate(families):
        if family not in FAMILIES:
            errs.append(field.not_supported(f"spec.ipFamilies[{i}]", family, FAMILIES))
        if family in families[:i]:
            errs.append(field.duplicate(f"spec.ipFamilies[{i}]", family))
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in POLICIES:
        errs.append(field.not_supported("spec.ipFamilyPolicy", policy, POLICIES))
    bad = False
    for i, ip in enumerate(ips):
        if i == 0 and ip == "None":
            if len(ips) > 1:
                bad = True
                errs.append(field.invalid(at, ips, "'None' must be the first and only value"))
            continue
        messages = legacy_ip_errors(ip)
        bad = bad or bool(messages)
        errs += [field.invalid(f"{at}[{i}]", ip, m) for m in messages]
    if len(ips) > 2:
        errs.append(field.invalid(at, ips, "may only hold up to 2 values"))
    if bad:
        return errs
    versions = [parse_ip_sloppy(ip) for ip in ips]
    if len(ips) > 1 and len({v.version for v in versions if v is not None}) != len(ips):
        errs.append(field.invalid(at, ips, "may specify no more than one IP for each IP family"))
    if ips != ["None"]:
        for i, (version, family) in enumerate(zip(versions, families, strict=False)):
            want = {"IPv4": 4, "IPv6": 6}.get(family)
            if version is not None and want is not None and version.version != want:
                detail = f"expected an {family} value as indicated by `ipFamilies[{i}]`"
                errs.append(field.invalid(f"{at}[{i}]", ips[i], detail))
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
    """No node port on a ClusterIP Service, none twice for one protocol (the range is the
    allocator's to check, admission/nodeports.py, as kube's)."""
    errs: list[FieldError] = []
    for i, port in enumerate(ports):
        if port.get("nodePort") and kind == "ClusterIP":
            why = "may not be used when `type` is 'ClusterIP'"
            errs.append(field.forbidden(f"spec.ports[{i}].nodePort", why))
    seen: set[tuple[Any, Any]] = set()  # one node port per protocol
    for i, port in enumerate(ports):
        if not port.get("nodePort"):
            continue
        key = (port.get("protocol", ""), port["nodePort"])
        if key in seen:
            errs.append(field.duplicate(f"spec.ports[{i}].nodePort", port["nodePort"]))
        seen.add(key)
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


def _headless(spec: Obj) -> bool:
    return list(spec.get("clusterIPs") or []) == ["None"]


def _go_list(values: list[Any]) -> list[Any] | None:
    return values or None  # a nil Go slice prints as null


def validate_cluster_ips_update(new: Obj, old: Obj) -> list[FieldError]:
    """kube's validateUpgradeDowngradeClusterIPs and ...IPFamilies: the primary address
    and family never change; a secondary goes only with ``SingleStack``."""
    if "ExternalName" in (new.get("type"), old.get("type")):
        return []
    ips, old_ips = list(new.get("clusterIPs") or []), list(old.get("clusterIPs") or [])
    errs: list[FieldError] = []
    policy = new.get("ipFamilyPolicy")
    fixed = "may not change once set"
    if not (_headless(new) and _headless(old)):
        if len(old_ips) == len(ips):
            errs += [
                field.invalid(f"spec.clusterIPs[{i}]", ips, fixed)
                for i, ip in enumerate(old_ips)
                if ip != ips[i]
            ]
        elif len(old_ips) > len(ips):
            if not ips:
                errs.append(
                    field.invalid("spec.clusterIPs[0]", None, "primary clusterIP can not be unset")
                )
            elif ips[0] != old_ips[0]:
                errs.append(field.invalid("spec.clusterIPs[0]", ips, fixed))
            if len(ips) == 1 and policy != "SingleStack":
                detail = "must be set to 'SingleStack' when releasing the secondary clusterIP"
                errs.append(field.invalid("spec.ipFamilyPolicy", policy, detail))
        elif old_ips and ips[0] != old_ips[0]:
            errs.append(field.invalid("spec.clusterIPs[0]", ips, fixed))
    if _headless(new) or _headless(old):
        return errs
    families = list(new.get("ipFamilies") or [])
    old_families = list(old.get("ipFamilies") or [])
    if len(old_families) == len(families):
        errs += [
            field.invalid("spec.ipFamilies[0]", families, fixed)  # sic: kube's index
            for i, family in enumerate(old_families)
            if family != families[i]
        ]
    elif len(old_families) > len(families):
        if not ips:
            errs.append(
                field.invalid(
                    "spec.ipFamilies[0]", _go_list(families), "primary ipFamily can not be unset"
                )
            )
        if families and families[0] != old_families[0]:
            errs.append(field.invalid("spec.ipFamilies[0]", _go_list(ips), fixed))
        if len(families) == 1 and policy != "SingleStack":
            detail = "must be set to 'SingleStack' when releasing the secondary ipFamily"
            errs.append(field.invalid("spec.ipFamilyPolicy", policy, detail))
    elif old_families and families and families[0] != old_families[0]:
        errs.append(field.invalid("spec.ipFamilies[0]", _go_list(ips), fixed))
    return errs


MAX_CLIENT_IP_AFFINITY = 86400  # seconds: a day


def _affinity_config(affinity: Any, config: Any) -> list[FieldError]:
    """kube's session affinity config rules: ClientIP's needs a timeout of up to a day
    (its defaults fill a missing one), None takes none."""
    at = "spec.sessionAffinityConfig"
    if affinity == "None" and config is not None:
        return [field.forbidden(at, "must not be set when session affinity is None")]
    if affinity != "ClientIP":
        return []
    when = "when session affinity type is ClientIP"
    if not isinstance(config, dict):
        return [field.required(at, when)]
    client = config.get("clientIP")
    if not isinstance(client, dict):
        return [field.required(f"{at}.clientIP", when)]
    timeout = client.get("timeoutSeconds")
    if timeout is None:
        return [field.required(f"{at}.clientIP.timeoutSeconds", when)]
    if not 0 < timeout <= MAX_CLIENT_IP_AFFINITY:
        detail = f"must be greater than 0 and less than {MAX_CLIENT_IP_AFFINITY}"
        return [field.invalid(f"{at}.clientIP.timeoutSeconds", timeout, detail)]
    return []
