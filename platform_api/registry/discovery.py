"""EndpointSlices (discovery/v1) and v1 Endpoints: kube's defaults and validation,
each message as kube-apiserver v1.36 answered it."""

from __future__ import annotations

from platform_api.registry.core import CoreCreateOnUpdateStrategy
from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.ips import (
    INVALID_IP,
    legacy_ip_errors,
    parse_ip,
    special_ip_errors,
    strict_ip_errors,
)
from platform_api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
)

ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]
MAX_ENDPOINTS, MAX_ADDRESSES, MAX_PORTS = 1000, 100, 20000
MAX_HINTS = 8  # zones, and nodes, an endpoint's hints may name
PROTOCOLS = ["SCTP", "TCP", "UDP"]
HOSTNAME_LABEL = "platform.io/hostname"  # a v1beta1 endpoint's node, in its topology


@defaults("discovery.platform.io", "EndpointSlice")
def _endpoint_slice(obj: Obj) -> None:
    for port in obj.get("ports") or []:
        port.setdefault("name", "")
        port.setdefault("protocol", "TCP")
    for endpoint in obj.get("endpoints") or []:
        endpoint.setdefault("conditions", {})


def drop_topology(new: Obj, old: Obj | None) -> None:
    """kube's dropTopologyOnV1: v1 takes no ``deprecatedTopology``; unless the endpoints
    are left as they were, it is dropped, and a node name the old slice kept only
    there moves to ``nodeName``."""
    endpoints = new.get("endpoints") or []
    if old is not None and (old.get("endpoints") or []) == endpoints:
        return
    before = {
        ((e or {}).get("deprecatedTopology") or {}).get(HOSTNAME_LABEL)
        for e in (old or {}).get("endpoints") or []
    } - {None}
    for endpoint in endpoints:
        if not isinstance(endpoint, dict):
            continue
        name = (endpoint.pop("deprecatedTopology", None) or {}).get(HOSTNAME_LABEL)
        valid = isinstance(name, str) and name in before and not is_dns1123_subdomain(name)
        if endpoint.get("nodeName") is None and valid:
            endpoint["nodeName"] = name


@register("discovery.platform.io", "EndpointSlice")
class EndpointSliceStrategy(GenericStrategy):
    update_meta_checks = "C"

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        drop_topology(obj, None)
        obj["metadata"]["generation"] = 1

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """kube's: the generation counts changes of anything but metadata, and labels."""
        super().prepare_for_update(new, old)
        drop_topology(new, old)
        generation = old["metadata"].get("generation", 1)
        if _content(new) != _content(old) or _labels(new) != _labels(old):
            generation += 1
        new["metadata"]["generation"] = generation

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_endpoint_slice(obj)

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        if obj.get("addressType") == "FQDN":
            return ["spec.addressType: FQDN endpoints are deprecated"]
        return []

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old) + validate_endpoint_slice(new, old)
        if new.get("addressType") != old.get("addressType"):
            errs.append(field.invalid("addressType", new.get("addressType"), "field is immutable"))
        return errs


def _content(obj: Obj) -> Obj:
    skip = ("metadata", "apiVersion", "kind")
    return {k: v for k, v in obj.items() if k not in skip and v is not None}


def _labels(obj: Obj) -> Obj:
    return obj["metadata"].get("labels") or {}


def validate_endpoint_slice(obj: Obj, old: Obj | None = None) -> list[FieldError]:
    """kube's ValidateEndpointSlice: the address type, the ports, the endpoints (whose
    errors an update leaving them as they were does not raise: older servers took them)."""
    kind = obj.get("addressType") or ""
    errs: list[FieldError] = []
    if not kind:
        errs.append(field.required("addressType"))
    elif kind not in ADDRESS_TYPES:
        errs.append(field.not_supported("addressType", kind, ADDRESS_TYPES))
    ports: list[Obj] = obj.get("ports") or []
    if len(ports) > MAX_PORTS:
        errs.append(field.too_many("ports", len(ports), MAX_PORTS))
    errs += _ports(ports)
    endpoints: list[Obj] = obj.get("endpoints") or []
    found: list[FieldError] = []
    if len(endpoints) > MAX_ENDPOINTS:
        found.append(field.too_many("endpoints", len(endpoints), MAX_ENDPOINTS))
    else:
        for i, endpoint in enumerate(endpoints):
            found += _endpoint(endpoint, kind, f"endpoints[{i}]")
    if found and old is not None and (old.get("endpoints") or []) == endpoints:
        found = []
    return errs + found


