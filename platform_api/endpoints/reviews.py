"""Reviews: create-only resources answered from the request, never stored.

SelfSubjectReview returns the caller as the server sees it (after impersonation);
TokenReview runs the server's own bearer-token authenticators on a token.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.authentication.interface import AuthenticationError
from platform_api.authentication.union import with_authenticated_group
from platform_api.codec.goshape import shape
from platform_api.endpoints.body import decode_write
from platform_api.endpoints.scope import Scope

Obj = dict[str, Any]


async def self_subject_review(scope: Scope) -> bytes:
    """A new object, as kube's REST builds it: created now, the caller in its status."""
    _opts, out, obj = await decode_write(scope, "CreateOptions")
    answer: Obj = {
        "kind": obj["kind"],
        "apiVersion": obj["apiVersion"],
        "metadata": {"creationTimestamp": scope.store.now()},
        "status": {"userInfo": scope.ctx.user.to_review()},
    }
    return await scope.respond_object(answer, 201, out)


async def token_review(scope: Scope) -> bytes:
    """The request, with the field manager's entry as on any create, and its status: a
    token no authenticator knows is ``invalid bearer token``, as kube's bearer-token
    authenticator words it."""
    _opts, out, obj = await decode_write(scope, "CreateOptions")
    spec = obj.get("spec") or {}
    token = spec.get("token") or ""
    if not token:
        raise errors.bad_request("token is required for TokenReview in authentication")
    scope.tracker()(None, obj)
    authenticator = scope.handlers.authenticator
    status: Obj = {"user": {}}
    try:
        audiences = tuple(str(a) for a in spec.get("audiences") or ())
        found = await authenticator.authenticate_token(token, audiences) if authenticator else None
    except AuthenticationError as e:
        status["error"] = str(e)
        found = None
    if found is not None:
        user = with_authenticated_group(found.user)
        status = {"authenticated": True, "user": user.to_review()}
        if found.audiences:
            status["audiences"] = list(found.audiences)
    elif authenticator is not None:
        status.setdefault("error", "invalid bearer token")
    answer: Obj = {**obj, "status": status}
    shape(answer)  # the Go struct's field order, as kube writes the answer
    return await scope.respond_object(answer, 201, out)


HANDLERS = {
    ("authentication.platform.io", "selfsubjectreviews"): self_subject_review,
    ("authentication.platform.io", "tokenreviews"): token_review,
}
