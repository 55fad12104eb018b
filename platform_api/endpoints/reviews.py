"""Reviews: create-only resources answered from the request, never stored.

SelfSubjectReview returns the caller as the server sees it (after impersonation);
TokenReview runs the server's own bearer-token authenticators on a token.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.authentication.interface import AuthenticationError
from platform_api.authentication.union import with_authenticated_group
from platform_api.endpoints.body import decode_write
from platform_api.endpoints.scope import Scope

Obj = dict[str, Any]


def _answer(obj: Obj, status: Obj) -> Obj:
    meta = dict(obj.get("metadata") or {})
    meta.setdefault("creationTimestamp", None)
    out: Obj = {"kind": obj["kind"], "apiVersion": obj["apiVersion"], "metadata": meta}
    if "spec" in obj:
        out["spec"] = obj["spec"]
    out["status"] = status
    return out


async def self_subject_review(scope: Scope) -> bytes:
    _opts, out, obj = decode_write(scope, "CreateOptions")
    status = {"userInfo": scope.ctx.user.to_review()}
    return scope.respond_object(_answer(obj, status), 201, out)


async def token_review(scope: Scope) -> bytes:
    _opts, out, obj = decode_write(scope, "CreateOptions")
    spec = obj.get("spec") or {}
    token = spec.get("token") or ""
    if not token:
        raise errors.bad_request("token is required for TokenReview in authentication")
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
    return scope.respond_object(_answer(obj, status), 201, out)


HANDLERS = {
    ("authentication.platform.io", "selfsubjectreviews"): self_subject_review,
    ("authentication.platform.io", "tokenreviews"): token_review,
}
