"""kube's legacy-token-tracking controller: the ConfigMap that says since when the use of
Secret-based service-account tokens is tracked.

``kube-apiserver-legacy-service-account-token-tracking`` in the system namespace holds
``since``, the UTC date tracking began (a token unused since then is one the legacy token
cleaner may retire).  The server creates it when it is missing (at most once every 30
minutes, kube's rate) and rewrites a ``since`` that is not a date.
"""

from __future__ import annotations

import datetime
from typing import Any

from platform_api import errors
from platform_api.authentication.legacytokens import TRACKING_CONFIGMAP
from platform_api.cel.library.format import is_date
from platform_api.controllers.base import Controller
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.store import Store
from platform_api.storage.interface import Event

CONFIGMAP = TRACKING_CONFIGMAP
SINCE = "since"
CREATE_EVERY = 30 * 60.0  # seconds between creations (kube's rate.Every(30*time.Minute))


class LegacyTokenTracking(Controller):
    name = "legacy_token_tracking_controller"
    queue = "legacy_token_tracking_controller"
    manager = APISERVER

    def __init__(self, configmaps: Store, namespace: str, *args: Any) -> None:
        super().__init__(*args)
        self.configmaps = configmaps
        self.namespace = namespace
        self._created_at: float | None = None

    def watched(self) -> tuple[bytes, ...]:
        return (self.configmaps.key(self.namespace, CONFIGMAP),)

    def resync(self) -> None:
        self.enqueue(CONFIGMAP)

    def observe(self, event: Event) -> None:
        self.enqueue(CONFIGMAP)

    def today(self) -> str:
        now = datetime.datetime.fromtimestamp(self.reactor.seconds(), datetime.UTC)
        return now.strftime("%Y-%m-%d")

    async def sync(self, key: str) -> float | None:
        try:
            found = self.configmaps.get(self.namespace, CONFIGMAP).object
        except errors.StatusError:
            return await self._create()
        since = (found.get("data") or {}).get(SINCE)
        if isinstance(since, str) and is_date(since):
            return None
        today = self.today()

        def dated(obj: dict[str, Any] | None) -> dict[str, Any]:
            assert obj is not None
            obj["data"] = {**(obj.get("data") or {}), SINCE: today}
            return obj

        try:
            await self.configmaps.update(self.namespace, CONFIGMAP, dated)
        except errors.StatusError as e:
            if e.code not in (404, 409):  # deleted or changed meanwhile: its event comes
                raise
        return None

    async def _create(self) -> float | None:
        now = self.reactor.seconds()
        if self._created_at is not None and now - self._created_at < CREATE_EVERY:
            return CREATE_EVERY - (now - self._created_at)  # try again when allowed
        obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": CONFIGMAP, "namespace": self.namespace},
            "data": {SINCE: self.today()},
        }
        self._created_at = now
        try:
            await self.configmaps.create(self.namespace, obj)
        except errors.StatusError as e:
            if e.code != 409:  # another server made it first
                self._created_at = None
                raise
        return None
