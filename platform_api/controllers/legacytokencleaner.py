"""kube's ``legacy-serviceaccount-token-cleaner-controller``: auto-generated Secret-based
tokens unused for a year are first marked invalid, then deleted a year later.

Once a day it considers each ``platform.io/service-account-token`` Secret that its account
lists in ``secrets`` (auto-generated, in kube's words), that is older than the clean-up
period (``--legacy-service-account-token-clean-up-period``, 365 days), was not used within
it (``platform.io/legacy-token-last-used``) and that no pod in its namespace names.  Such a
Secret is labelled ``platform.io/legacy-token-invalid-since`` with today's date (its token
stops authenticating); one invalid for longer than the period is deleted.  Nothing happens
before the period has passed since tracking began (the tracking ConfigMap's ``since``).
"""

from __future__ import annotations

import datetime
from typing import Any

from platform_api import errors
from platform_api.authentication.legacytokens import TRACKING_CONFIGMAP, tracking_labels
from platform_api.authorization.nodegraph import pod_secrets
from platform_api.cel.library.format import is_date
from platform_api.controllers.base import Controller
from platform_api.controllers.legacytokenoptions import DAY
from platform_api.controllers.serviceaccounttokens import token_keys
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions, Preconditions
from platform_api.timestamps import parse_timestamp

Obj = dict[str, Any]
SYNC_INTERVAL = DAY


def _date(when: float) -> str:
    return datetime.datetime.fromtimestamp(when, datetime.UTC).strftime("%Y-%m-%d")


class LegacyTokenCleaner(Controller):
    name = "legacy-serviceaccount-token-cleaner-controller"

    def __init__(
        self,
        secrets: Store,
        accounts: Store,
        pods: Store,
        configmaps: Store,
        system_namespace: str,
        period: float,
        *args: Any,
        upstream: bool = False,
    ) -> None:
        super().__init__(*args)
        self.secrets, self.accounts, self.pods = secrets, accounts, pods
        self.configmaps, self.system_namespace = configmaps, system_namespace
        self.period = period
        self.upstream = upstream

    def watched(self) -> tuple[bytes, ...]:
        return ()  # kube's cleaner lists from its informers once a day

    def resync(self) -> None:
        self.enqueue("every-day")

    async def sync(self, key: str) -> float | None:
        now = self.reactor.seconds()
        since = self._tracked_since()
        if since is not None and now >= since + self.period:
            await self._clean(now)
        return SYNC_INTERVAL

    def _tracked_since(self) -> float | None:
        """The day after tracking began (a token could have been used the first day)."""
        try:
            tracking = self.configmaps.get(self.system_namespace, TRACKING_CONFIGMAP).object
        except errors.StatusError:
            return None
        since = (tracking.get("data") or {}).get("since")
        if not isinstance(since, str) or not is_date(since):
            return None
        start = datetime.datetime.fromisoformat(since).replace(tzinfo=datetime.UTC)
        return start.timestamp() + DAY

    async def _clean(self, now: float) -> None:
        created_before = now - self.period
        used_before = _date(now - self.period)
        mounted: dict[str, set[str]] = {}
        for stored in self.secrets.list("", ListOptions()).items:
            secret = stored.object
            meta = secret["metadata"]
            if token_keys(secret, self.upstream) is None or meta.get("deletionTimestamp"):
                continue
            if (parse_timestamp(meta.get("creationTimestamp")) or now) >= created_before:
                continue
            used_label, invalid_label = tracking_labels(secret)
            last_used = (meta.get("labels") or {}).get(used_label)
            if last_used is not None and (not is_date(last_used) or last_used >= used_before):
                continue
            if not self._listed(secret) or self._mounted(secret, mounted):
                continue
            invalid_since = (meta.get("labels") or {}).get(invalid_label, "")
            if not is_date(invalid_since):
                await self._mark_invalid(meta, _date(now))
            elif invalid_since < used_before:
                await self._delete(meta)

    def _listed(self, secret: Obj) -> bool:
        """Whether the Secret's account (same uid, if named) lists it: auto-generated."""
        notes = secret["metadata"].get("annotations") or {}
        name_key, uid_key = token_keys(secret, self.upstream) or ("", "")
        try:
            account = self.accounts.get(secret["metadata"]["namespace"], notes.get(name_key, ""))
        except errors.StatusError:
            return False
        uid = notes.get(uid_key)
        if uid and account.object["metadata"].get("uid") != uid:
            return False
        refs = account.object.get("secrets") or []
        return any(r.get("name") == secret["metadata"]["name"] for r in refs)

    def _mounted(self, secret: Obj, mounted: dict[str, set[str]]) -> bool:
        namespace = secret["metadata"]["namespace"]
        if namespace not in mounted:
            pods = self.pods.list(namespace, ListOptions()).items
            mounted[namespace] = set().union(
                *(pod_secrets(p.object.get("spec") or {}) for p in pods)
            )
        return secret["metadata"]["name"] in mounted[namespace]

    async def _mark_invalid(self, meta: Obj, today: str) -> None:
        uid = meta.get("uid", "")

        def marked(obj: Obj | None) -> Obj:
            assert obj is not None
            if obj["metadata"].get("uid") != uid:
                raise errors.conflict("secrets", "", meta["name"], "the Secret was replaced")
            obj["metadata"]["labels"] = {
                **(obj["metadata"].get("labels") or {}),
                tracking_labels(obj)[1]: today,
            }
            return obj

        try:
            await self.secrets.update(meta["namespace"], meta["name"], marked)
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise

    async def _delete(self, meta: Obj) -> None:
        try:
            await self.secrets.delete(
                meta["namespace"],
                meta["name"],
                preconditions=Preconditions(resource_version=meta.get("resourceVersion")),
            )
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise
