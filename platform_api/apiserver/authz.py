"""The authorizer chain the flags or ``--authorization-config`` describe, in kube's order.

``system:masters`` first, then the configured modes (``--authorization-mode``) or the
file's authorizers in order.  The RBAC and Node authorizers are built by the service
and handed in; a mode that needs one that is missing is a startup error.  A chain from
the file is swapped whole when the file changes (kube's reload rules: a file that does
not load keeps the chain in force, and Node, RBAC and ABAC cannot be added after start
nor any built-in type removed).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from prometheus_client import Counter, Gauge
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.identity import server_id
from platform_api.apiserver.metrics import REGISTRY
from platform_api.authentication.user import UserInfo
from platform_api.authorization import abac, authzconfig
from platform_api.authorization.interface import Attributes, Authorizer, Decision, RuleSet
from platform_api.authorization.union import (
    AlwaysAllow,
    AlwaysDeny,
    AuthorizerUnion,
    PrivilegedGroups,
)
from platform_api.authorization.webhook import GROUP as WEBHOOK_GROUP
from platform_api.authorization.webhook import WebhookAuthorizer
from platform_api.client import kubeconfig
from platform_api.scheme.types import outbound_group
from platform_api.timers import timer_clock

log = Logger()
RELOADS = Counter(
    "apiserver_authorization_config_controller_automatic_reloads",
    "Total number of automatic reloads of authorization configuration split by status and "
    "apiserver identity.",
    ["apiserver_id_hash", "status"],
    registry=REGISTRY,
)
LAST_RELOAD = Gauge(
    "apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds",
    "Timestamp of the last automatic reload of authorization configuration split by status "
    "and apiserver identity.",
    ["apiserver_id_hash", "status"],
    registry=REGISTRY,
)


class AuthorizerUnavailable(ValueError):
    pass


def build(
    cfg: ServerConfig, reactor: Any, rbac: Authorizer | None, node: Authorizer | None
) -> Authorizer:
    """The server's authorizer: a fixed union for the flags, a reloading one for the file."""
    builtins: dict[str, Authorizer | None] = {
        "AlwaysAllow": AlwaysAllow(),
        "AlwaysDeny": AlwaysDeny(),
        "ABAC": None,
        "RBAC": rbac,
        "Node": node,
    }
    if cfg.authorization_policy_file:
        builtins["ABAC"] = abac.ABACAuthorizer(abac.load_policies(cfg.authorization_policy_file))
    review_group = outbound_group(WEBHOOK_GROUP, cfg.serve_upstream_groups)
    if cfg.authorization_config:
        loaded = authzconfig.load(cfg.authorization_config)
        return ReloadingAuthorizer(
            cfg.authorization_config, loaded, builtins, reactor, review_group=review_group
        )
    chain: list[Authorizer] = [PrivilegedGroups()]
    for mode in cfg.authorization_modes:
        if mode == "Webhook":
            chain.append(
                WebhookAuthorizer(
                    kubeconfig.load(cfg.authorization_webhook_config_file),
                    reactor,
                    cfg.authorization_webhook_version,
                    cfg.authorization_webhook_authorized_ttl,
                    cfg.authorization_webhook_unauthorized_ttl,
                    review_group=review_group,
                )
            )
        else:
            chain.append(_builtin(builtins, mode, f"authorization mode {mode}"))
    return AuthorizerUnion(chain)


def _builtin(builtins: dict[str, Authorizer | None], kind: str, what: str) -> Authorizer:
    if kind not in builtins:
        raise AuthorizerUnavailable(
            f"authorizer type {kind} is not allowed if it was not enabled at initial server startup"
        )
    built = builtins[kind]
    if built is None:
        raise AuthorizerUnavailable(f"{what} needs the {kind} authorizer, which is not built")
    return built


def chain_for(
    config: authzconfig.AuthorizationConfig,
    builtins: dict[str, Authorizer | None],
    reactor: Any,
    review_group: str = WEBHOOK_GROUP,
) -> AuthorizerUnion:
    """kube's ``newForConfig``: one union for one loaded file."""
    chain: list[Authorizer] = [PrivilegedGroups()]
    for entry in config.authorizers:
        hook = entry.webhook
        if hook is None:
            chain.append(_builtin(builtins, entry.type, f"authorizer type {entry.type}"))
            continue
        if hook.connection is None:  # InClusterConfig: the server would be asking itself
            raise AuthorizerUnavailable(
                f"authorizer {entry.name}: connectionInfo type {authzconfig.IN_CLUSTER} is "
                "not supported by the API server itself"
            )
        chain.append(
            WebhookAuthorizer(
                hook.connection,
                reactor,
                hook.subject_access_review_version,
                hook.authorized_ttl if hook.cache_authorized else 0.0,
                hook.unauthorized_ttl if hook.cache_unauthorized else 0.0,
                name=entry.name,
                timeout=hook.timeout,
                failure_policy=hook.failure_policy,
                match_conditions=hook.programs,
                review_group=review_group,
            )
        )
    return AuthorizerUnion(chain)


class ReloadingAuthorizer:
    """The chain of ``--authorization-config``, replaced whole when the file changes.

    The file is looked at every ``poll`` seconds (kube watches it) and read at least
    every ``interval`` (kube's one minute); a new chain is built only when the bytes and
    then the loaded configuration differ from the last ones.
    """

    poll = 1.0
    interval = 60.0

    def __init__(
        self,
        path: str,
        config: authzconfig.AuthorizationConfig,
        builtins: dict[str, Authorizer | None],
        reactor: Any,
        identity: str = "",
        review_group: str = WEBHOOK_GROUP,
    ) -> None:
        self.path, self.reactor = path, reactor
        self.review_group = review_group
        # Only what the first file names is built at start (kube builds Node, RBAC and
        # ABAC only then); every non-webhook type it names must stay.
        self.required = config.non_webhook_types
        self.builtins = {
            k: v for k, v in builtins.items() if k in self.required or k.startswith("Always")
        }
        self.current = chain_for(config, self.builtins, reactor, review_group)
        self.config = config
        self.id_hash = "sha256:" + hashlib.sha256((identity or server_id()).encode()).hexdigest()
        self._data: bytes | None = None
        self._seen: tuple[int, int, int] | None = None
        self._read_at = 0.0
        self._loop = LoopingCall(self.tick)
        self._loop.clock = reactor

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        return await self.current.authorize(attrs)

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        return self.current.rules_for(user, namespace)

    def start(self) -> LoopingCall:
        """Start watching; returns the timer for the service to stop."""
        self._record("success")  # kube counts the start as a successful load
        self._seen = self._signature()
        self._read_at = timer_clock(self.reactor)()
        self._loop.start(self.poll, now=False).addErrback(
            lambda f: log.failure("watching authorization config", f)
        )
        return self._loop

    def tick(self) -> None:
        seen = self._signature()
        due = timer_clock(self.reactor)() - self._read_at >= self.interval
        if seen != self._seen or due:
            self._seen = seen
            self.check()

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size, info.st_ino

    def check(self) -> None:
        """kube's ``checkFile``: unchanged bytes or configuration change nothing."""
        self._read_at = timer_clock(self.reactor)()
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError as e:
            return self._failed(e)
        if data == self._data:
            return None
        self._data = data
        try:
            config = authzconfig.load_data(data, self.required)
        except authzconfig.ConfigError as e:
            return self._failed(e)
        if config == self.config:
            return None
        try:
            chain = chain_for(config, self.builtins, self.reactor, self.review_group)
        except AuthorizerUnavailable as e:
            return self._failed(e)
        self.config, self.current = config, chain
        log.info("authorization config {path} reloaded", path=self.path)
        self._record("success")
        return None

    def _failed(self, error: Exception) -> None:
        log.error("reloading authorization config {path}: {error}", path=self.path, error=error)
        self._record("failure")

    def _record(self, status: str) -> None:
        RELOADS.labels(status=status, apiserver_id_hash=self.id_hash).inc()
        LAST_RELOAD.labels(status=status, apiserver_id_hash=self.id_hash).set(
            self.reactor.seconds()
        )
