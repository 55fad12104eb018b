"""Validation shared by pods and pod templates (kube's ValidatePodSpec): the spec's own
fields here, volumes in podvolumes.py, each container in podcontainers.py."""

from __future__ import annotations

from typing import Any

from platform_api.registry.podcontainers import PodFacts, validate_common, validate_handlers
from platform_api.registry.podephemeral import validate_ephemeral_containers
from platform_api.registry.podos import validate_os_rules
from platform_api.registry.podresources import container_resources, pod_claims, pod_resources
from platform_api.registry.podscheduling import validate_affinity, validate_topology_spread
from platform_api.registry.podsecurity import (
    host_users_rules,
    pod_security_context,
    windows_host_process_rules,
)
from platform_api.registry.podvolumes import validate_volumes
from platform_api.registry.scheduling import validate_preemption_policy
from platform_api.selectors import SelectorError, label_selector_from
from platform_api.validation import field
from platform_api.validation.field import FieldError, in_range
from platform_api.validation.ips import INVALID_IP, parse_ip
from platform_api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_dns1123_subdomain_with_underscore,
    is_qualified_name,
    validate_labels,
)
from platform_api.validation.tolerations import validate_tolerations

Obj = dict[str, Any]
RESTART_POLICIES = ["Always", "OnFailure", "Never"]  # kube lists them in this order
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
CONTAINER_RESTART = ["Always", "Never", "OnFailure"]  # kube sorts these
OS_NAMES = ["linux", "windows"]
MAX_NAMESERVERS, MAX_SEARCHES, MAX_SEARCH_CHARS = 3, 32, 2048


def validate_pod_spec(spec: Obj, path: str, pod_name: str | None = None) -> list[FieldError]:
    """kube's ValidatePodSpec, in its order; ``pod_name``, a Pod's (not a template's),
    adds what a Pod is refused for: images with surrounding whitespace, ephemeral
    volumes whose claims' names (``<pod>-<volume>``) would be invalid."""
    pod = pod_name is not None
    volumes, errs = validate_volumes(spec.get("volumes") or [], f"{path}.volumes", pod_name)
    claims, claim_errors = pod_claims(spec.get("resourceClaims") or [], f"{path}.resourceClaims")
    errs += claim_errors
    facts = PodFacts(
        volumes=volumes,
        host_users=spec.get("hostUsers") is not False,
        restart_policy=spec.get("restartPolicy") or "",
        claims=claims,
        grace_period=spec.get("terminationGracePeriodSeconds"),
    )
    containers: list[Obj] = spec.get("containers") or []
    if not containers:
        errs.append(field.required(f"{path}.containers"))
    names: set[str] = set()
    for i, container in enumerate(containers):
        at = f"{path}.containers[{i}]"
        errs += validate_common(container, at, facts)
        name = container.get("name", "")
        if name in names:
            errs.append(field.duplicate(f"{at}.name", name))
        names.add(name)
        errs += _choice(container, "restartPolicy", CONTAINER_RESTART, at)
        errs += validate_handlers(container, at, False, facts.grace_period)
    errs += _host_port_conflicts(containers, f"{path}.containers")
    inits = spec.get("initContainers") or []
    errs += _init_containers(inits, f"{path}.initContainers", names, facts)
    others = names | {c.get("name", "") for c in spec.get("initContainers") or []}
    ephemeral = spec.get("ephemeralContainers") or []
    errs += validate_ephemeral_containers(ephemeral, f"{path}.ephemeralContainers", others, facts)
    errs += pod_resources(spec, path, claims)
    errs += _host_network_ports(spec, path)
    errs += _choice(spec, "restartPolicy", RESTART_POLICIES, path)
    errs += _choice(spec, "dnsPolicy", DNS_POLICIES, path)
    errs += validate_labels(spec.get("nodeSelector") or {}, f"{path}.nodeSelector")
    context = spec.get("securityContext") or {}
    errs += pod_security_context(context, spec, f"{path}.securityContext")
    errs += validate_affinity(spec.get("affinity") or {}, f"{path}.affinity")
    errs += validate_dns_config(spec, f"{path}.dnsConfig")
    errs += _qualified(spec.get("readinessGates") or [], "conditionType", f"{path}.readinessGates")
    errs += _scheduling_gates(spec.get("schedulingGates") or [], f"{path}.schedulingGates")
    spread = spec.get("topologySpreadConstraints") or []
    errs += validate_topology_spread(spread, f"{path}.topologySpreadConstraints")
    errs += windows_host_process_rules(spec, path)
    errs += host_users_rules(spec, path)
    errs += _names_and_limits(spec, path)
    if spec.get("tolerations"):
        errs += validate_tolerations(spec["tolerations"], f"{path}.tolerations")
    errs += _host_aliases(spec.get("hostAliases") or [], f"{path}.hostAliases")
    if spec.get("preemptionPolicy") is not None:
        errs += validate_preemption_policy(spec["preemptionPolicy"], f"{path}.preemptionPolicy")
    if isinstance(spec.get("overhead"), dict):
        errs += container_resources({"limits": spec["overhead"]}, f"{path}.overhead", ())
    os_errors = _os(spec.get("os"), f"{path}.os")
    errs += os_errors or validate_os_rules(spec, path)
    if pod:
        for key in ("containers", "initContainers"):
            errs += _image_whitespace(spec.get(key) or [], f"{path}.{key}")
    return errs


