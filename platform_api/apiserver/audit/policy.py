"""The audit Policy file and kube's rule evaluation (first matching rule wins).

Semantics of k8s.io/apiserver/pkg/audit/policy: a rule matches when every selector it
names matches; resource rules never match non-resource requests and the reverse; no
matching rule means level None.  Policy-wide ``omitStages`` are added to every rule's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import yaml

from platform_api.authentication.user import UserInfo
from platform_api.scheme.types import rebrand_group
from platform_api.validation import field as fielderr
from platform_api.validation.names import is_dns1123_subdomain

log = logging.getLogger(__name__)

NONE, METADATA, REQUEST, REQUEST_RESPONSE = "None", "Metadata", "Request", "RequestResponse"
LEVELS = (NONE, METADATA, REQUEST, REQUEST_RESPONSE)
STAGES = ("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")
API_VERSIONS = ("audit.platform.io/v1", "audit.k8s.io/v1")
_RULE_KEYS = {
    "level", "users", "userGroups", "verbs", "resources", "namespaces",
    "nonResourceURLs", "omitStages", "omitManagedFields",
}  # fmt: skip


class PolicyError(ValueError):
    """The file cannot be used; the text is kube's (the server prints it and exits)."""


@dataclass(frozen=True)
class RequestAuditConfig:
    """What the policy decided for one request."""

    level: str = NONE
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False


@dataclass
class GroupResources:
    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()

    def matches(self, group: str, resource: str, sub: str, name: str) -> bool:
        # A kube policy names kube's groups: rbac.authorization.k8s.io is the branded
        # group the request was served by (under --serve-upstream-groups, the one it
        # named); a group no branded one stands for (an aggregated metrics.k8s.io)
        # matches as it is.
        if self.group not in (group, "*") and rebrand_group(self.group) != group:
            return False
        if not self.resources:
            return True
        if self.resource_names and name not in self.resource_names:
            return False
        combined = f"{resource}/{sub}" if sub else resource
        for res in self.resources:
            if res in (combined, "*"):
                return True
            if sub and res.startswith("*/") and res[2:] == sub:
                return True
            if res.endswith("/*") and res[:-2] == resource:
                return True
        return False


@dataclass
class Rule:
    level: str
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool | None = None

    def matches(self, attrs: Attributes) -> bool:
        user = attrs.user  # None: authentication failed
        if self.users and (user is None or user.name not in self.users):
            return False
        if self.user_groups and (user is None or not set(user.groups) & set(self.user_groups)):
            return False
        if self.verbs and attrs.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return attrs.is_resource and self._matches_resource(attrs)
        if self.non_resource_urls:
            return not attrs.is_resource and any(
                _path_matches(attrs.path, spec) for spec in self.non_resource_urls
            )
        return True

    def _matches_resource(self, a: Attributes) -> bool:
        if self.namespaces and a.namespace not in self.namespaces:
            return False  # cluster-scoped requests have namespace ""
        if not self.resources:
            return True
        return any(
            gr.matches(a.api_group, a.resource, a.subresource, a.name) for gr in self.resources
        )


@dataclass
class Attributes:
    """The request as the policy sees it (kube's authorizer.Attributes subset)."""

    user: UserInfo | None
    verb: str
    path: str = ""
    is_resource: bool = False
    api_group: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


def _path_matches(path: str, spec: str) -> bool:
    if spec in ("*", path):
        return True
    return spec.endswith("*") and path.startswith(spec.rstrip("*"))


@dataclass
class Policy:
    rules: list[Rule] = field(default_factory=list)
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False

    def evaluate(self, attrs: Attributes) -> RequestAuditConfig:
        for rule in self.rules:
            if rule.matches(attrs):
                omit = (
                    self.omit_managed_fields
                    if rule.omit_managed_fields is None
                    else rule.omit_managed_fields
                )
                return RequestAuditConfig(rule.level, rule.omit_stages, omit)
        return RequestAuditConfig(NONE, self.omit_stages, self.omit_managed_fields)


