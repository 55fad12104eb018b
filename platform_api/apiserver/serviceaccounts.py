"""Service-account token wiring: the signing key, the verifier, and the issuer documents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform_api.apiserver import pki
from platform_api.apiserver.authn import core_lookup
from platform_api.apiserver.config import ServerConfig
from platform_api.authentication.serviceaccount import (
    PublicKey,
    ServiceAccountTokens,
    TokenIssuer,
    jwk,
    load_private_key,
    load_public_keys,
)
from platform_api.registry.store import Store

_PLURALS = {"ServiceAccount": "serviceaccounts", "Pod": "pods", "Secret": "secrets"}


@dataclass
class ServiceAccounts:
    issuer: TokenIssuer
    verifier: ServiceAccountTokens
    audiences: tuple[str, ...]
    max_expiration: float
    keys: list[PublicKey]
    server_url: str

    def discovery(self) -> dict[str, Any]:
        """``/.well-known/openid-configuration`` of the issuer."""
        return {
            "issuer": self.issuer.issuer,
            "jwks_uri": f"{self.server_url}/openid/v1/jwks",
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
    verifier = ServiceAccountTokens(
        keys,
        cfg.service_account_issuers,
        audiences,
        lookup if cfg.service_account_lookup else None,
    )
    return ServiceAccounts(
        TokenIssuer(signing, cfg.service_account_issuers[0]),
        verifier,
        tuple(audiences),
        cfg.service_account_max_token_expiration,
        keys,
        cfg.server_url,
    )