def _init_containers(
    containers: list[Obj], path: str, names: set[str], facts: PodFacts
) -> list[FieldError]:
    """``validateInitContainers``: names unique across both lists; only sidecars
    (restartPolicy Always) may have probes and lifecycle hooks."""
    errs: list[FieldError] = []
    taken = set(names)
    for i, container in enumerate(containers):
        at = f"{path}[{i}]"
        errs += validate_common(container, at, facts)
        restart = container.get("restartPolicy")
        errs += _choice(container, "restartPolicy", CONTAINER_RESTART, at)
        name = container.get("name", "")
        if name in taken:
            errs.append(field.duplicate(f"{at}.name", name))
        elif name:
            taken.add(name)
        # Init containers run one by one: each is checked alone (kube names it [0]).
        errs += _host_port_conflicts([container], path)
        errs += validate_handlers(container, at, restart != "Always", facts.grace_period)
    return errs


def _host_port_conflicts(containers: list[Obj], path: str) -> list[FieldError]:
    """``checkHostPortConflicts``: a protocol, host IP and host port taken twice."""
    taken: set[str] = set()
    errs: list[FieldError] = []
    for i, container in enumerate(containers):
        for j, port in enumerate(container.get("ports") or []):
            host = port.get("hostPort") or 0
            if not host:
                continue
            key = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{host}"
            if key in taken:
                errs.append(field.duplicate(f"{path}[{i}].ports[{j}].hostPort", key))
            taken.add(key)
    return errs


def _host_network_ports(spec: Obj, path: str) -> list[FieldError]:
    if not spec.get("hostNetwork"):
        return []
    errs = []
    for i, container in enumerate(spec.get("containers") or []):
        for j, port in enumerate(container.get("ports") or []):
            host = port.get("hostPort") or 0
            if host != (port.get("containerPort") or 0):
                where = f"{path}.containers[{i}].ports[{j}].hostPort"
                detail = "must match `containerPort` when `hostNetwork` is true"
                errs.append(field.invalid(where, host, detail))
    return errs


