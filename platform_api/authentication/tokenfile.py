"""Static tokens from ``--token-auth-file``: CSV ``token,user,uid[,"group1,group2"]``."""

from __future__ import annotations

import csv

from platform_api.authentication.interface import AuthResponse
from platform_api.authentication.user import UserInfo


class TokenFileError(ValueError):
    pass


def load_token_file(path: str) -> dict[str, UserInfo]:
    """Parse the file as kube does; a short row is an error, an empty token is skipped."""
    tokens: dict[str, UserInfo] = {}
    with open(path, newline="", encoding="utf-8") as f:
        for record in csv.reader(f):
            if not record:
                continue
            if len(record) < 3:
                raise TokenFileError(
                    f"token file '{path}' must have at least 3 columns (token, user name, "
                    f"user uid), found {len(record)}"
                )
            token, name, uid = record[0], record[1], record[2]
            if not token:
                continue
            groups = tuple(record[3].split(",")) if len(record) >= 4 and record[3] else ()
            tokens[token] = UserInfo(name, uid, groups)
    return tokens


class TokenFileAuthenticator:
    def __init__(self, tokens: dict[str, UserInfo]) -> None:
        self._tokens = tokens

    @classmethod
    def from_file(cls, path: str) -> TokenFileAuthenticator:
        return cls(load_token_file(path))

    async def authenticate_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> AuthResponse | None:
        user = self._tokens.get(token)
        return AuthResponse(user) if user is not None else None
