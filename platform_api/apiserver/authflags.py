"""Authentication and authorization flags: kube-apiserver's names, rules and errors.

Part of the one flag-to-configuration mapping (``config.from_flags`` calls these): the
identity methods, the authorizer chain, and the checks between them (exclusive flags,
files that must load at start).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import yaml

from platform_api.apiserver.flagvalues import (
    ConfigError,
    parse_bool,
    parse_duration,
    parse_list,
)
from platform_api.authentication import authnconfig
from platform_api.authentication.oidc import OIDCOptions
from platform_api.client import kubeconfig
from platform_api.client.kubeconfig import KubeconfigError
from platform_api.gotext import quote

if TYPE_CHECKING:
    from platform_api.apiserver.config import ServerConfig

Given = Callable[[str], str | None]

# The authentication flags: (flag, default shown in --help, description), in serverflags.FLAGS.
AUTHENTICATION_FLAGS: list[tuple[str, str, str]] = [
    (
        "client-ca-file",
        "",
        "Client certificates signed by an authority in this file are authenticated: CN is the "
        "user, each O a group. Defaults to the generated CA when the PKI is generated.",
    ),
    (
        "token-auth-file",
        "",
        'Static bearer tokens, one per line as CSV: token,user,uid,"group1,group2".',
    ),
    (
        "requestheader-client-ca-file",
        "",
        "Root certificates of authenticating proxies: their user headers are trusted only on "
        "connections with a client certificate these authorities signed.",
    ),
    (
        "requestheader-allowed-names",
        "",
        "Common names of proxy client certificates allowed to set user headers (empty: any).",
    ),
    (
        "requestheader-username-headers",
        "",
        "Request headers holding the user name, e.g. X-Remote-User.",
    ),
    ("requestheader-uid-headers", "", "Request headers holding the user's UID, e.g. X-Remote-Uid."),
    ("requestheader-group-headers", "", "Request headers holding groups, e.g. X-Remote-Group."),
    (
        "requestheader-extra-headers-prefix",
        "",
        "Request header prefixes for extra user information, e.g. X-Remote-Extra-.",
    ),
    (
        "authentication-token-webhook-config-file",
        "",
        "kubeconfig-format file naming a remote service that reviews bearer tokens (TokenReview).",
    ),
    (
        "authentication-token-webhook-cache-ttl",
        "2m0s",
        "How long to cache the webhook's answers.",
    ),
    (
        "authentication-token-cache-ttl",
        "10s",
        "How long a bearer token that authenticated is taken without asking its "
        "authenticator again (kube-apiserver's fixed 10s; this server's flag). 0s turns the "
        "cache off, so a revoked token is refused at once.",
    ),
    (
        "authentication-token-webhook-version",
        "v1beta1",
        "The TokenReview version sent to the webhook: v1beta1 or v1.",
    ),
    (
        "service-account-signing-key-file",
        "<cert-dir>/sa.key",
        "Private key (RSA or ECDSA, PEM) that signs service-account tokens.",
    ),
    (
        "service-account-key-file",
        "",
        "Comma-separated PEM files of further keys that verify service-account tokens.",
    ),
    (
        "service-account-signing-endpoint",
        "",
        "Path to socket where a external JWT signer is listening (@name: an abstract "
        "socket). This flag is mutually exclusive with --service-account-signing-key-file "
        "and --service-account-key-file.",
    ),
    (
        "service-account-issuer",
        "https://platform.default.svc.cluster.local",
        "Issuer of service-account tokens; a comma list accepts several, the first issues.",
    ),
    ("api-audiences", "", "Audiences the API accepts in tokens (default: the issuers)."),
    (
        "service-account-jwks-uri",
        "",
        "Overrides the URI for the JSON Web Key Set in the discovery doc served at "
        "/.well-known/openid-configuration (https only).",
    ),
    (
        "service-account-lookup",
        "true",
        "Reject service-account tokens whose account or bound object no longer exists.",
    ),
    (
        "service-account-max-token-expiration",
        "0s",
        "Longest lifetime a TokenRequest may ask for (0: no limit).",
    ),
    (
        "service-account-extend-token-expiration",
        "true",
        "Turns on projected service account expiration extension during token generation, "
        "which helps safe transition from legacy token to bound service account token "
        "feature. If this flag is enabled, admission injected tokens would be extended up to "
        "1 year to prevent unexpected failure during transition, ignoring value of "
        "service-account-max-token-expiration.",
    ),
    (
        "enable-bootstrap-token-auth",
        "false",
        "Accept bootstrap tokens from Secrets of type bootstrap.platform.io/token in "
        "platform-system.",
    ),
    (
        "authentication-config",
        "",
        "AuthenticationConfiguration file (JWT authenticators with CEL rules, anonymous "
        "access); reloaded when it changes. Exclusive with --oidc-* and --anonymous-auth.",
    ),
    ("oidc-issuer-url", "", "https URL of the OpenID provider whose ID tokens are accepted."),
    ("oidc-client-id", "", "Client ID every ID token must be issued for (its audience)."),
    ("oidc-username-claim", "sub", "ID token claim holding the user name."),
    (
        "oidc-username-prefix",
        "",
        "Prefix of OIDC user names; '-' for none (default: '<issuer>#' unless the claim is email).",
    ),
    ("oidc-groups-claim", "", "ID token claim holding the user's groups."),
    ("oidc-groups-prefix", "", "Prefix of OIDC groups."),
    ("oidc-required-claim", "", "Comma list of key=value claims every ID token must carry."),
    (
        "oidc-ca-file",
        "",
        "CA of the OpenID provider's serving certificate (default: system roots).",
    ),
    ("oidc-signing-algs", "RS256", "Comma list of accepted signing algorithms."),
    (
        "anonymous-auth",
        "true",
        "Enables anonymous requests (with AlwaysAllow: only to the health endpoints).",
    ),
]


def authentication(cfg: ServerConfig, given: Given) -> None:
    _request_header(cfg, given)
    _token_webhook(cfg, given)
    _service_accounts(cfg, given)
    _oidc(cfg, given)
    if given("enable-bootstrap-token-auth") is not None:
        cfg.enable_bootstrap_token_auth = parse_bool(
            "enable-bootstrap-token-auth", str(given("enable-bootstrap-token-auth"))
        )
    if given("anonymous-auth") is not None:
        cfg.anonymous_auth = parse_bool("anonymous-auth", str(given("anonymous-auth")))
    _authentication_config(cfg, given)


def _request_header(cfg: ServerConfig, given: Given) -> None:
    """The authenticating-proxy flags: comma lists, as kube's string slices."""
    cfg.requestheader_client_ca_file = given("requestheader-client-ca-file") or ""
    for suffix in ("allowed-names", "username-headers", "uid-headers", "group-headers"):
        items = tuple(i.strip() for i in (given(f"requestheader-{suffix}") or "").split(","))
        setattr(cfg, "requestheader_" + suffix.replace("-", "_"), tuple(i for i in items if i))
    prefixes = (given("requestheader-extra-headers-prefix") or "").split(",")
    cfg.requestheader_extra_headers_prefix = tuple(p.strip() for p in prefixes if p.strip())
    headers = cfg.requestheader_username_headers
    if cfg.requestheader_client_ca_file and not headers:
        raise ConfigError(
            "--requestheader-client-ca-file requires --requestheader-username-headers"
        )


