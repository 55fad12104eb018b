"""EventRateLimit: token buckets on core Event writes (kube's plugin; off by default).

Configured by an ``eventratelimit.admission.platform.io/v1alpha1`` Configuration in
``--admission-control-config-file``: each limit (``Server``, ``Namespace``, ``User``,
``SourceAndObject``) has ``qps`` and ``burst`` and, but for ``Server``, a bucket per key in
an LRU cache of ``cacheSize`` (4096).  A bucket starts full; an evicted one starts full
again.  Every limit is charged; one that is empty refuses with 429.  Dry runs are free.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.timers import timer_clock
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText

API_VERSION = "eventratelimit.admission.platform.io/v1alpha1"
LIMIT_TYPES = ("Server", "Namespace", "User", "SourceAndObject")
DEFAULT_CACHE_SIZE = 4096
Obj = dict[str, Any]


class TokenBucket:
    """golang.org/x/time/rate's limiter as kube's flowcontrol uses it: starts full."""

    def __init__(self, qps: float, burst: int, now: float) -> None:
        self.qps, self.burst = qps, burst
        self.tokens, self.last = float(burst), now

    def try_accept(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.last) * self.qps)
        self.last = max(self.last, now)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


def _source_and_object(obj: Obj | None) -> str:
    source = (obj or {}).get("source") or {}
    involved = (obj or {}).get("involvedObject") or {}
    parts = [source.get("component"), source.get("host")]
    parts += [involved.get(k) for k in ("kind", "namespace", "name", "uid", "apiVersion")]
    return "".join(str(p or "") for p in parts)


_KEYS: dict[str, Callable[[Attributes, Obj | None], str]] = {
    "Server": lambda attrs, obj: "",
    "Namespace": lambda attrs, obj: attrs.namespace,
    "User": lambda attrs, obj: attrs.user.name,
    "SourceAndObject": lambda attrs, obj: _source_and_object(obj),
}


class LimitEnforcer:
    def __init__(self, limit: Obj, clock: Callable[[], float]) -> None:
        self.type = str(limit["type"])
        self.qps, self.burst = float(limit["qps"]), int(limit["burst"])
        self.size = 1 if self.type == "Server" else int(limit.get("cacheSize") or 0)
        self.size = self.size or DEFAULT_CACHE_SIZE
        self.clock = clock
        self.buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def accept(self, attrs: Attributes, obj: Obj | None) -> str | None:
        """None when accepted, else kube's message for this limit."""
        key = _KEYS[self.type](attrs, obj)
        now = self.clock()
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = TokenBucket(self.qps, self.burst, now)
            if len(self.buckets) > self.size:
                self.buckets.popitem(last=False)
        else:
            self.buckets.move_to_end(key)
        if bucket.try_accept(now):
            return None
        return f"limit reached on type {self.type} for key {key}"


class EventRateLimit:
    name = "EventRateLimit"

    def __init__(self, limits: list[Obj], clock: Callable[[], float]) -> None:
        self.enforcers = [LimitEnforcer(limit, clock) for limit in limits]

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation not in ("CREATE", "UPDATE") or (rt.group, rt.kind) != ("", "Event"):
            return
        if attrs.dry_run:
            return
        refused: list[str] = []
        for enforcer in self.enforcers:
            why = enforcer.accept(attrs, obj)
            if why is not None and why not in refused:
                refused.append(why)
        if refused:
            text = refused[0] if len(refused) == 1 else f"[{', '.join(refused)}]"
            raise errors.StatusError(429, errors.TOO_MANY_REQUESTS, f"Too many requests: {text}")


def validate_configuration(config: Obj) -> list[FieldError]:
    """kube's ValidateConfiguration."""
    limits = config.get("limits") or []
    errs = []
    if not limits:
        errs.append(
            field.invalid("limits", GoText("[]eventratelimit.Limit(nil)"), "must not be empty")
        )
    for i, limit in enumerate(limits):
        path = f"limits[{i}]"
        if limit.get("type") not in LIMIT_TYPES:
            errs.append(
                field.not_supported(f"{path}.type", str(limit.get("type") or ""), list(LIMIT_TYPES))
            )
        for name in ("burst", "qps"):
            if int(limit.get(name) or 0) <= 0:
                errs.append(
                    field.invalid(f"{path}.{name}", int(limit.get(name) or 0), "must be positive")
                )
        if limit.get("type") != "Server" and int(limit.get("cacheSize") or 0) < 0:
            errs.append(
                field.invalid(f"{path}.cacheSize", int(limit["cacheSize"]), "must not be negative")
            )
    return errs


def load_configuration(settings: Obj | None) -> list[Obj]:
    """The configured limits; ConfigError with kube's texts when the settings are wrong."""
    config = settings or {}
    if settings is not None and (
        config.get("apiVersion") != API_VERSION or config.get("kind") != "Configuration"
    ):
        raise ConfigError(
            f'couldn\'t init admission plugin "EventRateLimit": no kind "{config.get("kind", "")}" '
            f'is registered for version "{config.get("apiVersion", "")}"'
        )
    errs = validate_configuration(config)
    if errs:
        raise ConfigError(
            f'couldn\'t init admission plugin "EventRateLimit": {field.aggregate(errs)}'
        )
    return list(config["limits"])


def build(ctx: PluginContext) -> EventRateLimit:
    limits = load_configuration(ctx.plugin_settings("EventRateLimit"))
    return EventRateLimit(limits, timer_clock(ctx.reactor))
