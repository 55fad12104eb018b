"""ABAC: ``--authorization-policy-file``, one JSON policy per line, kube's rules.

A policy allows a request when its subject matches (``user``/``group``, ``*`` for
any), the request is read-only or the policy is not ``readonly``, and either its
``namespace``/``resource``/``apiGroup`` match a resource request or its
``nonResourcePath`` (exact, ``*``, or a ``prefix*``) matches a non-resource one.
Nothing matching is no opinion.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import (
    Attributes,
    Decision,
    RuleSet,
    non_resource_rule,
    resource_rule,
)

API_VERSION = "abac.authorization.platform.io/v1beta1"
_READ_ONLY = ("get", "list", "watch")


class PolicyError(ValueError):
    pass


@dataclass(frozen=True)
class Policy:
    user: str = ""
    group: str = ""
    readonly: bool = False
    namespace: str = ""
    resource: str = ""
    api_group: str = ""
    non_resource_path: str = ""

    def subject_matches(self, attrs: Attributes) -> bool:
        matched = False
        if self.user:
            if self.user not in ("*", attrs.user.name):
                return False
            matched = True
        if self.group:
            if self.group != "*" and self.group not in attrs.user.groups:
                return False
            matched = True
        return matched

    def target_matches(self, attrs: Attributes) -> bool:
        if attrs.resource_request:
            return (
                self.namespace in ("*", attrs.namespace)
                and self.resource in ("*", attrs.resource)
                and self.api_group in ("*", attrs.api_group)
            )
        path = self.non_resource_path
        return path in ("*", attrs.path) or (
            path.endswith("*") and attrs.path.startswith(path.rstrip("*"))
        )

    def allows(self, attrs: Attributes) -> bool:
        writable = attrs.verb in _READ_ONLY or not self.readonly
        return self.subject_matches(attrs) and writable and self.target_matches(attrs)


def _policy(raw: Any, line: int) -> Policy:
    if not isinstance(raw, dict):
        raise PolicyError(f"line {line}: a policy is a JSON object")
    if "apiVersion" in raw or "kind" in raw:
        if raw.get("apiVersion") != API_VERSION or raw.get("kind") != "Policy":
            raise PolicyError(
                f"line {line}: expected apiVersion {API_VERSION} and kind Policy, got "
                f"{raw.get('apiVersion')!r} {raw.get('kind')!r}"
            )
        spec = raw.get("spec") or {}
    else:  # the unversioned (v0) format: the fields at the top level
        spec = raw
    return Policy(
        user=str(spec.get("user") or ""),
        group=str(spec.get("group") or ""),
        readonly=bool(spec.get("readonly")),
        namespace=str(spec.get("namespace") or ""),
        resource=str(spec.get("resource") or ""),
        api_group=str(spec.get("apiGroup") or ""),
        non_resource_path=str(spec.get("nonResourcePath") or ""),
    )


def load_policies(path: str) -> list[Policy]:
    policies = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                raw = json.loads(text)
            except ValueError as e:
                raise PolicyError(f"line {number}: {e}") from None
            policies.append(_policy(raw, number))
    return policies


class ABACAuthorizer:
    def __init__(self, policies: list[Policy]) -> None:
        self.policies = policies

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        if any(p.allows(attrs) for p in self.policies):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, "No policy matched."

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """kube's ``PolicyList.RulesFor``: each matching policy as one rule."""
        out = RuleSet()
        probe = Attributes(user=user, verb="", resource_request=True)
        for p in self.policies:
            if not p.subject_matches(probe) or p.namespace not in ("*", namespace):
                continue
            verbs = ["get", "list", "watch"] if p.readonly else ["*"]
            if p.resource:
                out.resource.append(resource_rule(verbs, [p.api_group], [p.resource], []))
            if p.non_resource_path:
                out.non_resource.append(non_resource_rule(verbs, [p.non_resource_path]))
        return out
