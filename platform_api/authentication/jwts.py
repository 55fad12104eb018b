"""What JWT-based authenticators share before verifying anything."""

from __future__ import annotations

from typing import Any

import jwt


def issuer_of(token: str) -> tuple[str, dict[str, Any]] | None:
    """The unverified issuer and header of a JWT, or None when it is not one.

    Each JWT method looks at the issuer first, so a token meant for another method is
    left to it rather than failing here.
    """
    try:
        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    issuer = claims.get("iss") if isinstance(claims, dict) else None
    return (issuer, header) if isinstance(issuer, str) else None
