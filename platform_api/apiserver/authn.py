"""The authenticator chain the flags describe, in kube's order.

Request methods first (authenticating proxies, then client certificates), then the
bearer-token methods (token file, service-account JWTs, bootstrap tokens, OIDC, the
token webhook), then anonymous access.
"""

from __future__ import annotations

import os
import time
from typing import Any

from prometheus_client import Counter, Gauge
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api import errors
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.metrics import REGISTRY
from platform_api.authentication import authnconfig
from platform_api.authentication.bootstrap import BootstrapTokens, TokenPlaces
from platform_api.authentication.interface import Authenticator, TokenAuthenticator
from platform_api.authentication.oidc import OIDCAuthenticator
from platform_api.authentication.requestheader import RequestHeaderAuthenticator
from platform_api.authentication.tokenfile import TokenFileAuthenticator
from platform_api.authentication.union import Anonymous, RequestAuthenticator
from platform_api.authentication.webhook import GROUP as TOKEN_GROUP
from platform_api.authentication.webhook import TokenWebhook
from platform_api.authentication.x509 import (
    CertificateVerifier,
    X509Authenticator,
    load_pem_certificates,
)
from platform_api.client import kubeconfig
from platform_api.registry.store import Store
from platform_api.scheme.types import outbound_group
from platform_api.timers import timer_clock

Stores = dict[tuple[str, str, str], Store]
log = Logger()
LAST_RELOAD = Gauge(
    "apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds",
    "Timestamp of the last automatic reload of authentication configuration split by status.",
    ["status"],
    registry=REGISTRY,
)
RELOADS = Counter(
    "apiserver_authentication_config_controller_automatic_reloads",
    "Total number of automatic reloads of authentication configuration split by status.",
    ["status"],
    registry=REGISTRY,
)


