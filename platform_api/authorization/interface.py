"""The authorizer interface: attributes of a request, and an allow/deny/no-opinion decision."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.authentication.user import UserInfo


class Decision(Enum):
    DENY = 0
    ALLOW = 1
    NO_OPINION = 2


@dataclass(frozen=True)
class Attributes:
    """kube's ``authorizer.Attributes``."""

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    label_selector: str = ""
    field_selector: str = ""

    @classmethod
    def from_request(cls, user: UserInfo, info: RequestInfo) -> Attributes:
        return cls(
            user=user,
            verb=info.verb,
            resource_request=info.is_resource,
            path=info.path,
            namespace=info.namespace,
            api_group=info.api_group,
            api_version=info.api_version,
            resource=info.resource,
            subresource=info.subresource,
            name=info.name,
            label_selector=info.label_selector,
            field_selector=info.field_selector,
        )


class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> Awaitable[tuple[Decision, str]]: ...


async def allows(authorizer: Authorizer, attrs: Attributes) -> bool:
    """Whether ``authorizer`` allows ``attrs``: a deny and no opinion both refuse, as the
    server's own checks (escalation, policy parameters, reviews) treat them."""
    decision, _reason = await authorizer.authorize(attrs)
    return decision is Decision.ALLOW


@dataclass
class RuleSet:
    """What a user may do in a namespace, as SelfSubjectRulesReview reports it.

    Rules are the review's JSON ``ResourceRule``/``NonResourceRule`` objects;
    ``incomplete`` says an authorizer could not enumerate its rules (a webhook).
    """

    resource: list[dict[str, Any]] = field(default_factory=list)
    non_resource: list[dict[str, Any]] = field(default_factory=list)
    incomplete: bool = False
    errors: list[str] = field(default_factory=list)

    def extend(self, other: RuleSet) -> None:
        self.resource += other.resource
        self.non_resource += other.non_resource
        self.incomplete = self.incomplete or other.incomplete
        self.errors += other.errors


def resource_rule(
    verbs: list[str], groups: list[str], resources: list[str], names: list[str]
) -> dict[str, Any]:
    rule: dict[str, Any] = {"verbs": verbs}
    for key, value in (("apiGroups", groups), ("resources", resources), ("resourceNames", names)):
        if value:
            rule[key] = value
    return rule


def non_resource_rule(verbs: list[str], urls: list[str]) -> dict[str, Any]:
    return {"verbs": verbs, "nonResourceURLs": urls} if urls else {"verbs": verbs}


class RuleResolver(Protocol):
    """An authorizer that can list a user's rules (kube's ``authorizer.RuleResolver``)."""

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet: ...