def _endpoint(endpoint: Obj, kind: str, at: str) -> list[FieldError]:
    addresses: list[str] = endpoint.get("addresses") or []
    errs: list[FieldError] = []
    if not addresses:
        errs.append(field.required(f"{at}.addresses", "must contain at least 1 address"))
    elif len(addresses) > MAX_ADDRESSES:
        errs.append(field.too_many(f"{at}.addresses", len(addresses), MAX_ADDRESSES))
    for i, address in enumerate(addresses):
        where = f"{at}.addresses[{i}]"
        if kind == "FQDN":
            errs += _fully_qualified(address, where)
        elif kind in ("IPv4", "IPv6"):
            errs += _ip(address, kind, at, where)
    node = endpoint.get("nodeName")
    if node is not None:
        errs += [field.invalid(f"{at}.nodeName", node, m) for m in is_dns1123_subdomain(node)]
    host = endpoint.get("hostname")
    if host is not None:
        errs += [field.invalid(f"{at}.hostname", host, m) for m in is_dns1123_label(host)]
    if isinstance(endpoint.get("hints"), dict):
        errs += _hints(endpoint["hints"], f"{at}.hints")
    return errs


def _ip(address: str, kind: str, at: str, where: str) -> list[FieldError]:
    """An address of the slice's family that an endpoint may have: an IPv4 one as kube's
    legacy fields take it, an IPv6 one strictly (canonical); the family error names
    the list, as kube's does."""
    problems = legacy_ip_errors(address) if kind == "IPv4" else strict_ip_errors(address)
    if problems:
        return [field.invalid(where, address, m) for m in problems]
    ip = parse_ip(address)  # both checks refuse what Python's parser does not take
    assert ip is not None
    errs: list[FieldError] = []
    if ip.version != (4 if kind == "IPv4" else 6):
        errs.append(field.invalid(f"{at}.addresses", address, f"must be an {kind} address"))
    return errs + special_ip_errors(address, where)


def _fully_qualified(name: str, at: str) -> list[FieldError]:
    """apimachinery's IsFullyQualifiedDomainName: a subdomain (a final dot dropped) of
    at least two labels.  Unlike kube, ``localhost`` passes: kube refuses loopback IPs
    in slices, and this name is how a Service reaches a process on this machine (as
    loopback Endpoints do, see ``_endpoint_address``)."""
    if not name:
        return [field.required(at)]
    name = name.removesuffix(".")
    problems = is_dns1123_subdomain(name)
    if problems:
        return [field.invalid(at, name, ",".join(problems))]
    labels = name.split(".")
    if len(labels) < 2 and name != "localhost":
        detail = "should be a domain with at least two segments separated by dots"
        return [field.invalid(at, name, detail)]
    for label in labels:
        problems = is_dns1123_label(label)
        if problems:
            return [field.invalid(at, label, ",".join(problems))]
    return []


def _hints(hints: Obj, at: str) -> list[FieldError]:
    """kube's validateHints: at most 8 zones (label values) and 8 nodes, none twice."""
    errs: list[FieldError] = []
    for key, check in (("forZones", is_label_value), ("forNodes", is_dns1123_subdomain)):
        entries = hints.get(key) or []
        if len(entries) > MAX_HINTS:
            return [*errs, field.too_many(f"{at}.{key}", len(entries), MAX_HINTS)]
        seen: set[str] = set()
        for i, entry in enumerate(entries):
            name = (entry or {}).get("name") or ""
            where = f"{at}.{key}[{i}].name"
            if name in seen:
                errs.append(field.duplicate(where, name))
            seen.add(name)
            errs += field.each(where, name, check)
    return errs


