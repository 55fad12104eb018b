"""Ingresses (networking/v1), validated as kube's ValidateIngressSpec words it: hosts,
paths by path type, backends, TLS hosts and the class name; and IngressClasses, as
ValidateIngressClass does: the controller that implements the class (a domain-prefixed
path, for good) and the reference to its parameters."""

from __future__ import annotations

import ipaddress
import re

from platform_api.registry.defaults import defaults
from platform_api.registry.gateddrops import RELAXED_SERVICE_NAMES
from platform_api.registry.lbstatus import validate_ingress_status
from platform_api.registry.servicespec import port_name_errors, port_number_errors
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import (
    domain_prefixed_path,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    regex_error,
)
from platform_api.validation.objectmeta import (
    validate_core_meta_update,
)

GROUP = "networking.platform.io"
PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
MAX_CONTROLLER = 250
SCOPES = ["Cluster", "Namespace"]
_BAD_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_BAD_SUFFIXES = ("/..", "/.")
_WILDCARD_FMT = r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_WILDCARD = re.compile(f"^{_WILDCARD_FMT}\\Z")
_WILDCARD_ERROR = regex_error(
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
    "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
    "alphanumeric character",
    _WILDCARD_FMT,
    "*.example.com",
)


def validate_ingress_spec(
    spec: Obj, relaxed: bool = True, secret_names: bool = True
) -> list[FieldError]:
    """``relaxed``: backends' Service names are DNS-1123 labels (kube's
    allowRelaxedServiceNameValidation), else DNS-1035 ones; ``secret_names``: TLS
    secret names are checked (kube's allowInvalidSecretName lets an update keep one)."""
    rules: list[Obj] = spec.get("rules") or []
    backend = spec.get("defaultBackend")
    errs: list[FieldError] = []
    if not rules and backend is None:
        detail = "either `defaultBackend` or `rules` must be specified"
        errs.append(field.invalid("spec", None, detail))
    if backend is not None:
        errs += _backend(backend, "spec.defaultBackend", relaxed)
    for i, rule in enumerate(rules):
        errs += _rule(rule, f"spec.rules[{i}]", relaxed)
    for i, tls in enumerate(spec.get("tls") or []):
        for j, host in enumerate(tls.get("hosts") or []):
            errs += [
                field.invalid(f"spec.tls[{i}].hosts[{j}]", host, m) for m in _host_errors(host)
            ]
        secret = tls.get("secretName") or ""
        if secret_names:
            errs += [
                field.invalid(f"spec.tls[{i}].secretName", secret, m)
                for m in _secret_name_errors(secret)
            ]
    name = spec.get("ingressClassName")
    if name is not None:
        errs += [
            field.invalid("spec.ingressClassName", name, m) for m in is_dns1123_subdomain(name)
        ]
    return errs


def _secret_name_errors(name: str) -> list[str]:
    return is_dns1123_subdomain(name) if name else []


def _invalid_secret_names(spec: Obj) -> bool:
    """kube's allowInvalidSecretName: a stored Ingress that names an invalid TLS secret
    may keep it through updates."""
    return any(_secret_name_errors(t.get("secretName") or "") for t in spec.get("tls") or [])


def _host_errors(host: str) -> list[str]:
    if "*" in host:
        return [] if _WILDCARD.match(host) else [_WILDCARD_ERROR]
    return is_dns1123_subdomain(host)


def _rule(rule: Obj, at: str, relaxed: bool) -> list[FieldError]:
    host = rule.get("host") or ""
    errs: list[FieldError] = []
    if host:
        try:
            ipaddress.ip_address(host)
            errs.append(field.invalid(f"{at}.host", host, "must be a DNS name, not an IP address"))
        except ValueError:
            pass
        errs += [field.invalid(f"{at}.host", host, m) for m in _host_errors(host)]
    http = rule.get("http")
    if http is not None:
        paths: list[Obj] = http.get("paths") or []
        if not paths:
            errs.append(field.required(f"{at}.http.paths"))
        for i, path in enumerate(paths):
            errs += _path(path, f"{at}.http.paths[{i}]", relaxed)
    return errs


def _path(path: Obj, at: str, relaxed: bool) -> list[FieldError]:
    kind, value = path.get("pathType"), path.get("path") or ""
    if kind is None:
        return [field.required(f"{at}.pathType", "pathType must be specified")]
    errs: list[FieldError] = []
    if kind in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(field.invalid(f"{at}.path", value, "must be an absolute path"))
        for bad in _BAD_SEQUENCES if value else ():
            if bad in value:
                errs.append(field.invalid(f"{at}.path", value, f"must not contain '{bad}'"))
        for bad in _BAD_SUFFIXES if value else ():
            if value.endswith(bad):
                errs.append(field.invalid(f"{at}.path", value, f"cannot end with '{bad}'"))
    elif kind == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(field.invalid(f"{at}.path", value, "must be an absolute path"))
    else:
        errs.append(field.not_supported(f"{at}.pathType", kind, PATH_TYPES))
    return errs + _backend(path.get("backend") or {}, f"{at}.backend", relaxed)


