"""Webhook authorization: a remote service answers SubjectAccessReviews.

The service is named by a kubeconfig-format file; allowed answers are cached for
``authorizedTTL`` (5m), the others for ``unauthorizedTTL`` (30s).  Match conditions
(CEL over the v1 review spec) decide whether the service is asked at all.  A call that
fails, takes longer than ``timeout`` or is answered with something that is not a
SubjectAccessReview follows the failure policy: ``NoOpinion`` (the flag mode's
behaviour, so other authorizers still decide) or ``Deny``; failures are never cached
and the failure is the reason.  Calls never block other requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from twisted.internet import defer

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision, RuleSet
from platform_api.cel import CELError, Program
from platform_api.client.kubeconfig import Connection

GROUP = "authorization.platform.io"
TIMEOUT = 30.0
KIND = "SubjectAccessReview"
# kube caches no answer for requests whose attributes are this long or longer.
MAX_CACHED_ATTRIBUTES = 10000


class WebhookError(Exception):
    """The call failed or the answer is not usable; the failure policy decides."""


def review_of(attrs: Attributes, version: str, group: str = GROUP) -> dict[str, Any]:
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
    return {"apiVersion": f"{group}/{version}", "kind": KIND, "spec": spec}


def _cacheable(attrs: Attributes) -> bool:
    parts = (attrs.namespace, attrs.verb, attrs.api_group, attrs.api_version, attrs.resource)
    size = sum(map(len, parts)) + len(attrs.subresource) + len(attrs.name) + len(attrs.path)
    return size < MAX_CACHED_ATTRIBUTES


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
        *,
        name: str = "default",
        timeout: float = TIMEOUT,
        failure_policy: str = "NoOpinion",
        match_conditions: Sequence[Program] = (),
        review_group: str = GROUP,
    ) -> None:
        self.connection = connection
        self.review_group = review_group  # authorization.k8s.io under upstream names
        self.reactor = reactor
        self.client = client or connection.client(reactor)
        self.version = version
        self.ttls = (authorized_ttl, unauthorized_ttl)
        self.clock = clock
        self.name = name
        self.timeout = timeout
        self.on_failure = Decision.DENY if failure_policy == "Deny" else Decision.NO_OPINION
        self.match_conditions = list(match_conditions)
        self._cache: dict[bytes, tuple[float, Decision, str]] = {}

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """A webhook cannot list rules: the review says it is incomplete."""
        errs = ["webhook authorizer does not support user rule resolution"]
        return RuleSet(incomplete=True, errors=errs)

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        review = review_of(attrs, self.version, self.review_group)
        if self.match_conditions:
            spec = review["spec"] if self.version == "v1" else review_of(attrs, "v1")["spec"]
            try:
                if not self.matches(spec):
                    return Decision.NO_OPINION, ""
            except WebhookError as e:
                return self.on_failure, f"webhook authorizer failed: {e}"
        key = orjson.dumps(review["spec"], option=orjson.OPT_SORT_KEYS)
        cached = self._cache.get(key)
        if cached is not None and cached[0] > self.clock():
            return cached[1], cached[2]
        try:
            decision, reason = await self._ask(review)
        except Exception as e:  # the failure policy decides, and nothing is cached
            return self.on_failure, f"webhook authorizer failed: {e}"
        if _cacheable(attrs):
            ttl = self.ttls[0] if decision is Decision.ALLOW else self.ttls[1]
            if len(self._cache) > 10000:
                self._cache.clear()
            self._cache[key] = (self.clock() + ttl, decision, reason)
        return decision, reason

    def matches(self, spec: dict[str, Any]) -> bool:
        """kube's CEL matcher: any false skips the webhook (even after an error); an
        error with no false raises ``WebhookError``; all true calls it."""
        errors = []
        for program in self.match_conditions:
            try:
                result = program.run({"request": spec})
            except CELError as e:
                errors.append(
                    f"cel evaluation error: expression '{program.source}' resulted in error: {e}"
                )
                continue
            if result is False:
                return False
            if result is not True:
                errors.append(
                    f"cel evaluation error: expression '{program.source}' eval result type "
                    f"should be bool but got {type(result).__name__}"
                )
        if errors:
            raise WebhookError(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
        return True

    async def _ask(self, review: dict[str, Any]) -> tuple[Decision, str]:
        call = defer.ensureDeferred(self._post(review))
        if self.reactor is not None:

            def timed_out(result: Any, timeout: float) -> None:
                raise WebhookError(f"timed out after {timeout:g}s")

            call.addTimeout(self.timeout, self.reactor, onTimeoutCancel=timed_out)
        status = await call
        reason = str(status.get("reason") or status.get("evaluationError") or "")
        if status.get("denied"):  # kube: denied wins over allowed
            return Decision.DENY, reason
        if status.get("allowed"):
            return Decision.ALLOW, reason
        return Decision.NO_OPINION, reason

    async def _post(self, review: dict[str, Any]) -> dict[str, Any]:
        reply = await self.client.post(
            self.connection.server,
            data=orjson.dumps(review),
            headers=self.connection.request_headers(),
            timeout=self.timeout,
        )
        body = await reply.content()
        if not 200 <= reply.code < 300:
            raise WebhookError(f"status {reply.code}")
        try:
            answer = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise WebhookError(f"malformed {KIND}: not JSON") from None
        kind = answer.get("kind") if isinstance(answer, dict) else None
        if kind != KIND:
            raise WebhookError(f"malformed {KIND}: kind is {kind!r}")
        status = answer.get("status")
        if not isinstance(status, dict):
            raise WebhookError(f"malformed {KIND}: no status")
        return status
