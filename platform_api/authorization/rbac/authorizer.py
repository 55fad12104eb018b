"""The RBAC authorizer: allow when a bound role has a matching rule; never deny.

Rules only add rights, so RBAC answers allow or no opinion.  An allow names the
binding that granted it; no opinion carries the resolution errors (a binding whose
role is missing), as kube's reason ``RBAC: ...`` does.
"""

from __future__ import annotations

from platform_api.authorization.interface import Attributes, Decision
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
