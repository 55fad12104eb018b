"""ImagePolicyWebhook: a remote service decides which images pods may run (kube's
``imagepolicy`` plugin; off by default).

Configured by the plugin's entry in ``--admission-control-config-file``: ``imagePolicy``
names a kubeconfig (the service and the server's credentials towards it), ``allowTTL``
and ``denyTTL`` (seconds answers are cached: 300 and 30 by default, -1 for none),
``retryBackoff`` (milliseconds before the first retry: 500) and ``defaultAllow`` (admit
when the service cannot be asked; the pod is then annotated
``alpha.image-policy.platform.io/failed-open``).  Pod creates and updates send an
``imagepolicy.platform.io/v1alpha1`` ImageReview of the images (containers, then init
containers), the pod's ``*.image-policy.platform.io/*`` annotations and its namespace.
The ephemeralcontainers subresource is not served here, and the answer's audit
annotations have no audit log to go to.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import orjson
from twisted.internet import task

from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.client.goerrors import go_error, status_text
from platform_api.client.kubeconfig import Connection, KubeconfigError, load
from platform_api.codec.jsonsyntax import syntax_error
from platform_api.goduration import format_duration
from platform_api.scheme.types import outbound_group
from platform_api.timers import timer_clock

API_VERSION = "imagepolicy.platform.io/v1alpha1"
FAILED_OPEN = "alpha.image-policy.platform.io/failed-open"
POLICY_ANNOTATIONS = ".image-policy.platform.io/"
TIMEOUT = 30.0
CACHE_SIZE = 1024
RETRY_STEPS, RETRY_FACTOR = 5, 1.5
_RETRIED_CODES = (429, 500, 504)
Obj = dict[str, Any]
# unit, min, max and default, in seconds
_DURATIONS = {
    "retryBackoff": (0.001, 1e-9, 300.0, 0.5),
    "allowTTL": (1.0, 1.0, 1800.0, 300.0),
    "denyTTL": (1.0, 1.0, 1800.0, 30.0),
}


class CallFailed(Exception):
    def __init__(self, text: str, retry: bool) -> None:
        super().__init__(text)
        self.retry = retry


def _duration(key: str, value: Any) -> float:
    """kube's normalizeConfigDuration: -1 off, 0 the default, else scaled and bounded."""
    unit, low, high, default = _DURATIONS[key]
    number = int(value or 0)
    if number == -1:
        return 0.0
    if number == 0:
        return default
    seconds = number * unit
    if not low <= seconds <= high:
        shown = [format_duration(round(s * 1e9)) for s in (low, high, seconds)]
        raise ConfigError(f"valid value is between {shown[0]} and {shown[1]}, got {shown[2]}")
    return seconds


class ImagePolicyWebhook:
    name = "ImagePolicyWebhook"

    def __init__(
        self, settings: Obj, connection: Connection, reactor: Any, api_version: str = API_VERSION
    ) -> None:
        self.api_version = api_version  # imagepolicy.k8s.io/v1alpha1 under upstream names
        self.allow_ttl = _duration("allowTTL", settings.get("allowTTL"))
        self.deny_ttl = _duration("denyTTL", settings.get("denyTTL"))
        self.backoff = _duration("retryBackoff", settings.get("retryBackoff"))
        self.default_allow = settings.get("defaultAllow") is True
        self.connection = connection
        self.reactor = reactor
        self.client = connection.client(reactor)
        self._cache: OrderedDict[bytes, tuple[float, Obj]] = OrderedDict()

    async def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation not in ("CREATE", "UPDATE") or (rt.group, rt.plural) != ("", "pods"):
            return
        if attrs.subresource or obj is None:
            return
        spec = obj.get("spec") or {}
        containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        review_spec: Obj = {"containers": [_image(c) for c in containers]}
        kept = {k: v for k, v in annotations.items() if POLICY_ANNOTATIONS in k}
        if kept:
            review_spec["annotations"] = kept
        if attrs.namespace:
            review_spec["namespace"] = attrs.namespace
        try:
            status = await self._status(review_spec)
        except CallFailed as e:
            if not self.default_allow:
                raise forbidden(attrs, obj, str(e)) from None
            # As kube does, the validating phase marks the pod it lets through.
            obj.setdefault("metadata", {}).setdefault("annotations", {})[FAILED_OPEN] = "true"
            return
        if status.get("allowed") is not True:
            reason = status.get("reason")
            why = (
                f"image policy webhook backend denied one or more images: {reason}"
                if reason
                else "one or more images rejected by webhook backend"
            )
            raise forbidden(attrs, obj, why)

    async def _status(self, spec: Obj) -> Obj:
        key = orjson.dumps(spec)
        now = timer_clock(self.reactor)()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            self._cache.move_to_end(key)
            return cached[1]
        status = await self._ask(spec)
        ttl = self.allow_ttl if status.get("allowed") is True else self.deny_ttl
        self._cache[key] = (timer_clock(self.reactor)() + ttl, status)
        self._cache.move_to_end(key)
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return status

    async def _ask(self, spec: Obj) -> Obj:
        """kube's WithExponentialBackoff: transient failures are retried, 5 calls at most."""
        delay = self.backoff
        for step in range(RETRY_STEPS):
            try:
                return await self._post(spec)
            except CallFailed as e:
                if not e.retry or step == RETRY_STEPS - 1:
                    raise
            await task.deferLater(self.reactor, delay, lambda: None)
            delay *= RETRY_FACTOR
        raise AssertionError("unreachable")

    async def _post(self, spec: Obj) -> Obj:
        review = {
            "apiVersion": self.api_version,
            "kind": "ImageReview",
            "metadata": {},
            "spec": spec,
            "status": {"allowed": False},
        }
        server = self.connection.server
        try:
            reply = await self.client.post(
                server,
                data=orjson.dumps(review),
                headers=self.connection.request_headers(),
                timeout=TIMEOUT,
            )
            body = await reply.content()
        except Exception as e:
            lost = "ConnectionLost" in repr(e) or "ResponseNeverReceived" in repr(e)
            raise CallFailed(f'Post "{server}": {go_error(e, server)}', lost) from None
        if not 200 <= reply.code < 300:
            raise CallFailed(status_text(reply.code, body), reply.code in _RETRIED_CODES)
        try:
            answer = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            why = syntax_error(body) or str(e)  # Go's words for the first syntax error
            raise CallFailed(f"couldn't get version/kind; json parse error: {why}", False) from None
        status = answer.get("status") if isinstance(answer, dict) else None
        return status if isinstance(status, dict) else {}


def _image(container: Obj) -> Obj:
    image = container.get("image")
    return {"image": image} if image else {}


def build(ctx: PluginContext) -> ImagePolicyWebhook:
    prefix = 'couldn\'t init admission plugin "ImagePolicyWebhook": '
    settings = ctx.plugin_settings("ImagePolicyWebhook")
    if settings is None:
        raise ConfigError(prefix + "no config specified")
    policy = settings.get("imagePolicy") or {}
    try:
        connection = load(str(policy.get("kubeConfigFile") or ""))
        group, _, version = API_VERSION.partition("/")
        api_version = f"{outbound_group(group, ctx.config.serve_upstream_groups)}/{version}"
        return ImagePolicyWebhook(policy, connection, ctx.reactor, api_version)
    except (OSError, KubeconfigError, ConfigError) as e:
        raise ConfigError(prefix + str(e)) from None