def core_lookup(stores: Stores, plural: str) -> Any:
    """``(namespace, name) -> object or None`` over a core/v1 store's cache, for token
    checks (kube's bootstrap tokens read a lister alone)."""
    store = stores[("", "v1", plural)]

    def lookup(namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return store.get(namespace, name).object
        except errors.StatusError:
            return None

    return lookup


def live_lookup(stores: Stores, plural: str) -> Any:
    """``core_lookup``, awaited, that looks for what the cache lacks in the database that
    keeps every write (etcd), as kube's service-account token getter falls back from its
    listers to a GET: a token bound to a pod just made through another replica works."""
    store = stores[("", "v1", plural)]

    async def lookup(namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return (await store.get_or_fetch(namespace, name)).object
        except errors.StatusError:
            return None

    return lookup


def _request_methods(cfg: ServerConfig, client_ca: str) -> list[Authenticator]:
    methods: list[Authenticator] = []
    if cfg.requestheader_client_ca_file:
        proxies = CertificateVerifier(load_pem_certificates(cfg.requestheader_client_ca_file))
        methods.append(
            RequestHeaderAuthenticator(
                proxies,
                cfg.requestheader_allowed_names,
                cfg.requestheader_username_headers,
                cfg.requestheader_uid_headers,
                cfg.requestheader_group_headers,
                cfg.requestheader_extra_headers_prefix,
            )
        )
    if client_ca:
        methods.append(X509Authenticator(CertificateVerifier(load_pem_certificates(client_ca))))
    return methods


def build(
    cfg: ServerConfig,
    client_ca: str,
    stores: Stores,
    service_accounts: TokenAuthenticator,
    reactor: Any,
    loopback: TokenAuthenticator | None = None,
    legacy_service_accounts: TokenAuthenticator | None = None,
) -> RequestAuthenticator:
    """``loopback``: the server's own client's token, asked first.  Secret-based
    service-account tokens come before the others, as in kube."""
    tokens: list[TokenAuthenticator] = [loopback] if loopback is not None else []
    if cfg.token_auth_file:
        tokens.append(TokenFileAuthenticator.from_file(cfg.token_auth_file))
    if legacy_service_accounts is not None:
        tokens.append(legacy_service_accounts)
    tokens.append(service_accounts)
    if cfg.enable_bootstrap_token_auth:
        places = TokenPlaces.of(cfg.serve_upstream_groups)
        tokens.append(BootstrapTokens(core_lookup(stores, "secrets"), places=places))
    if cfg.oidc is not None:
        ca = None
        if cfg.oidc_ca_file:
            with open(cfg.oidc_ca_file, "rb") as f:
                ca = f.read()
        provider = kubeconfig.Connection(cfg.oidc.issuer_url, ca_pem=ca)
        tokens.append(OIDCAuthenticator(cfg.oidc, provider.client(reactor)))
    if cfg.authentication_token_webhook_config_file:
        tokens.append(
            TokenWebhook(
                kubeconfig.load(cfg.authentication_token_webhook_config_file),
                reactor,
                cfg.authentication_token_webhook_version,
                cfg.authentication_token_webhook_cache_ttl,
                audiences=cfg.api_audiences or cfg.service_account_issuers,
                review_group=outbound_group(TOKEN_GROUP, cfg.serve_upstream_groups),
            )
        )
    anonymous = Anonymous(cfg.anonymous_paths) if cfg.anonymous_auth else None
    chain = RequestAuthenticator(
        _request_methods(cfg, client_ca),
        tokens,
        anonymous,
        cfg.api_audiences or cfg.service_account_issuers,
        timer_clock(reactor),  # the token cache's TTL: a stepped clock keeps no entry longer
        cfg.authentication_token_cache_ttl,
    )
    if cfg.authentication_config:
        ConfigReloader(chain, cfg, reactor).start()
    return chain


class ConfigReloader:
    """Applies ``--authentication-config`` and applies it again when the file changes.

    Its JWT authenticators go last among the token methods; a file that no longer
    loads is reported and the previous configuration stays in force.
    """

    interval = 10.0

    def __init__(self, chain: RequestAuthenticator, cfg: ServerConfig, reactor: Any) -> None:
        self.chain, self.cfg, self.reactor = chain, cfg, reactor
        self.fixed = list(chain.token_methods)
        self.mtime = -1.0
        self.reloaded_at = 0.0
        self.mtime_seen_before = False  # the first load at start is not a reload
        self._loop = LoopingCall(self.check)
        self._loop.clock = reactor

    def start(self) -> None:
        self.check()
        self._loop.start(self.interval, now=False)

    def check(self) -> None:
        path = self.cfg.authentication_config
        try:
            mtime = os.stat(path).st_mtime
        except OSError as e:
            log.error("authentication config {path}: {error}", path=path, error=e)
            return
        if mtime == self.mtime:
            return
        try:
            loaded = authnconfig.load(path, self.cfg.service_account_issuers)
        except (authnconfig.ConfigError, OSError) as e:
            log.error("authentication config {path} not applied: {error}", path=path, error=e)
            self.mtime = mtime
            self._record("failure")
            return
        self.mtime = mtime
        jwt_methods = [
            OIDCAuthenticator(
                rule.options,
                kubeconfig.Connection(rule.options.issuer_url, ca_pem=rule.ca_pem).client(
                    self.reactor
                ),
                mapper=rule.user,
            )
            for rule in loaded.jwt
        ]
        self.chain.token_methods = [*self.fixed, *jwt_methods]
        if loaded.anonymous_enabled is not None:
            self.chain.anonymous = (
                Anonymous(loaded.anonymous_paths) if loaded.anonymous_enabled else None
            )
        self.reloaded_at = time.time()
        self._record("success")
        log.info("authentication config {path} applied", path=path)

    def _record(self, status: str) -> None:
        if self.mtime_seen_before:
            RELOADS.labels(status=status).inc()
            LAST_RELOAD.labels(status=status).set(time.time())
        self.mtime_seen_before = True