def load_file(path: str) -> Policy:
    """Read and validate ``--audit-policy-file``; errors carry kube's start-up text."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        reason = (e.strerror or str(e)).lower()
        raise PolicyError(
            f"loading audit policy file: failed to read file path {fielderr.go_quote(path)}: "
            f"open {path}: {reason}"
        ) from None
    try:
        return load_bytes(data)
    except PolicyError as e:
        raise PolicyError(f"loading audit policy file: {e}: from file {path}") from None


def load_bytes(data: bytes) -> Policy:
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as e:
        raise PolicyError(f"failed decoding: {e}") from None
    if not isinstance(doc, dict):
        raise PolicyError("failed decoding: Object 'Kind' is missing in policy document")
    api_version, kind = str(doc.get("apiVersion") or ""), str(doc.get("kind") or "")
    if not kind:
        raise PolicyError(f"failed decoding: Object 'Kind' is missing in '{data.decode()}'")
    if api_version not in API_VERSIONS or kind != "Policy":
        group, _, version = api_version.rpartition("/")
        raise PolicyError(f"unknown group version field {group}/{version}, Kind={kind} in policy")
    unknown = set(doc) - {"apiVersion", "kind", "metadata", "rules", "omitStages",
                          "omitManagedFields"}  # fmt: skip
    for rule in doc.get("rules") or []:
        unknown |= set(rule) - _RULE_KEYS if isinstance(rule, dict) else set()
    if unknown:
        log.warning("Audit policy contains unknown fields %s: decoded leniently", sorted(unknown))
    errors: list[fielderr.FieldError] = []
    policy = Policy(
        omit_stages=_stages(doc.get("omitStages"), "omitStages", errors),
        omit_managed_fields=bool(doc.get("omitManagedFields", False)),
    )
    for i, raw in enumerate(doc.get("rules") or []):
        policy.rules.append(_rule(raw or {}, f"rules[{i}]", errors, policy.omit_stages))
    if errors:
        raise PolicyError(fielderr.aggregate(errors))
    if not policy.rules:
        raise PolicyError("loaded illegal policy with 0 rules")
    return policy


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value or ())


def _stages(value: Any, path: str, errors: list[fielderr.FieldError]) -> frozenset[str]:
    stages = _strings(value)
    for i, stage in enumerate(stages):
        if stage not in STAGES:
            detail = "allowed stages are " + ",".join(STAGES)
            errors.append(fielderr.invalid(f"{path}[{i}]", stage, detail))
    return frozenset(stages)


def _rule(
    raw: dict[str, Any], path: str, errors: list[fielderr.FieldError], inherited: frozenset[str]
) -> Rule:
    level = str(raw.get("level") or "")
    if not level:
        errors.append(fielderr.required(f"{path}.level"))
    elif level not in LEVELS:
        errors.append(fielderr.not_supported(f"{path}.level", level, list(LEVELS)))
    urls = _strings(raw.get("nonResourceURLs"))
    for i, url in enumerate(urls):
        if url == "*":
            continue
        where = f"{path}.nonResourceURLs[{i}]"
        if not url.startswith("/"):
            detail = "non-resource URL rules must begin with a '/' character"
            errors.append(fielderr.invalid(where, url, detail))
        if url and "*" in url[:-1]:
            detail = "non-resource URL wildcards '*' must be the final character of the rule"
            errors.append(fielderr.invalid(where, url, detail))
    resources = tuple(_group_resources(gr or {}, path, errors) for gr in raw.get("resources") or [])
    namespaces = _strings(raw.get("namespaces"))
    omit = _stages(raw.get("omitStages"), f"{path}.omitStages", errors)
    if urls and (resources or namespaces):
        detail = "rules cannot apply to both regular resources and non-resource URLs"
        errors.append(fielderr.invalid(f"{path}.nonResourceURLs", list(urls), detail))
    managed = raw.get("omitManagedFields")
    return Rule(
        level=level,
        users=_strings(raw.get("users")),
        user_groups=_strings(raw.get("userGroups")),
        verbs=_strings(raw.get("verbs")),
        resources=resources,
        namespaces=namespaces,
        non_resource_urls=urls,
        omit_stages=omit | inherited,
        omit_managed_fields=None if managed is None else bool(managed),
    )


def _group_resources(
    raw: dict[str, Any], path: str, errors: list[fielderr.FieldError]
) -> GroupResources:
    gr = GroupResources(
        str(raw.get("group") or ""),
        _strings(raw.get("resources")),
        _strings(raw.get("resourceNames")),
    )
    if gr.group not in ("", "*"):
        msgs = is_dns1123_subdomain(gr.group)
        if msgs:
            errors.append(fielderr.invalid(f"{path}.resources.group", gr.group, ",".join(msgs)))
    if gr.resource_names and not gr.resources:
        detail = "using resourceNames requires at least one resource"
        errors.append(
            fielderr.invalid(f"{path}.resources.resourceNames", list(gr.resource_names), detail)
        )
    return gr
