"""Service-account token wiring: the signing key, the verifier, and the issuer documents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prometheus_client import Counter
from twisted.internet.defer import ensureDeferred
from twisted.logger import Logger

from platform_api import errors
from platform_api.apiserver import pki
from platform_api.apiserver.authn import core_lookup
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.metrics import REGISTRY
from platform_api.authentication.legacytokens import LegacyTokens, MarkUsed, tracking_labels
from platform_api.authentication.serviceaccount import (
    EXTENDED_FROM,
    EXTENDED_TO,
    PrivateKey,
    PublicKey,
    ServiceAccountTokens,
    TokenIssuer,
    jwk,
    load_private_key,
    load_public_keys,
)
from platform_api.fieldmanager.manager import APISERVER
from platform_api.goduration import format_duration
from platform_api.registry.store import Store

log = Logger()
# kube's pkg/serviceaccount metrics of Secret-based tokens, by what LegacyTokens counts.
_USES = {
    what: Counter(f"serviceaccount_{name}_total", f"[ALPHA] {doc}", registry=REGISTRY)
    for what, name, doc in (
        ("legacy", "legacy_tokens", "Cumulative legacy service account tokens used"),
        ("manual", "legacy_manual_token_uses", "Cumulative manually created legacy tokens used"),
        ("auto", "legacy_auto_token_uses", "Cumulative auto-generated legacy tokens used"),
        (
            "invalid_auto",
            "invalid_legacy_auto_token_uses",
            "Cumulative invalid auto-generated legacy tokens used",
        ),
    )
}
_STALE = Counter(
    "serviceaccount_stale_tokens_total",
    "[ALPHA] Cumulative stale projected service account tokens used",
    registry=REGISTRY,
)
TRANSITION_WARNING = (
    "service-account-extend-token-expiration is true, in order to correctly trigger safe "
    "transition logic, service-account-max-token-expiration must be set longer than {warn} "
    "seconds (currently {max})"
)
EXTENSION_WARNING = (
    "service-account-extend-token-expiration is true, enabling tokens valid up to {extended} "
    "seconds, which is longer than service-account-max-token-expiration set to {max}"
)

_PLURALS = {
    "ServiceAccount": "serviceaccounts",
    "Pod": "pods",
    "Secret": "secrets",
    "Node": "nodes",
}


@dataclass
class ServiceAccounts:
    issuer: TokenIssuer
    verifier: ServiceAccountTokens
    legacy: LegacyTokens  # Secret-based tokens
    signing: PrivateKey  # what the tokens controller signs Secret-based tokens with
    audiences: tuple[str, ...]
    max_expiration: float
    keys: list[PublicKey]
    server_url: str
    jwks_uri: str = ""  # --service-account-jwks-uri
    extend_expiration: bool = True  # --service-account-extend-token-expiration

    def discovery(self) -> dict[str, Any]:
        """``/.well-known/openid-configuration`` of the issuer."""
        return {
            "issuer": self.issuer.issuer,
            "jwks_uri": self.jwks_uri or f"{self.server_url}/openid/v1/jwks",
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": sorted({jwk(k)["alg"] for k in self.keys}),
        }

    def jwks(self) -> dict[str, Any]:
        return {"keys": [jwk(k) for k in self.keys]}


def build(cfg: ServerConfig, stores: dict[tuple[str, str, str], Store]) -> ServiceAccounts:
    signing_path = cfg.service_account_signing_key_file or pki.ensure_service_account_key(
        cfg.cert_dir
    )
    signing = load_private_key(signing_path)
    keys: list[PublicKey] = [signing.public_key()]
    for path in cfg.service_account_key_files:
        keys += load_public_keys(path)

    by_kind = {kind: core_lookup(stores, plural) for kind, plural in _PLURALS.items()}

    def lookup(namespace: str, kind: str, name: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = by_kind[kind](namespace, name)
        return found

    audiences = cfg.api_audiences or cfg.service_account_issuers
    _warn_extension(cfg)
    verifier = ServiceAccountTokens(
        keys,
        cfg.service_account_issuers,
        audiences,
        lookup if cfg.service_account_lookup else None,
        stale=_STALE.inc,
    )
    legacy = LegacyTokens(
        keys,
        audiences,
        lookup if cfg.service_account_lookup else None,
        mark_used(stores[("", "v1", "secrets")]),
        count=lambda what: _USES[what].inc(),
    )
    return ServiceAccounts(
        TokenIssuer(signing, cfg.service_account_issuers[0]),
        verifier,
        legacy,
        signing,
        tuple(audiences),
        cfg.service_account_max_token_expiration,
        keys,
        cfg.server_url,
        cfg.service_account_jwks_uri,
        cfg.service_account_extend_token_expiration,
    )


def _warn_extension(cfg: ServerConfig) -> None:
    """kube's start-up warnings when a token lifetime cap meets the extension."""
    longest = cfg.service_account_max_token_expiration
    if not (cfg.service_account_extend_token_expiration and longest):
        return
    shown = format_duration(int(longest * 1e9))
    if longest < EXTENDED_FROM:
        log.warn(TRANSITION_WARNING.format(warn=EXTENDED_FROM, max=shown))
    if longest < EXTENDED_TO:
        log.warn(EXTENSION_WARNING.format(extended=EXTENDED_TO, max=shown))


def mark_used(secrets: Store) -> MarkUsed:
    """Labels a Secret whose token was used today, as kube-apiserver does (a write of its
    own; a Secret gone or replaced meanwhile is left alone)."""
    track = secrets.tracker(APISERVER)

    def mark(namespace: str, name: str, uid: str, today: str) -> None:
        def labelled(obj: dict[str, Any] | None) -> dict[str, Any]:
            assert obj is not None  # Secrets are not created by an update
            found = obj["metadata"].get("uid", "")
            if uid and found != uid:
                raise errors.conflict(
                    "secrets",
                    "",
                    name,
                    f"Precondition failed: UID in precondition: {uid}, UID in object meta: {found}",
                )
            obj["metadata"].setdefault("labels", {})[tracking_labels(obj)[0]] = today
            return obj

        d = ensureDeferred(secrets.update(namespace, name, labelled, track=track))
        d.addErrback(
            lambda f: log.warn(
                "labelling the legacy token {namespace}/{name} as used: {why}",
                namespace=namespace,
                name=name,
                why=f.getErrorMessage(),
            )
        )

    return mark