def _service_accounts(cfg: ServerConfig, given: Given) -> None:
    cfg.service_account_signing_key_file = given("service-account-signing-key-file") or ""
    cfg.service_account_key_files = parse_list(given("service-account-key-file"))
    cfg.service_account_signing_endpoint = endpoint = (
        given("service-account-signing-endpoint") or ""
    )
    if endpoint:
        _signing_endpoint(cfg, endpoint)
    for path in (cfg.service_account_signing_key_file, *cfg.service_account_key_files):
        if path and not os.path.isfile(path):
            raise ConfigError(f"--service-account-key-file: {path}: no such file")
    if given("service-account-issuer") is not None:
        cfg.service_account_issuers = parse_list(given("service-account-issuer"))
        if not cfg.service_account_issuers:
            raise ConfigError("--service-account-issuer: must not be empty")
    cfg.api_audiences = parse_list(given("api-audiences"))
    jwks_uri = given("service-account-jwks-uri") or ""
    if jwks_uri and urlsplit(jwks_uri).scheme != "https":
        raise ConfigError(f"service-account-jwks-uri requires https scheme, parsed as: {jwks_uri}")
    cfg.service_account_jwks_uri = jwks_uri
    if given("service-account-lookup") is not None:
        cfg.service_account_lookup = parse_bool(
            "service-account-lookup", str(given("service-account-lookup"))
        )
    if given("service-account-max-token-expiration") is not None:
        cfg.service_account_max_token_expiration = longest = parse_duration(
            "service-account-max-token-expiration",
            str(given("service-account-max-token-expiration")),
        )
        if longest and not 3600 <= longest <= 1 << 32:
            raise ConfigError(
                "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"
            )
    if given("service-account-extend-token-expiration") is not None:
        cfg.service_account_extend_token_expiration = parse_bool(
            "service-account-extend-token-expiration",
            str(given("service-account-extend-token-expiration")),
        )


