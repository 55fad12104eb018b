"""kube's tokens controller (``serviceaccount-token-controller``): Secrets of type
``platform.io/service-account-token`` get their account's token.

A Secret of that type names its account in ``platform.io/service-account.name`` (and, once
filled, its uid in ``platform.io/service-account.uid``).  The controller writes
``data.token`` (a Secret-based token, never expiring), ``data.ca.crt`` (the cluster CA)
and ``data.namespace``, and both annotations.  A Secret whose account does not exist, or
has another uid, is deleted; so are an account's token Secrets when the account goes.  A
deleted token Secret is taken out of its account's ``secrets``.  Under upstream names,
kube's own type and annotations (``kubernetes.io/service-account-token``, as kube's docs
have users write for a long-lived token) are served alike.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.controllers.remote import cached_or_fetched
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event, ListOptions, Preconditions

Obj = dict[str, Any]
TOKEN_TYPE = "platform.io/service-account-token"
NAME = "platform.io/service-account.name"
UID = "platform.io/service-account.uid"
_UPSTREAM = {
    "kubernetes.io/service-account-token": (
        "kubernetes.io/service-account.name",
        "kubernetes.io/service-account.uid",
    )
}


def token_keys(secret: Obj, upstream: bool = False) -> tuple[str, str] | None:
    """The (account name, account uid) annotations of a token Secret, in its type's
    names; None for any other Secret."""
    kind = secret.get("type")
    if kind == TOKEN_TYPE:
        return NAME, UID
    return _UPSTREAM.get(str(kind)) if upstream else None


# (account, secret name) -> the signed token
Sign = Callable[[Obj, str], str]


class TokensController(Controller):
    """Keys: ("secret", namespace, name), ("gone", namespace, secret name, account name)
    and ("account", namespace, name, uid) for an account deleted."""

    name = "serviceaccount-token-controller"

    def __init__(
        self,
        secrets: Store,
        accounts: Store,
        sign: Sign,
        root_ca: bytes | None,
        *args: Any,
        upstream: bool = False,
    ) -> None:
        super().__init__(*args)
        self.secrets, self.accounts = secrets, accounts
        self.sign = sign
        self.root_ca = base64.b64encode(root_ca).decode() if root_ca else ""
        self.upstream = upstream

    def watched(self) -> tuple[bytes, ...]:
        return (self.secrets.prefix, self.accounts.prefix)

    def resync(self) -> None:
        for stored in self.secrets.list("", ListOptions()).items:
            if token_keys(stored.object, self.upstream) is not None:
                meta = stored.object["metadata"]
                self.enqueue(("secret", meta.get("namespace", ""), meta["name"]))

    def observe(self, event: Event) -> None:
        state = event.stored if event.stored is not None else event.prev
        if state is None:
            return
        obj = state.object
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        if event.key.startswith(self.accounts.prefix):
            if event.type == DELETED:
                self.enqueue(("account", namespace, name, meta.get("uid", "")))
        elif (keys := token_keys(obj, self.upstream)) is not None:
            if event.type == DELETED:
                account = (meta.get("annotations") or {}).get(keys[0], "")
                self.enqueue(("gone", namespace, name, account))
            else:
                self.enqueue(("secret", namespace, name))

    async def sync(self, key: tuple[str, ...]) -> float | None:
        if key[0] == "account":
            await self._delete_tokens_of(*key[1:])
        elif key[0] == "gone":
            await self._forget(*key[1:])
        else:
            await self._fill(*key[1:])
        return None

    async def _fill(self, namespace: str, name: str) -> None:
        try:
            secret = self.secrets.get(namespace, name).object
        except errors.StatusError:
            return
        keys = token_keys(secret, self.upstream)
        if keys is None or secret["metadata"].get("deletionTimestamp"):
            return
        name_key, uid_key = keys
        annotations = secret["metadata"].get("annotations") or {}
        account = await self._account(
            namespace, annotations.get(name_key, ""), annotations.get(uid_key, "")
        )
        if account is None:
            await self._delete(namespace, name, secret["metadata"].get("uid", ""))
            return
        if not self._needs(secret):
            return

        def filled(obj: Obj | None) -> Obj:
            assert obj is not None
            data = obj["data"] = obj.get("data") or {}
            if self.root_ca and data.get("ca.crt") != self.root_ca:
                data["ca.crt"] = self.root_ca
            if not data.get("namespace"):
                data["namespace"] = base64.b64encode(namespace.encode()).decode()
            if not data.get("token"):
                token = self.sign(account, name)
                data["token"] = base64.b64encode(token.encode()).decode()
            notes = obj["metadata"]["annotations"] = obj["metadata"].get("annotations") or {}
            notes[name_key] = account["metadata"]["name"]
            notes[uid_key] = account["metadata"].get("uid", "")
            return obj

        try:
            await self.secrets.update(namespace, name, filled)
        except errors.StatusError as e:
            if e.code not in (404, 409):  # gone, or changed: its own event comes next
                raise

    def _needs(self, secret: Obj) -> bool:
        data = secret.get("data") or {}
        needs_ca = bool(self.root_ca) and data.get("ca.crt") != self.root_ca
        return needs_ca or not data.get("namespace") or not data.get("token")

    async def _account(self, namespace: str, name: str, uid: str) -> Obj | None:
        """The Secret's account, None when there is none by that name (and uid); a miss
        in the manager's cache asks the server before the Secret is judged orphaned."""
        account = await cached_or_fetched(self.accounts, namespace, name)
        if account is None or (uid and account["metadata"].get("uid") != uid):
            return None
        return account

    async def _delete(self, namespace: str, name: str, uid: str) -> None:
        try:
            await self.secrets.delete(
                namespace, name, preconditions=Preconditions(uid=uid) if uid else None
            )
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise

    async def _delete_tokens_of(self, namespace: str, name: str, uid: str) -> None:
        for stored in self.secrets.list(namespace, ListOptions()).items:
            secret = stored.object
            notes = secret["metadata"].get("annotations") or {}
            keys = token_keys(secret, self.upstream)
            if keys is None or notes.get(keys[0]) != name:
                continue
            if uid and notes.get(keys[1]) and notes[keys[1]] != uid:
                continue  # another account of the same name's token
            await self._delete(namespace, secret["metadata"]["name"], secret["metadata"]["uid"])

    async def _forget(self, namespace: str, secret_name: str, account_name: str) -> None:
        """A token Secret deleted: its account no longer lists it."""
        account = await self._account(namespace, account_name, "")
        if account is None:
            return
        if not any(r.get("name") == secret_name for r in account.get("secrets") or []):
            return

        def without(obj: Obj | None) -> Obj:
            assert obj is not None
            refs = obj.get("secrets") or []
            obj["secrets"] = [r for r in refs if r.get("name") != secret_name]
            if not obj["secrets"]:
                obj.pop("secrets")
            return obj

        try:
            await self.accounts.update(namespace, account_name, without)
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise
