"""Which FlowSchema a request falls under (kube's rule.go).

Schemas are tried by ``matchingPrecedence`` then name; the first whose rules match
wins.  A rule matches when one of its subjects names the user and, for a resource
request, one of its resource rules (verb, group, resource[/subresource], namespace or
cluster scope) or, for any other path, one of its non-resource rules (verb, URL or
``/prefix/*``) matches.  A schema whose priority level does not exist is dangling and
skipped.  Results are cached per request shape until the configuration changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform_api.apiserver.flowcontrol.queueset import flow_hash
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.authentication.user import UserInfo

Obj = dict[str, Any]
_SA_PREFIX = "system:serviceaccount:"
_CACHE_MAX = 8192


@dataclass(frozen=True)
class Schema:
    name: str
    uid: str
    precedence: int
    level: str
    distinguisher: str  # "ByUser", "ByNamespace" or ""
    rules: tuple[Obj, ...]

    @classmethod
    def from_object(cls, obj: Obj) -> Schema:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        return cls(
            name=meta.get("name", ""),
            uid=meta.get("uid", ""),
            precedence=int(spec.get("matchingPrecedence") or 1000),
            level=(spec.get("priorityLevelConfiguration") or {}).get("name", ""),
            distinguisher=(spec.get("distinguisherMethod") or {}).get("type", ""),
            rules=tuple(spec.get("rules") or ()),
        )


def _has(values: Any, value: str, every: str = "*") -> bool:
    values = values or ()
    return every in values or value in values


def subject_matches(subject: Obj, user: UserInfo) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        name = (subject.get("user") or {}).get("name", "")
        return name in ("*", user.name)
    if kind == "Group":
        name = (subject.get("group") or {}).get("name", "")
        return name == "*" or name in user.groups
    if kind == "ServiceAccount":
        sa = subject.get("serviceAccount") or {}
        if not user.name.startswith(_SA_PREFIX):
            return False
        namespace, _, name = user.name[len(_SA_PREFIX) :].partition(":")
        return sa.get("namespace") == namespace and sa.get("name") in ("*", name)
    return False


def _resource_rule_matches(rule: Obj, info: RequestInfo) -> bool:
    if not _has(rule.get("verbs"), info.verb) or not _has(rule.get("apiGroups"), info.api_group):
        return False
    resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
    if not _has(rule.get("resources"), resource):
        return False
    if not info.namespace:
        return bool(rule.get("clusterScope"))
    return _has(rule.get("namespaces"), info.namespace)


def _url_matches(patterns: Any, path: str) -> bool:
    for pattern in patterns or ():
        if pattern in ("*", path):
            return True
        if pattern.endswith("/*") and (path == pattern[:-2] or path.startswith(pattern[:-1])):
            return True
    return False


def _non_resource_rule_matches(rule: Obj, info: RequestInfo) -> bool:
    return _has(rule.get("verbs"), info.verb) and _url_matches(
        rule.get("nonResourceURLs"), info.path
    )


def schema_matches(schema: Schema, info: RequestInfo, user: UserInfo) -> bool:
    for rule in schema.rules:
        if not any(subject_matches(s, user) for s in rule.get("subjects") or ()):
            continue
        if info.is_resource:
            if any(_resource_rule_matches(r, info) for r in rule.get("resourceRules") or ()):
                return True
        elif any(_non_resource_rule_matches(r, info) for r in rule.get("nonResourceRules") or ()):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Match:
    """A request shape's classification; ``flow`` picks its queues (shuffle sharding)."""

    schema: Schema
    flow: int
    labels: tuple[str, str]  # (flow_schema, priority_level) metric label values
    uid: bytes  # the schema's UID for the response header


class Classifier:
    """The schemas in matching order, and the classifications made so far."""

    def __init__(self, schemas: list[Schema], levels: set[str]) -> None:
        live = [s for s in schemas if s.level in levels]
        self.schemas = sorted(live, key=lambda s: (s.precedence, s.name))
        self._cache: dict[tuple[Any, ...], Match | None] = {}

    def classify(self, info: RequestInfo, user: UserInfo) -> Match | None:
        """The matching schema and the request's flow (None: no schema matches)."""
        key = (
            user.name,
            user.groups,
            info.verb,
            info.is_resource,
            info.api_group,
            info.resource,
            info.subresource,
            info.namespace,
            "" if info.is_resource else info.path,
        )
        try:
            return self._cache[key]
        except KeyError:
            pass
        schema = next((s for s in self.schemas if schema_matches(s, info, user)), None)
        match = None
        if schema is not None:
            distinguisher = ""
            if schema.distinguisher == "ByUser":
                distinguisher = user.name
            elif schema.distinguisher == "ByNamespace":
                distinguisher = info.namespace
            flow = flow_hash(schema.name, distinguisher)
            match = Match(schema, flow, (schema.name, schema.level), schema.uid.encode())
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = match
        return match
