"""Service-account token wiring: the signer (a key, or an external signer), the verifiers,
and the issuer documents."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from prometheus_client import Counter
from twisted.internet.defer import ensureDeferred
from twisted.logger import Logger

from platform_api import errors
from platform_api.apiserver import pki
from platform_api.apiserver.authn import live_lookup
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.metrics import REGISTRY
from platform_api.authentication.legacytokens import LegacyTokens, MarkUsed, tracking_labels
from platform_api.authentication.serviceaccount import (
    EXTENDED_FROM,
    EXTENDED_TO,
    KeySource,
    LocalSigner,
    PrivateKey,
    PublicKey,
    ServiceAccountTokens,
    Signer,
    StaticKeys,
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
EXTERNAL_TRANSITION_WARNING = (
    "service-account-extend-token-expiration is true, in order to correctly trigger safe "
    "transition logic, token lifetime supported by external-jwt-signer must be longer than "
    "{warn} seconds (currently {max})"
)
EXTERNAL_EXTENSION_WARNING = (
    "service-account-extend-token-expiration is true, tokens validity will be caped at the "
    "smaller of {extended} seconds and maximum token lifetime supported by external-jwt-signer "
    "({max})"
)
MIN_TOKEN_SECONDS = 600  # kube's validation.MinTokenAgeSec

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
    signing: PrivateKey | None  # signs Secret-based tokens (None: the signer is external)
    audiences: tuple[str, ...]
    max_expiration: float
    keys: KeySource
    server_url: Callable[[], str]  # read when asked: a port 0 is known once listening
    jwks_uri: str = ""  # --service-account-jwks-uri
    extend_expiration: bool = True  # --service-account-extend-token-expiration
    max_extended: int = EXTENDED_TO  # what an extended pod token lasts

    def close(self) -> None:
        """Stop an external signer's key refresh and close its channel."""
        stop = getattr(self.keys, "stop", None)
        if stop is not None:
            stop()

    def discovery(self) -> dict[str, Any]:
        """``/.well-known/openid-configuration`` of the issuer."""
        algorithms = {jwk(k.key, k.kid)["alg"] for k in self.keys.published()}
        return {
            "issuer": self.issuer.issuer,
            "jwks_uri": self.jwks_uri or f"{self.server_url()}/openid/v1/jwks",
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": sorted(algorithms),
        }

    def jwks(self) -> dict[str, Any]:
        return {"keys": [jwk(k.key, k.kid) for k in self.keys.published()]}


def build(
    cfg: ServerConfig, stores: dict[tuple[str, str, str], Store], reactor: Any
) -> ServiceAccounts:
    signing: PrivateKey | None = None
    longest, extended = cfg.service_account_max_token_expiration, EXTENDED_TO
    if cfg.service_account_signing_endpoint:
        external, maximum = _external_signer(cfg, reactor)
        signer: Signer = external
        keys: KeySource = external
        longest, extended = _external_lifetimes(cfg, maximum)
    else:
        signing_path = cfg.service_account_signing_key_file or pki.ensure_service_account_key(
            cfg.cert_dir
        )
        signing = load_private_key(signing_path)
        public: list[PublicKey] = [signing.public_key()]
        for path in cfg.service_account_key_files:
            public += load_public_keys(path)
        signer, keys = LocalSigner(signing), StaticKeys(public)
        _warn_extension(cfg, longest, TRANSITION_WARNING, EXTENSION_WARNING)

    by_kind = {kind: live_lookup(stores, plural) for kind, plural in _PLURALS.items()}

    async def lookup(namespace: str, kind: str, name: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = await by_kind[kind](namespace, name)
        return found

    audiences = cfg.api_audiences or cfg.service_account_issuers
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
        TokenIssuer(signer, cfg.service_account_issuers[0]),
        verifier,
        legacy,
        signing,
        tuple(audiences),
        longest,
        keys,
        lambda: cfg.server_url,
        cfg.service_account_jwks_uri,
        cfg.service_account_extend_token_expiration,
        extended,
    )


def _external_signer(cfg: ServerConfig, reactor: Any) -> tuple[Any, int]:
    """Connect to the signer and fetch its keys, before anything is served; a signer
    that does not answer within a minute ends the start, in kube's words."""
    # Imported only here: grpcio's start-up cost is for servers that use the signer.
    from platform_api.authentication.externalsigner import (  # noqa: PLC0415
        ExternalSigner,
        SignerError,
    )

    signer = ExternalSigner(cfg.service_account_signing_endpoint, reactor)
    try:
        signer.initial_fill()
        maximum = signer.max_token_expiration()
    except SignerError as e:
        signer.stop()
        _fail(f"while setting up external-jwt-signer: {e}")
    signer.start()
    return signer, maximum


def _external_lifetimes(cfg: ServerConfig, maximum: int) -> tuple[float, int]:
    """kube's token lifetimes under an external signer: the cap defaults to the
    signer's, may not exceed it, and an extended pod token lasts at most as long."""
    if maximum < MIN_TOKEN_SECONDS:
        _fail(
            f"max token life supported by external-jwt-signer ({maximum}s) is less than "
            f"acceptable (min {MIN_TOKEN_SECONDS}s)"
        )
    longest = cfg.service_account_max_token_expiration or float(maximum)
    if longest > maximum:
        _fail(
            "service-account-max-token-expiration cannot be set longer than the token "
            "expiration supported by service-account-signing-endpoint: "
            f"{_duration(longest)} > {_duration(maximum)}"
        )
    _warn_extension(cfg, longest, EXTERNAL_TRANSITION_WARNING, EXTERNAL_EXTENSION_WARNING)
    return longest, min(maximum, EXTENDED_TO)


def _fail(message: str) -> NoReturn:
    log.critical("command failed: {error}", error=message)
    raise SystemExit(1)


def _duration(seconds: float) -> str:
    return format_duration(int(seconds * 1e9))


def _warn_extension(cfg: ServerConfig, longest: float, transition: str, extension: str) -> None:
    """kube's start-up warnings when a token lifetime cap meets the extension."""
    if not (cfg.service_account_extend_token_expiration and longest):
        return
    if longest < EXTENDED_FROM:
        log.warn(transition.format(warn=EXTENDED_FROM, max=_duration(longest)))
    if longest < EXTENDED_TO:
        log.warn(extension.format(extended=EXTENDED_TO, max=_duration(longest)))


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