def _backend(backend: Obj, at: str, relaxed: bool) -> list[FieldError]:
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [field.invalid(at, "", "cannot set both resource and service backends")]
    if resource is not None:
        return []
    if service is None:
        return [field.invalid(at, "", "resource or service backend is required")]
    name = service.get("name") or ""
    names = is_dns1123_label if relaxed else is_dns1035_label
    errs = field.checked(f"{at}.service.name", name, names)
    port = service.get("port") or {}
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        errs.append(field.invalid(at, "", "cannot set both port name & port number"))
    elif port_name:
        errs += [
            field.invalid(f"{at}.service.port.name", port_name, m)
            for m in port_name_errors(port_name)
        ]
    elif number:
        errs += [
            field.invalid(f"{at}.service.port.number", number, m)
            for m in port_number_errors(number)
        ]
    else:
        errs.append(field.required(at, "port name or number is required"))
    return errs


def _backend_names(spec: Obj) -> list[str]:
    backends = [spec.get("defaultBackend") or {}]
    for rule in spec.get("rules") or []:
        backends += [p.get("backend") or {} for p in (rule.get("http") or {}).get("paths") or []]
    return [(b.get("service") or {}).get("name") or "" for b in backends]


@register(GROUP, "Ingress")
class IngressStrategy(GenericStrategy):
    update_meta_checks = "UC"
    tracks_generation = True

    def _relaxed(self, old: Obj | None) -> bool:
        """kube's allowRelaxedServiceNameValidation: the gate, or an Ingress updated
        that already names a Service only the relaxed rule takes."""
        if self.gates(RELAXED_SERVICE_NAMES):
            return True
        names = _backend_names((old or {}).get("spec") or {})
        return any(is_dns1035_label(n) and not is_dns1123_label(n) for n in names if n)

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        return super().validate(obj) + validate_ingress_spec(spec, self._relaxed(None))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        spec = new.get("spec") or {}
        errs = super().validate_update(new, old)
        check_secrets = not _invalid_secret_names(old.get("spec") or {})
        return errs + validate_ingress_spec(spec, self._relaxed(old), check_secrets)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        return errs + validate_ingress_status(new.get("status") or {}, old.get("status") or {})


@defaults(GROUP, "IngressClass")
def default_ingress_class(ingress_class: Obj) -> None:
    """SetDefaults_IngressClass: parameters without a scope are cluster-scoped."""
    parameters = (ingress_class.get("spec") or {}).get("parameters")
    if isinstance(parameters, dict) and parameters.get("scope") is None:
        parameters["scope"] = "Cluster"


def validate_ingress_class_spec(spec: Obj) -> list[FieldError]:
    controller = spec.get("controller") or ""
    errs: list[FieldError] = []
    if len(controller.encode()) > MAX_CONTROLLER:
        errs.append(field.too_long("spec.controller", MAX_CONTROLLER))
    errs += domain_prefixed_path(controller, "spec.controller")
    parameters = spec.get("parameters")
    if parameters is not None:
        errs += _parameters(parameters, "spec.parameters")
    return errs


def _parameters(parameters: Obj, at: str) -> list[FieldError]:
    """kube's validateIngressClassParametersReference: a group, kind and name that could
    be looked up, in the namespace the scope calls for."""
    errs: list[FieldError] = []
    group = parameters.get("apiGroup")
    if group is not None:
        errs += [field.invalid(f"{at}.apiGroup", group, m) for m in is_dns1123_subdomain(group)]
    for key in ("kind", "name"):
        errs += field.checked(f"{at}.{key}", parameters.get(key) or "", is_path_segment_name)
    scope, namespace = parameters.get("scope"), parameters.get("namespace")
    if scope is None:
        return [*errs, field.required(f"{at}.scope")]
    if scope not in SCOPES:
        errs.append(field.not_supported(f"{at}.scope", scope, SCOPES))
    elif scope == "Namespace" and namespace is None:
        detail = "`parameters.scope` is set to 'Namespace'"
        errs.append(field.required(f"{at}.namespace", detail))
    elif scope == "Namespace":
        errs += [
            field.invalid(f"{at}.namespace", namespace, m) for m in is_dns1123_label(str(namespace))
        ]
    elif namespace is not None:
        errs.append(field.forbidden(f"{at}.namespace", "`parameters.scope` is set to 'Cluster'"))
    return errs


@register(GROUP, "IngressClass")
class IngressClassStrategy(GenericStrategy):
    """kube's IngressClass strategy: generation counts spec changes; the controller
    never changes."""

    tracks_generation = True

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_ingress_class_spec(obj.get("spec") or {})

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old)
        controller = (new.get("spec") or {}).get("controller") or ""
        if controller != ((old.get("spec") or {}).get("controller") or ""):
            errs.append(field.invalid("spec.controller", controller, "field is immutable"))
        return errs + validate_ingress_class_spec(new.get("spec") or {})
