"""kube's bootstrap-signer-controller and token-cleaner-controller (both off by default).

The signer keeps ``cluster-info`` in ``platform-public`` signed: one detached JWS
``jws-kubeconfig-<token-id>`` over its ``kubeconfig`` per valid bootstrap token allowed to
sign, so that a joining client holding a token can trust the kubeconfig it fetched
anonymously.  The cleaner deletes bootstrap token Secrets once their ``expiration`` passed.
Both read the Secrets in ``platform-system`` of type ``bootstrap.platform.io/token``; under
``--serve-upstream-groups`` also kube's (authentication/bootstrap.py's TokenPlaces), and
the signer signs ``cluster-info`` in ``kube-public`` too, where ``kubeadm join`` reads it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from typing import Any

from platform_api import errors
from platform_api.authentication.bootstrap import TokenPlaces
from platform_api.authentication.bootstrap import _data as secret_data
from platform_api.controllers.timed import TimedController
from platform_api.registry.store import Store
from platform_api.scheme import namespaces
from platform_api.storage.interface import DELETED, Event, ListOptions, Preconditions
from platform_api.timestamps import parse_timestamp

Obj = dict[str, Any]
CLUSTER_INFO = "cluster-info"
KUBECONFIG_KEY = "kubeconfig"
SIGNATURE_PREFIX = "jws-kubeconfig-"
SECRET_NAME = re.compile(r"^bootstrap-token-([a-z0-9]{6})\Z")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def detached_signature(content: str, token_id: str, token_secret: str) -> str:
    """go-jose's compact HS256 JWS of ``content`` (key: the token secret, ``kid``: the id)
    with the payload cut out: ``header..signature``, exactly as kube computes it."""
    header = _b64url(json.dumps({"alg": "HS256", "kid": token_id}, separators=(",", ":")).encode())
    signing_input = f"{header}.{_b64url(content.encode())}".encode()
    mac = hmac.new(token_secret.encode(), signing_input, hashlib.sha256).digest()
    return f"{header}..{_b64url(mac)}"


def time_left(secret: Obj, now: float) -> tuple[float, bool]:
    """(seconds until ``expiration``, expired?); no expiration never expires and an
    unreadable one counts as expired, as kube's ``GetExpiration``."""
    text = secret_data(secret, "expiration")
    if not text:
        return 0.0, False
    when = parse_timestamp(text)
    if when is None:  # unreadable, or no offset (RFC 3339 requires one)
        return 0.0, True
    left = when - now
    return (left, False) if left > 0 else (0.0, True)


def signing_token(secret: Obj, now: float) -> tuple[str, str] | None:
    """(id, secret) of a token Secret that may sign cluster-info now, else None."""
    match = SECRET_NAME.match(secret.get("metadata", {}).get("name", ""))
    token_id = secret_data(secret, "token-id")
    if match is None or not token_id or token_id != match.group(1):
        return None
    token_secret = secret_data(secret, "token-secret")
    if not token_secret or time_left(secret, now)[1]:
        return None
    if secret_data(secret, "usage-bootstrap-signing") != "true":
        return None
    return token_id, token_secret


def _event_object(event: Event) -> Obj:
    stored = event.stored if event.stored is not None else event.prev
    return stored.object if stored is not None else {}


