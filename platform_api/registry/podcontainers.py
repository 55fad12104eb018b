"""One container of a pod, as kube's validateContainerCommon and its probe rules check it,
in kube's order: name, image, termination message policy, ports, env, envFrom, volume
mounts, pull policy, resources, security context; then lifecycle and probes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from platform_api.registry.podmounts import validate_mounts
from platform_api.registry.podprojections import object_field_selector, resource_field_selector
from platform_api.registry.podresources import container_resources
from platform_api.registry.podsecurity import container_security_context
from platform_api.registry.servicespec import port_name_errors, port_number_errors
from platform_api.validation import field
from platform_api.validation.field import FieldError, nonnegative
from platform_api.validation.names import (
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
)

Obj = dict[str, Any]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]  # kube lists them in this order
MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
SCHEMES = ["HTTP", "HTTPS"]
RELAXED_ENV_NAME = (
    "a valid environment variable name must consist only of printable ASCII characters "
    "other than '='"
)
# The pod fields an env var may read (kube's set, sorted).
ENV_FIELDS = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
]
INIT_ONLY_ALWAYS = "may not be set for init containers without restartPolicy=Always"
RESIZE_RESOURCES = ["cpu", "memory"]
RESIZE_POLICIES = ["NotRequired", "RestartContainer"]


@dataclass(frozen=True)
class PodFacts:
    """What a container's checks need to know of its pod: its valid volumes by name,
    whether it shares the host's user namespace (``hostUsers`` not false), its restart
    policy, the names of its resource claims, its termination grace period."""

    volumes: Mapping[str, Obj]
    host_users: bool = True
    restart_policy: str = "Always"
    claims: frozenset[str] = frozenset()
    grace_period: int | None = None  # terminationGracePeriodSeconds: bounds a sleep hook


def validate_common(container: Obj, at: str, pod: PodFacts) -> list[FieldError]:
    """``validateContainerCommon``."""
    errs: list[FieldError] = []
    errs += field.checked(f"{at}.name", container.get("name", ""), is_dns1123_label)
    if not container.get("image"):
        errs.append(field.required(f"{at}.image"))
    policy = container.get("terminationMessagePolicy")
    if policy is not None and policy not in MESSAGE_POLICIES:
        errs.append(field.not_supported(f"{at}.terminationMessagePolicy", policy, MESSAGE_POLICIES))
    errs += _ports(container.get("ports") or [], f"{at}.ports")
    errs += _env(container.get("env") or [], f"{at}.env")
    errs += _env_from(container.get("envFrom") or [], f"{at}.envFrom")
    errs += validate_mounts(container, at, pod.volumes)
    pull = container.get("imagePullPolicy")
    if pull is not None and pull not in PULL_POLICIES:
        errs.append(field.not_supported(f"{at}.imagePullPolicy", pull, PULL_POLICIES))
    errs += container_resources(container.get("resources") or {}, f"{at}.resources", pod.claims)
    errs += _resize_policy(container.get("resizePolicy") or [], f"{at}.resizePolicy", pod)
    context = container.get("securityContext") or {}
    return errs + container_security_context(context, f"{at}.securityContext", pod.host_users)


def _resize_policy(policies: list[Obj], at: str, pod: PodFacts) -> list[FieldError]:
    """``validateResizePolicy``: cpu and memory once each, a known policy, and none
    that restarts a container of a pod that never restarts."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, given in enumerate(policies):
        policy = given if isinstance(given, dict) else {}
        name, restart = policy.get("resourceName", ""), policy.get("restartPolicy", "")
        if name in seen:
            errs.append(field.duplicate(f"{at}[{i}]", name))
        seen.add(name)
        for value, supported in ((name, RESIZE_RESOURCES), (restart, RESIZE_POLICIES)):
            if not value:
                errs.append(field.required(at))
            elif value not in supported:
                errs.append(field.not_supported(at, value, supported))
        if pod.restart_policy == "Never" and restart != "NotRequired":
            why = "must be 'NotRequired' when pod `restartPolicy` is 'Never'"
            errs.append(field.invalid(at, restart, why))
    return errs


