"""Authenticating proxies: the user comes from request headers the proxy sets.

The headers are trusted only on a connection whose client certificate the
request-header CA signed (and, with ``--requestheader-allowed-names``, whose CN is
listed); anyone else's headers are ignored, and the certificate is then left to the
client-certificate authenticator.  The headers are removed once read, so nothing
downstream mistakes them for the caller's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from cryptography.x509.oid import NameOID
from twisted.web.server import Request

from platform_api.authentication.interface import AuthenticationError, AuthResponse
from platform_api.authentication.user import UserInfo
from platform_api.authentication.x509 import (
    CertificateVerifier,
    peer_chain,
    per_connection,
    tls_transport,
)

_CACHE_ATTR = "_platform_requestheader_result"


class RequestHeaderAuthenticator:
    def __init__(
        self,
        verifier: CertificateVerifier,
        allowed_names: Sequence[str] = (),
        username_headers: Sequence[str] = (),
        uid_headers: Sequence[str] = (),
        group_headers: Sequence[str] = (),
        extra_prefixes: Sequence[str] = (),
    ) -> None:
        self._verifier = verifier
        self.allowed_names = tuple(allowed_names)
        self.username_headers = tuple(username_headers)
        self.uid_headers = tuple(uid_headers)
        self.group_headers = tuple(group_headers)
        self.extra_prefixes = tuple(p.lower() for p in extra_prefixes)

    async def authenticate(self, request: Request) -> AuthResponse | None:
        transport = tls_transport(request)
        if transport is None:
            return None
        verdict = per_connection(transport, _CACHE_ATTR, self._verify)
        if verdict == "none":
            return None
        if verdict != "ok":
            raise AuthenticationError(verdict)
        return self._from_headers(request)

    def _verify(self, transport: Any) -> str:
        """'ok', 'none' (no certificate), or why the proxy is not trusted."""
        chain = peer_chain(transport)
        if not chain:
            return "none"
        try:
            self._verifier.verify(chain)
        except AuthenticationError as e:
            return str(e)
        names = chain[0].subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        common_name = str(names[0].value) if names else ""
        if self.allowed_names and common_name not in self.allowed_names:
            return f"x509: subject with cn={common_name} is not in the allowed list"
        return "ok"

    def _from_headers(self, request: Request) -> AuthResponse | None:
        headers = request.requestHeaders
        name = _first(headers, self.username_headers)
        if not name:
            return None
        uid = _first(headers, self.uid_headers)
        groups = [
            value
            for header in self.group_headers
            for value in headers.getRawHeaders(header, [])
            if value
        ]
        extra: dict[str, list[str]] = {}
        for raw_name, values in list(headers.getAllRawHeaders()):
            header = raw_name.decode("latin-1").lower()
            for prefix in self.extra_prefixes:
                if header.startswith(prefix):
                    key = unquote(header[len(prefix) :])
                    extra.setdefault(key, []).extend(v.decode("utf-8", "replace") for v in values)
        self._clear(headers)
        user = UserInfo(
            name, uid, tuple(groups), {key: tuple(values) for key, values in extra.items()}
        )
        return AuthResponse(user)

    def _clear(self, headers: Any) -> None:
        for header in (*self.username_headers, *self.uid_headers, *self.group_headers):
            headers.removeHeader(header)
        for raw_name, _ in list(headers.getAllRawHeaders()):
            if raw_name.decode("latin-1").lower().startswith(self.extra_prefixes or ("\0",)):
                headers.removeHeader(raw_name)


def _first(headers: Any, names: Sequence[str]) -> str:
    for header in names:
        value = headers.getRawHeaders(header, [""])[0]
        if value:
            return str(value)
    return ""
