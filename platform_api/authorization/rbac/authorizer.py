"""The RBAC authorizer: allow when a bound role has a matching rule; never deny.

Rules only add rights, so RBAC answers allow or no opinion.  An allow names the
binding that granted it; no opinion carries the resolution errors (a binding whose
role is missing), as kube's reason ``RBAC: ...`` does.
"""

from __future__ import annotations

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import (
    Attributes,
    Decision,
    RuleSet,
    non_resource_rule,
    resource_rule,
)
from platform_api.authorization.rbac import rules
from platform_api.authorization.rbac.index import RuleIndex


class RBACAuthorizer:
    def __init__(self, index: RuleIndex) -> None:
        self.index = index

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        return self.decide(attrs)

    def decide(self, attrs: Attributes) -> tuple[Decision, str]:
        """Synchronous: every answer comes from the in-memory index."""
        resolved = self.index.rules_for(attrs.user, attrs.namespace)
        for rule, source in resolved.rules:
            if rules.allows(attrs, rule):
                return Decision.ALLOW, f"RBAC: allowed by {source}"
        if not resolved.errors:
            return Decision.NO_OPINION, ""
        if len(resolved.errors) == 1:
            return Decision.NO_OPINION, f"RBAC: {resolved.errors[0]}"
        return Decision.NO_OPINION, f"RBAC: [{', '.join(resolved.errors)}]"

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        resolved = self.index.rules_for(user, namespace)
        out = RuleSet()
        for rule, _source in resolved.rules:
            verbs = list(rule.get("verbs") or [])
            if rule.get("resources"):
                out.resource.append(
                    resource_rule(
                        verbs,
                        list(rule.get("apiGroups") or []),
                        list(rule["resources"]),
                        list(rule.get("resourceNames") or []),
                    )
                )
            if rule.get("nonResourceURLs"):
                out.non_resource.append(non_resource_rule(verbs, list(rule["nonResourceURLs"])))
        if resolved.errors:
            errs = resolved.errors
            out.errors.append(errs[0] if len(errs) == 1 else f"[{', '.join(errs)}]")
        return out