def validate_handlers(
    container: Obj, at: str, init_only: bool, grace_period: int | None = None
) -> list[FieldError]:
    """Lifecycle hooks and probes: ``init_only`` for an init container that is not a
    sidecar (restartPolicy Always), which may have none; a sleep hook must end within
    the pod's ``grace_period``."""
    keys = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")
    if init_only:
        return [field.forbidden(f"{at}.{k}", INIT_ONLY_ALWAYS) for k in keys if container.get(k)]
    errs: list[FieldError] = []
    for hook in ("postStart", "preStop"):
        handler = (container.get("lifecycle") or {}).get(hook)
        if handler is not None:
            errs += _handler(handler, f"{at}.lifecycle.{hook}", lifecycle=True, grace=grace_period)
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(key)
        if probe is not None:
            errs += _probe(probe, f"{at}.{key}", key)
    return errs


def _ports(ports: list[Obj], at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        where = f"{at}[{i}]"
        name = port.get("name", "")
        if name:
            problems = port_name_errors(name)
            errs += [field.invalid(f"{where}.name", name, m) for m in problems]
            if not problems and name in names:
                errs.append(field.duplicate(f"{where}.name", name))
            names.add(name)
        number = port.get("containerPort") or 0
        errs += field.checked(f"{where}.containerPort", number, port_number_errors)
        host = port.get("hostPort") or 0
        errs += (
            [field.invalid(f"{where}.hostPort", host, m) for m in port_number_errors(host)]
            if host
            else []
        )
        protocol = port.get("protocol", "")
        if not protocol:
            errs.append(field.required(f"{where}.protocol"))
        elif protocol not in PROTOCOLS:
            errs.append(field.not_supported(f"{where}.protocol", protocol, PROTOCOLS))
    return errs


def env_name_errors(name: str) -> list[str]:
    """``IsRelaxedEnvVarName`` (kube's rule since 1.34)."""
    if any(ord(c) < 32 or ord(c) > 126 or c == "=" for c in name):
        return [RELAXED_ENV_NAME]
    return []


def _env(variables: list[Obj], at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, var in enumerate(variables):
        where = f"{at}[{i}]"
        name = var.get("name", "")
        if not name:
            errs.append(field.required(f"{where}.name"))
        errs += [field.invalid(f"{where}.name", name, m) for m in env_name_errors(name)]
        source = var.get("valueFrom")
        if source is not None:
            errs += _value_from(source, bool(var.get("value")), f"{where}.valueFrom")
    return errs


def _value_from(source: Obj, has_value: bool, at: str) -> list[FieldError]:
    """``validateEnvVarValueFrom``: one source, checked, and no ``value`` beside it."""
    errs: list[FieldError] = []
    checks = (
        ("fieldRef", _field_ref),
        ("resourceFieldRef", _resource_field_ref),
        ("configMapKeyRef", _key_ref),
        ("secretKeyRef", _key_ref),
        ("fileKeyRef", None),
    )
    count = 0
    for key, check in checks:
        if source.get(key) is not None:
            count += 1
            errs += check(source[key], f"{at}.{key}") if check else []
    if count == 0:
        detail = "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, "
        errs.append(field.invalid(at, "", detail + "`secretKeyRef` or `fileKeyRef`"))
    elif has_value:
        errs.append(field.invalid(at, "", "may not be specified when `value` is not empty"))
    elif count > 1:
        errs.append(field.invalid(at, "", "may not have more than one field specified at a time"))
    return errs


def _field_ref(ref: Obj, at: str) -> list[FieldError]:
    """``validateObjectFieldSelector`` with the paths an env var may read."""
    return object_field_selector(ref, at, ENV_FIELDS)


def _resource_field_ref(ref: Obj, at: str) -> list[FieldError]:
    return resource_field_selector(ref, at, volume=False)


def _key_ref(ref: Obj, at: str) -> list[FieldError]:
    name, key = ref.get("name", ""), ref.get("key", "")
    errs = [field.invalid(f"{at}.name", name, m) for m in is_dns1123_subdomain(name)]
    if not key:
        return [*errs, field.required(f"{at}.key")]
    return errs + [field.invalid(f"{at}.key", key, m) for m in is_config_map_key(key)]


def _env_from(sources: list[Obj], at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, source in enumerate(sources):
        where = f"{at}[{i}]"
        prefix = source.get("prefix", "")
        errs += [field.invalid(f"{where}.prefix", prefix, m) for m in env_name_errors(prefix)]
        count = 0
        for key in ("configMapRef", "secretRef"):
            ref = source.get(key)
            if ref is not None:
                count += 1
                name = ref.get("name", "")
                errs += field.checked(f"{where}.{key}.name", name, is_dns1123_subdomain)
        if count == 0:
            errs.append(field.invalid(at, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            errs.append(field.forbidden(at, "may not have more than one field specified at a time"))
    return errs


def _handler(
    handler: Obj, at: str, lifecycle: bool = False, grace: int | None = None
) -> list[FieldError]:
    """``validateHandler``: exactly one action, checked."""
    kinds = ("exec", "httpGet", "tcpSocket", "grpc") + (("sleep",) if lifecycle else ())
    errs: list[FieldError] = []
    chosen = 0
    for kind in kinds:
        action = handler.get(kind)
        if action is None:
            continue
        if chosen:
            errs.append(field.forbidden(f"{at}.{kind}", "may not specify more than 1 handler type"))
            continue
        chosen += 1
        if kind == "sleep":
            errs += _sleep(action, f"{at}.sleep", grace)
        else:
            errs += _ACTIONS[kind](action, f"{at}.{kind}")
    if not chosen:
        errs.append(field.required(at, "must specify a handler type"))
    return errs


def _exec(action: Obj, at: str) -> list[FieldError]:
    return [] if action.get("command") else [field.required(f"{at}.command")]


def _http_get(action: Obj, at: str) -> list[FieldError]:
    errs = [] if action.get("path") else [field.required(f"{at}.path")]
    errs += _port_or_name(action.get("port"), f"{at}.port")
    scheme = action.get("scheme", "")
    if scheme not in SCHEMES:
        errs.append(field.not_supported(f"{at}.scheme", scheme, SCHEMES))
    return errs


def _tcp_socket(action: Obj, at: str) -> list[FieldError]:
    return _port_or_name(action.get("port"), f"{at}.port")


def _grpc(action: Obj, at: str) -> list[FieldError]:
    port = action.get("port") or 0
    return [field.invalid(f"{at}.port", port, m) for m in port_number_errors(port)]


def _sleep(action: Obj, at: str, grace: int | None) -> list[FieldError]:
    """``validateSleepAction`` (zero allowed, AllowPodLifecycleSleepActionZeroValue GA):
    within the grace period, unchecked where the pod has none to measure against."""
    seconds = action.get("seconds") or 0
    if grace is None or 0 <= seconds <= grace:
        return []
    why = f"must be non-negative and less than terminationGracePeriodSeconds ({grace})"
    return [field.invalid(at, seconds, why)]


_ACTIONS = {
    "exec": _exec,
    "httpGet": _http_get,
    "tcpSocket": _tcp_socket,
    "grpc": _grpc,
}


def _port_or_name(port: Any, at: str) -> list[FieldError]:
    """``ValidatePortNumOrName``."""
    if isinstance(port, str):
        return [field.invalid(at, port, m) for m in port_name_errors(port)]
    number = port or 0
    return [field.invalid(at, number, m) for m in port_number_errors(number)]


def _probe(probe: Obj, at: str, kind: str) -> list[FieldError]:
    errs = _handler(probe, at)
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        errs += nonnegative(f"{at}.{key}", probe.get(key))
    grace = probe.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace <= 0:
        errs.append(
            field.invalid(f"{at}.terminationGracePeriodSeconds", grace, "must be greater than 0")
        )
    if kind == "readinessProbe" and grace is not None:
        detail = "must not be set for readinessProbes"
        errs.append(field.invalid(f"{at}.terminationGracePeriodSeconds", grace, detail))
    success = probe.get("successThreshold")
    if kind != "readinessProbe" and isinstance(success, int) and success != 1:
        errs.append(field.invalid(f"{at}.successThreshold", success, "must be 1"))
    return errs
