"""The authorizer chain: ``system:masters`` first, then the configured modes in order."""

from __future__ import annotations

from collections.abc import Sequence

from platform_api import errors
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.authorization.interface import (
    Attributes,
    Authorizer,
    Decision,
    RuleSet,
    non_resource_rule,
    resource_rule,
)


class PrivilegedGroups:
    """Members of these groups are allowed everything, before any other authorizer."""

    def __init__(self, groups: Sequence[str] = (MASTERS,)) -> None:
        self.groups = frozenset(groups)

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        if self.groups.intersection(attrs.user.groups):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""


class AlwaysAllow:
    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        return Decision.ALLOW, ""

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        return RuleSet([resource_rule(["*"], ["*"], ["*"], [])], [non_resource_rule(["*"], ["*"])])


class AlwaysDeny:
    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        return Decision.NO_OPINION, "Everything is forbidden."

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        return RuleSet()


class AuthorizerUnion:
    """The first allow or deny decides; when all have no opinion the request is denied."""

    def __init__(self, authorizers: Sequence[Authorizer]) -> None:
        self.authorizers = list(authorizers)

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        reasons = []
        for authorizer in self.authorizers:
            decision, reason = await authorizer.authorize(attrs)
            if decision is not Decision.NO_OPINION:
                return decision, reason
            if reason:
                reasons.append(reason)
        return Decision.NO_OPINION, "\n".join(reasons)

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """Every rule resolver's rules; authorizers that cannot list rules are skipped."""
        out = RuleSet()
        for authorizer in self.authorizers:
            resolve = getattr(authorizer, "rules_for", None)
            if resolve is not None:
                out.extend(resolve(user, namespace))
        return out


def forbidden_message(attrs: Attributes) -> str:
    user = attrs.user.name
    if not attrs.resource_request:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return (
        f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group '
        f'"{attrs.api_group}" {where}'
    )


def forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
    message = forbidden_message(attrs)
    if reason:
        message = f"{message}: {reason}"
    if not attrs.resource_request:
        return errors.forbidden("", "", "", message)
    return errors.forbidden(attrs.resource, attrs.api_group, attrs.name, message)