_ABSTRACT_SOCKET = re.compile(r"@([a-zA-Z0-9_-]+\.)*[a-zA-Z0-9_-]+")


def _signing_endpoint(cfg: ServerConfig, endpoint: str) -> None:
    """kube's checks of ``--service-account-signing-endpoint``: no local key beside it,
    and a leading ``@`` names an abstract socket."""
    if cfg.service_account_signing_key_file:
        raise ConfigError(
            "service-account-signing-key-file and service-account-signing-endpoint are "
            "mutually exclusive and cannot be set at the same time"
        )
    if cfg.service_account_key_files:
        raise ConfigError(
            "can't set `--service-account-signing-key-file` and/or `--service-account-key-file` "
            "with `--service-account-signing-endpoint` (They are mutually exclusive)"
        )
    if endpoint.startswith("@") and not _ABSTRACT_SOCKET.fullmatch(endpoint):
        raise ConfigError(
            f"invalid value {quote(endpoint)} passed for `--service-account-signing-endpoint`, "
            "when prefixed with @ must be a valid abstract socket name"
        )


_OIDC_ALGS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")


def _oidc(cfg: ServerConfig, given: Given) -> None:
    issuer, client_id = given("oidc-issuer-url") or "", given("oidc-client-id") or ""
    if not issuer and not client_id:
        return
    if not issuer or not client_id:
        raise ConfigError("oidc-issuer-url and oidc-client-id must be specified together")
    if not issuer.startswith("https://"):
        raise ConfigError(f'--oidc-issuer-url: URL scheme must be https, got "{issuer}"')
    required: dict[str, str] = {}
    for pair in parse_list(given("oidc-required-claim")):
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--oidc-required-claim: {pair!r} is not key=value")
        required[key] = value
    algs = parse_list(given("oidc-signing-algs")) or ("RS256",)
    for alg in algs:
        if alg not in _OIDC_ALGS:
            raise ConfigError(f"--oidc-signing-algs: {alg} is not a supported signing algorithm")
    cfg.oidc = OIDCOptions(
        issuer_url=issuer,
        client_id=client_id,
        username_claim=given("oidc-username-claim") or "sub",
        username_prefix=given("oidc-username-prefix"),
        groups_claim=given("oidc-groups-claim") or "",
        groups_prefix=given("oidc-groups-prefix") or "",
        required_claims=required,
        signing_algs=algs,
    )
    cfg.oidc_ca_file = given("oidc-ca-file") or ""
    if cfg.oidc_ca_file and not os.path.isfile(cfg.oidc_ca_file):
        raise ConfigError(f"--oidc-ca-file: {cfg.oidc_ca_file}: no such file")


def _authentication_config(cfg: ServerConfig, given: Given) -> None:
    path = given("authentication-config") or ""
    if not path:
        return
    if cfg.oidc is not None:
        raise ConfigError("authentication-config file and oidc-* flags are mutually exclusive")
    try:
        loaded = authnconfig.load(path, cfg.service_account_issuers)
    except (authnconfig.ConfigError, OSError) as e:
        raise ConfigError(f"--authentication-config: {e}") from None
    if loaded.anonymous_enabled is not None and given("anonymous-auth") is not None:
        raise ConfigError(
            "anonymous is not supported when the --anonymous-auth flag is set; configure "
            "anonymous authentication in the authentication configuration file instead"
        )
    cfg.authentication_config = path


def webhook_file(flag: str, path: str) -> str:
    """A webhook's kubeconfig-format connection file, checked at start."""
    if path:
        try:
            kubeconfig.load(path)
        except (KubeconfigError, OSError, yaml.YAMLError) as e:
            raise ConfigError(f"--{flag}: {e}") from None
    return path


def webhook_version(flag: str, given: Given, default: str) -> str:
    version = given(flag)
    if version is None:
        return default
    if version not in ("v1beta1", "v1"):
        raise ConfigError(
            f'--{flag}: unsupported version "{version}", supported versions are "v1beta1", "v1"'
        )
    return version


def _token_webhook(cfg: ServerConfig, given: Given) -> None:
    flag = "authentication-token-webhook-config-file"
    cfg.authentication_token_webhook_config_file = webhook_file(flag, given(flag) or "")
    ttl = given("authentication-token-webhook-cache-ttl")
    if ttl is not None:
        cfg.authentication_token_webhook_cache_ttl = parse_duration(
            "authentication-token-webhook-cache-ttl", ttl
        )
    ttl = given("authentication-token-cache-ttl")
    if ttl is not None:
        cfg.authentication_token_cache_ttl = parse_duration("authentication-token-cache-ttl", ttl)
    cfg.authentication_token_webhook_version = webhook_version(
        "authentication-token-webhook-version", given, cfg.authentication_token_webhook_version
    )
