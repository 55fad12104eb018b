"""Validation shared by pods and pod templates (kube's ValidatePodSpec): the spec's own
fields here, volumes in podvolumes.py, each container in podcontainers.py."""

from __future__ import annotations

from typing import Any

from platform_api.registry.podcontainers import security_context, validate_common, validate_handlers
from platform_api.registry.podvolumes import validate_volumes
from platform_api.selectors import SelectorError, label_selector_from
from platform_api.validation import field
from platform_api.validation.field import FieldError, in_range
from platform_api.validation.names import is_dns1123_label, is_dns1123_subdomain, validate_labels
from platform_api.validation.tolerations import validate_tolerations

Obj = dict[str, Any]
RESTART_POLICIES = ["Always", "OnFailure", "Never"]  # kube lists them in this order
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
CONTAINER_RESTART = ["Always", "Never", "OnFailure"]  # kube sorts these


def validate_pod_spec(spec: Obj, path: str, pod: bool = False) -> list[FieldError]:
    """kube's ValidatePodSpec, in its order; ``pod`` adds what a Pod (not a template)
    is refused for: images with surrounding whitespace."""
    volumes, errs = validate_volumes(spec.get("volumes") or [], f"{path}.volumes")
    containers: list[Obj] = spec.get("containers") or []
    if not containers:
        errs.append(field.required(f"{path}.containers"))
    names: set[str] = set()
    for i, container in enumerate(containers):
        at = f"{path}.containers[{i}]"
        errs += validate_common(container, at, volumes)
        name = container.get("name", "")
        if name in names:
            errs.append(field.duplicate(f"{at}.name", name))
        names.add(name)
        errs += _choice(container, "restartPolicy", CONTAINER_RESTART, at)
        errs += validate_handlers(container, at, init_only=False)
    errs += _init_containers(
        spec.get("initContainers") or [], f"{path}.initContainers", names, volumes
    )
    errs += _host_network_ports(spec, path)
    errs += _choice(spec, "restartPolicy", RESTART_POLICIES, path)
    errs += _choice(spec, "dnsPolicy", DNS_POLICIES, path)
    if spec.get("dnsPolicy") == "None" and not spec.get("dnsConfig"):
        detail = "must provide `dnsConfig` when `dnsPolicy` is None"
        errs.append(field.required(f"{path}.dnsConfig", detail))
    errs += validate_labels(spec.get("nodeSelector") or {}, f"{path}.nodeSelector")
    errs += security_context(spec.get("securityContext") or {}, f"{path}.securityContext", True)
    errs += _names_and_limits(spec, path)
    if spec.get("tolerations"):
        errs += validate_tolerations(spec["tolerations"], f"{path}.tolerations")
    if pod:
        for key in ("containers", "initContainers"):
            errs += _image_whitespace(spec.get(key) or [], f"{path}.{key}")
    return errs


def _init_containers(
    containers: list[Obj], path: str, names: set[str], volumes: set[str]
) -> list[FieldError]:
    """``validateInitContainers``: names unique across both lists; only sidecars
    (restartPolicy Always) may have probes and lifecycle hooks."""
    errs: list[FieldError] = []
    taken = set(names)
    for i, container in enumerate(containers):
        at = f"{path}[{i}]"
        errs += validate_common(container, at, volumes)
        restart = container.get("restartPolicy")
        errs += _choice(container, "restartPolicy", CONTAINER_RESTART, at)
        name = container.get("name", "")
        if name in taken:
            errs.append(field.duplicate(f"{at}.name", name))
        elif name:
            taken.add(name)
        errs += validate_handlers(container, at, init_only=restart != "Always")
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
