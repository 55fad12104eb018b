"""Webhook authorization: a remote service answers SubjectAccessReviews.

The service is named by a kubeconfig-format file; allowed answers are cached for
``--authorization-webhook-cache-authorized-ttl`` (5m), the others for
``--authorization-webhook-cache-unauthorized-ttl`` (30s).  A service that fails or
does not answer has no opinion (the failure is the reason), so other authorizers
still decide; calls never block other requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson

from platform_api.authorization.interface import Attributes, Decision
from platform_api.client.kubeconfig import Connection, post_review

GROUP = "authorization.platform.io"
TIMEOUT = 30.0


def review_of(attrs: Attributes, version: str) -> dict[str, Any]:
    """The SubjectAccessReview kube sends for a request's attributes."""
    spec: dict[str, Any] = {}
    if attrs.resource_request:
        resource = {
            "namespace": attrs.namespace,
            "verb": attrs.verb,
            "group": attrs.api_group,
            "version": attrs.api_version,
            "resource": attrs.resource,
            "subresource": attrs.subresource,
            "name": attrs.name,
        }
        spec["resourceAttributes"] = {k: v for k, v in resource.items() if v}
    else:
        spec["nonResourceAttributes"] = {"path": attrs.path, "verb": attrs.verb}
    user = attrs.user
    spec["user"] = user.name
    if user.groups:
        spec["group" if version == "v1beta1" else "groups"] = list(user.groups)
    if user.uid:
        spec["uid"] = user.uid
    if user.extra:
        spec["extra"] = {k: list(v) for k, v in user.extra.items()}
    return {"apiVersion": f"{GROUP}/{version}", "kind": "SubjectAccessReview", "spec": spec}


class WebhookAuthorizer:
    def __init__(
        self,
        connection: Connection,
        reactor: Any,
        version: str = "v1beta1",
        authorized_ttl: float = 300.0,
        unauthorized_ttl: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        client: Any = None,
    ) -> None:
        self.connection = connection
        self.client = client or connection.client(reactor)
        self.version = version
        self.ttls = (authorized_ttl, unauthorized_ttl)
        self.clock = clock
        self._cache: dict[bytes, tuple[float, Decision, str]] = {}

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        review = review_of(attrs, self.version)
        key = orjson.dumps(review["spec"], option=orjson.OPT_SORT_KEYS)
        cached = self._cache.get(key)
        if cached is not None and cached[0] > self.clock():
            return cached[1], cached[2]
        try:
            decision, reason = await self._ask(review)
        except Exception as e:  # the service's failure is no opinion, and not cached
            return Decision.NO_OPINION, f"webhook authorizer failed: {e}"
        ttl = self.ttls[0] if decision is Decision.ALLOW else self.ttls[1]
        if len(self._cache) > 10000:
            self._cache.clear()
        self._cache[key] = (self.clock() + ttl, decision, reason)
        return decision, reason

    async def _ask(self, review: dict[str, Any]) -> tuple[Decision, str]:
        status = await post_review(self.client, self.connection, review, TIMEOUT)
        reason = str(status.get("reason") or status.get("evaluationError") or "")
        if status.get("allowed"):
            return Decision.ALLOW, reason
        if status.get("denied"):
            return Decision.DENY, reason
        return Decision.NO_OPINION, reason
