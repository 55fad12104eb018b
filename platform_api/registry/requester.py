"""Who sent the request being served, for the few strategies that record it.

kube's strategies read the user from the request context (a CertificateSigningRequest's
``spec.username`` is the creator's); here the dispatcher sets it once per request, and
each request runs in its own copy of the context, so concurrent requests never see
each other's user.
"""

from __future__ import annotations

from contextvars import ContextVar

from platform_api.authentication.user import UserInfo

REQUESTER: ContextVar[UserInfo | None] = ContextVar("requester", default=None)
# The request's verb (kube's: update, patch...), for the checks that authorize with it.
VERB: ContextVar[str] = ContextVar("verb", default="")


def current() -> UserInfo | None:
    """The user of the request being served; None outside one (controllers, tests)."""
    return REQUESTER.get()