class BootstrapSigner(TimedController):
    """Keys are the public namespaces' cluster-info ConfigMaps; each is re-signed on any
    token or ConfigMap change and when the next signing token expires."""

    name = "bootstrap-signer-controller"

    def __init__(self, configmaps: Store, secrets: Store, *args: Any, upstream: bool = False):
        super().__init__(*args)
        self.configmaps = configmaps
        self.secrets = secrets
        self.places = TokenPlaces.of(upstream)
        self.keys = [(ns, CLUSTER_INFO) for ns in namespaces.names(namespaces.PUBLIC, upstream)]

    def resync(self) -> None:
        for key in self.keys:
            self.enqueue(key)

    def watched(self) -> tuple[bytes, ...]:
        return (self.configmaps.prefix, self.secrets.prefix)

    def observe(self, event: Event) -> None:
        for key in self.keys:
            if event.key == self.configmaps.key(*key) and event.type != DELETED:
                self.enqueue(key)
        if _token_event(event, self.secrets, self.places):
            self.resync()

    def tokens(self) -> dict[str, str]:
        """token id -> token secret of every token that may sign now (first one wins)."""
        now = self.now()
        found: dict[str, str] = {}
        for secret in _token_secrets(self.secrets, self.places):
            token = signing_token(secret, now)
            if token is not None and token[0] not in found:
                found[token[0]] = token[1]
                left, _ = time_left(secret, now)
                if left > 0:
                    for key in self.keys:
                        self.enqueue_after(key, left)
        return found

    def signed(self, data: dict[str, str], tokens: dict[str, str]) -> dict[str, str]:
        """``data`` with exactly one current signature per token."""
        out = {k: v for k, v in data.items() if not k.startswith(SIGNATURE_PREFIX)}
        for token_id, token_secret in tokens.items():
            out[SIGNATURE_PREFIX + token_id] = detached_signature(
                data[KUBECONFIG_KEY], token_id, token_secret
            )
        return out

    async def sync(self, key: tuple[str, str]) -> float | None:
        try:
            current = self.configmaps.get(*key).object
        except errors.StatusError:
            return None  # not there (yet): its creation queues us again
        data = current.get("data") or {}
        if KUBECONFIG_KEY not in data:
            return None
        tokens = self.tokens()
        if self.signed(data, tokens) == data:
            return None

        def resign(obj: Obj | None) -> Obj:
            assert obj is not None  # no create on update for ConfigMaps
            fresh = obj.get("data") or {}
            if KUBECONFIG_KEY in fresh:
                obj["data"] = self.signed(fresh, tokens)
            return obj

        try:
            await self.configmaps.update(*key, resign)
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise
        return None


class TokenCleaner(TimedController):
    """Keys are (namespace, name) of token Secrets; each is looked at when it changes and
    again when its expiration comes."""

    name = "token-cleaner-controller"

    def __init__(self, secrets: Store, *args: Any, upstream: bool = False) -> None:
        super().__init__(*args)
        self.secrets = secrets
        self.places = TokenPlaces.of(upstream)

    def resync(self) -> None:
        for secret in _token_secrets(self.secrets, self.places):
            self.enqueue(_key(secret))

    def watched(self) -> tuple[bytes, ...]:
        return (self.secrets.prefix,)

    def observe(self, event: Event) -> None:
        if event.type != DELETED and _token_event(event, self.secrets, self.places):
            self.enqueue(_key(_event_object(event)))

    async def sync(self, key: tuple[str, str]) -> float | None:
        namespace, name = key
        try:
            secret = self.secrets.get(namespace, name).object
        except errors.StatusError:
            return None
        if not self.places.holds(secret):
            return None
        left, expired = time_left(secret, self.now())
        if not expired:
            if left > 0:
                self.enqueue_after(key, left)
            return None
        uid = secret["metadata"].get("uid")
        try:
            await self.secrets.delete(
                namespace, name, preconditions=Preconditions(uid=uid) if uid else None
            )
        except errors.StatusError as e:
            if e.code not in (404, 409):  # gone already, or replaced by a new Secret
                raise
        return None


def _token_secrets(secrets: Store, places: TokenPlaces) -> list[Obj]:
    out = []
    for namespace in places.namespaces:
        out += [s.object for s in secrets.list(namespace, ListOptions()).items]
    return [s for s in out if places.holds(s)]


def _token_event(event: Event, secrets: Store, places: TokenPlaces) -> bool:
    in_place = any(event.key.startswith(secrets.list_prefix(ns)) for ns in places.namespaces)
    return in_place and places.holds(_event_object(event))


def _key(secret: Obj) -> tuple[str, str]:
    return secret["metadata"].get("namespace", ""), secret["metadata"]["name"]