def validate_dns_config(spec: Obj, at: str) -> list[FieldError]:
    """``validatePodDNSConfig``: dnsPolicy None needs nameservers; at most 3 of them,
    32 search domains (underscores allowed) in 2048 characters, named options."""
    config = spec.get("dnsConfig")
    if spec.get("dnsPolicy") == "None":
        if config is None:
            return [field.required(at, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not config.get("nameservers"):
            why = "must provide at least one DNS nameserver when `dnsPolicy` is None"
            return [field.required(f"{at}.nameservers", why)]
    if not isinstance(config, dict):
        return []
    errs: list[FieldError] = []
    servers = config.get("nameservers") or []
    if len(servers) > MAX_NAMESERVERS:
        why = f"must not have more than {MAX_NAMESERVERS} nameservers"
        errs.append(field.invalid(f"{at}.nameservers", servers, why))
    for i, server in enumerate(servers):
        if parse_ip(server) is None:
            errs.append(field.invalid(f"{at}.nameservers[{i}]", server, INVALID_IP))
    searches = config.get("searches") or []
    if len(searches) > MAX_SEARCHES:
        why = f"must not have more than {MAX_SEARCHES} search paths"
        errs.append(field.invalid(f"{at}.searches", searches, why))
    if len(" ".join(searches)) > MAX_SEARCH_CHARS:
        why = f"must not have more than {MAX_SEARCH_CHARS} characters (including spaces) in the search list"
        errs.append(field.invalid(f"{at}.searches", searches, why))
    for i, search in enumerate(searches):
        domain = search.removesuffix(".")  # a trailing dot is fine
        errs += [
            field.invalid(f"{at}.searches[{i}]", domain, m)
            for m in is_dns1123_subdomain_with_underscore(domain)
        ]
    for i, option in enumerate(config.get("options") or []):
        if not (option or {}).get("name"):
            errs.append(field.required(f"{at}.options[{i}]", "must not be empty"))
    return errs


def _qualified(items: list[Obj], key: str, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, item in enumerate(items):
        value = (item or {}).get(key, "")
        errs += [field.invalid(f"{at}[{i}].{key}", value, m) for m in is_qualified_name(value)]
    return errs


def _scheduling_gates(gates: list[Obj], at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        name = (gate or {}).get("name", "")
        errs += [field.invalid(f"{at}[{i}]", name, m) for m in is_qualified_name(name)]
        if name in seen:
            errs.append(field.duplicate(f"{at}[{i}]", name))
        seen.add(name)
    return errs


def _host_aliases(aliases: list[Obj], at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, alias in enumerate(aliases):
        ip = (alias or {}).get("ip", "")
        if parse_ip(ip) is None:
            errs.append(field.invalid(f"{at}[{i}].ip", ip, INVALID_IP))
        for j, host in enumerate((alias or {}).get("hostnames") or []):
            path = f"{at}[{i}].hostnames[{j}]"
            errs += [field.invalid(path, host, m) for m in is_dns1123_subdomain(host)]
    return errs


def _os(os_: Any, at: str) -> list[FieldError]:
    if not isinstance(os_, dict):
        return []
    name = os_.get("name", "")
    if not name:
        return [field.required(f"{at}.name")]
    if name not in OS_NAMES:
        return [field.not_supported(at, name, OS_NAMES)]
    return []


def _choice(spec: Obj, key: str, allowed: list[str], path: str) -> list[FieldError]:
    value = spec.get(key)
    if value is not None and value not in allowed:
        return [field.not_supported(f"{path}.{key}", value, allowed)]
    return []


def _names_and_limits(spec: Obj, path: str) -> list[FieldError]:
    """The service account, node and host names, and the active deadline."""
    errs: list[FieldError] = []
    account = spec.get("serviceAccountName") or ""
    if account:
        errs += [
            field.invalid(f"{path}.serviceAccountName", account, m)
            for m in is_dns1123_subdomain(account)
        ]
    node = spec.get("nodeName") or ""
    if node:
        errs += [field.invalid(f"{path}.nodeName", node, m) for m in is_dns1123_subdomain(node)]
    errs += in_range(
        f"{path}.activeDeadlineSeconds", spec.get("activeDeadlineSeconds"), 1, 2147483647
    )
    for key in ("hostname", "subdomain"):
        value = spec.get(key) or ""
        if value:
            errs += [field.invalid(f"{path}.{key}", value, m) for m in is_dns1123_label(value)]
    return errs


def _image_whitespace(containers: list[Obj], path: str) -> list[FieldError]:
    errs = []
    for i, container in enumerate(containers):
        image = container.get("image") or ""
        if image != image.strip():
            detail = "must not have leading or trailing whitespace"
            errs.append(field.invalid(f"{path}[{i}].image", image, detail))
    return errs


def selector_matches(selector: Obj | None, labels: dict[str, str]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) against a label set; an absent or
    empty selector, or one that does not convert, matches nothing (PDBs, workloads)."""
    if not selector:
        return False
    try:
        return label_selector_from(selector).matches(labels)
    except SelectorError:
        return False
