"""The server as a client of itself, as kube's loopback client: in-process controllers
whose writes must pass through the whole request chain go over HTTPS to the server's own
port.

A Deployment's pods are made by a controller, but to a user they are pods like any other:
their service account is defaulted, LimitRanges and quotas apply, Pod Security judges them
and mutating and validating webhooks see them.  Only the chain does that, so these
controllers write through it, with kube-controller-manager's name as field manager.

The credential is a random bearer token, valid for this server's life and authenticating
as ``system:apiserver`` in ``system:masters`` (kube's loopback identity); workers share
the supervisor's (handed over in their environment, which each clears at once), since a
loopback connection may reach any of them.  The client trusts
exactly the serving certificate, so the token goes to no one else.  The stores the
controllers write through are in loopbackstore.py (the supervisor needs only the token).
"""

from __future__ import annotations

import os
import secrets
import uuid

from platform_api.authentication.tokenfile import TokenFileAuthenticator
from platform_api.authentication.user import UserInfo
from platform_api.client.kubeconfig import Connection

TOKEN_ENV = "PLATFORM_APISERVER_LOOPBACK_TOKEN"
USER = "system:apiserver"
MASTERS = "system:masters"
# kube infers the field manager from the User-Agent; pods a ReplicaSet made are managed
# by "kube-controller-manager" there.
USER_AGENT = "kube-controller-manager/v1.36.2 (linux/amd64) platform-apiserver/loopback"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def loopback_token() -> str:
    """The supervisor's token when this is one of its workers, taken out of the
    environment (no process this one starts inherits a system:masters credential);
    else a new one."""
    return os.environ.pop(TOKEN_ENV, "") or new_token()


def authenticator(token: str) -> TokenFileAuthenticator:
    return TokenFileAuthenticator({token: UserInfo(USER, str(uuid.uuid4()), (MASTERS,))})


def connection(server_url: str, cert_file: str, token: str) -> Connection:
    with open(cert_file, "rb") as f:
        leaf = f.read()
    return Connection(server_url, token=token, pinned_pem=leaf, headers={"User-Agent": USER_AGENT})
