"""Who sent the request being served, for the few strategies that record it, and the
warnings a strategy's preparation sends its client.

kube's strategies read the user from the request context (a CertificateSigningRequest's
``spec.username`` is the creator's) and add warnings to it (a pod's AppArmor annotations,
as they are copied into fields); here the dispatcher sets both once per request, and
each request runs in its own copy of the context, so concurrent requests never see
each other's.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

from platform_api.authentication.user import UserInfo

REQUESTER: ContextVar[UserInfo | None] = ContextVar("requester", default=None)
# The request's verb (kube's: update, patch...), for the checks that authorize with it.
VERB: ContextVar[str] = ContextVar("verb", default="")
WARN: ContextVar[Callable[[str], None] | None] = ContextVar("warn", default=None)


def current() -> UserInfo | None:
    """The user of the request being served; None outside one (controllers, tests)."""
    return REQUESTER.get()


def warn(text: str) -> None:
    """kube's ``warning.AddWarning``: to the client of the request being served, before
    the kind's own warnings (none outside a request)."""
    add = WARN.get()
    if add is not None:
        add(text)
