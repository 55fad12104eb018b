"""Failed authentication in the audit log (kube's WithFailedAuthenticationAudit).

A request refused with 401 never reaches ``Auditor.begin``, which needs the user; this
view on the chain's authenticator records it instead, with the credentials it tried.
"""

from __future__ import annotations

from typing import Any

from twisted.web.server import Request

from platform_api import errors
from platform_api.apiserver import requestinfo
from platform_api.apiserver.audit.hook import Auditor
from platform_api.authentication.union import RequestAuthenticator
from platform_api.authentication.user import UserInfo


class AuditedAuthenticator(RequestAuthenticator):
    """The chain's authenticator; a 401 it raises is also an audit event."""

    def __init__(self, inner: RequestAuthenticator, auditor: Auditor) -> None:  # a view: no super
        self._inner = inner
        self._auditor = auditor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def authenticate(self, request: Request, path: str) -> UserInfo:
        try:
            return await self._inner.authenticate(request, path)
        except errors.StatusError as e:
            if e.code == 401:
                info = requestinfo.parse(request.method, path, request.args)
                self._auditor.failed_authentication(request, info, attempted(request))
            raise


def attempted(request: Request) -> str:
    """kube's getAuthMethods: the credentials the request carried."""
    methods = []
    auth = (request.getHeader(b"authorization") or b"").decode("latin-1").strip()
    scheme = auth.split(" ")[0].lower() if " " in auth else ""
    if scheme == "basic":
        methods.append("basic")
    if scheme == "bearer":
        methods.append("bearer")
    if (request.args or {}).get(b"access_token", [b""])[0].strip():
        methods.append("access_token")
    transport: Any = getattr(request.channel, "transport", None)
    certificate = getattr(transport, "getPeerCertificate", None)
    if certificate is not None and certificate() is not None:
        methods.append("x509")
    if methods:
        return "Authentication failed, attempted: " + ", ".join(methods)
    return "Authentication failed, no credentials provided"
