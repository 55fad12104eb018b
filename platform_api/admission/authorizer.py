"""The server's authorizer behind CEL's authz library in admission expressions."""

from __future__ import annotations

from collections.abc import Callable

from platform_api.admission.matching import Authorize
from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Authorizer, Decision
from platform_api.cel.library.authz import CheckAttributes

_DECISIONS = {Decision.ALLOW: "allow", Decision.DENY: "deny", Decision.NO_OPINION: "no-opinion"}


def authorize_with(authorizer: Callable[[], Authorizer | None]) -> Authorize:
    """Checks answered by ``authorizer()`` (looked up per call: it is built after
    admission)."""

    async def authorize(check: CheckAttributes) -> tuple[str, str]:
        chosen = authorizer()
        if chosen is None:
            return "no-opinion", ""
        decision, reason = await chosen.authorize(_attributes(check))
        return _DECISIONS[decision], reason

    return authorize


def _attributes(check: CheckAttributes) -> Attributes:
    user = check.user
    return Attributes(
        user=UserInfo(
            str(user.get("username", "")),
            str(user.get("uid", "")),
            tuple(user.get("groups") or ()),
            {k: tuple(v) for k, v in (user.get("extra") or {}).items()},
        ),
        verb=check.verb,
        resource_request=check.resource_request,
        path=check.path,
        namespace=check.namespace,
        api_group=check.api_group,
        api_version=check.api_version,
        resource=check.resource,
        subresource=check.subresource,
        name=check.name,
        label_selector=check.label_selector,
        field_selector=check.field_selector,
    )