def _ports(ports: list[Obj]) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"ports[{i}]"
        name = port.get("name") or ""
        if name:
            errs += [field.invalid(f"{at}.name", name, m) for m in is_dns1123_label(name)]
        if name in names:
            errs.append(field.duplicate(f"{at}.name", name))
        names.add(name)
        protocol = port.get("protocol")
        if not protocol:
            errs.append(field.required(f"{at}.protocol"))
        elif protocol not in PROTOCOLS:
            errs.append(field.not_supported(f"{at}.protocol", protocol, PROTOCOLS))
        app = port.get("appProtocol")
        if app is not None:
            errs += [field.invalid(f"{at}.appProtocol", app, m) for m in is_qualified_name(app)]
    return errs


@defaults("", "Endpoints")
def _endpoints(obj: Obj) -> None:
    for subset in obj.get("subsets") or []:
        for port in subset.get("ports") or []:
            port.setdefault("protocol", "TCP")


@register("", "Endpoints")
class EndpointsStrategy(CoreCreateOnUpdateStrategy):
    update_meta_checks = "UC"  # kube's update checks the whole Endpoints again

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_endpoints(obj.get("subsets") or [])

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return super().validate_update(new, old) + validate_endpoints(new.get("subsets") or [])


def validate_endpoints(subsets: list[Obj]) -> list[FieldError]:
    """kube's validateEndpointSubsets."""
    errs: list[FieldError] = []
    for i, subset in enumerate(subsets):
        at = f"subsets[{i}]"
        if not subset.get("addresses") and not subset.get("notReadyAddresses"):
            errs.append(field.required(at, "must specify `addresses` or `notReadyAddresses`"))
        for key in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(subset.get(key) or []):
                errs += _endpoint_address(address, f"{at}.{key}[{j}]")
        ports: list[Obj] = subset.get("ports") or []
        for j, port in enumerate(ports):
            errs += _endpoint_port(port, len(ports) > 1, f"{at}.ports[{j}]")
    return errs


def _endpoint_address(address: Obj, at: str) -> list[FieldError]:
    """The legacy IP check, the names, then kube's ValidateEndpointIP (whose own text
    for an address that does not parse has no example: kube says it twice).  Unlike
    kube, a loopback address passes: on this server a Service routes webhook calls to a
    process on the same machine through its Endpoints."""
    ip = address.get("ip") or ""
    errs = [] if parse_ip(ip) is not None else [field.invalid(f"{at}.ip", ip, INVALID_IP)]
    host = address.get("hostname") or ""
    if host:
        errs += [field.invalid(f"{at}.hostname", host, m) for m in is_dns1123_label(host)]
    node = address.get("nodeName")
    if node is not None:
        errs += [field.invalid(f"{at}.nodeName", node, m) for m in is_dns1123_subdomain(node)]
    if parse_ip(ip) is None:
        return [*errs, field.invalid(f"{at}.ip", ip, "must be a valid IP address")]
    return errs + special_ip_errors(ip, f"{at}.ip", loopback=True)


def _endpoint_port(port: Obj, named: bool, at: str) -> list[FieldError]:
    name = port.get("name") or ""
    errs: list[FieldError] = []
    if named and not name:
        errs.append(field.required(f"{at}.name"))
    elif name:
        errs += [field.invalid(f"{at}.name", name, m) for m in is_dns1123_label(name)]
    number = port.get("port") or 0
    if not 1 <= number <= 65535:
        errs.append(field.invalid(f"{at}.port", number, "must be between 1 and 65535, inclusive"))
    protocol = port.get("protocol")
    if not protocol:
        errs.append(field.required(f"{at}.protocol"))
    elif protocol not in PROTOCOLS:
        errs.append(field.not_supported(f"{at}.protocol", protocol, PROTOCOLS))
    return errs
