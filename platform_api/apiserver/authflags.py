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
from platform_api.authorization import abac, authzconfig
from platform_api.client import kubeconfig
from platform_api.client.kubeconfig import KubeconfigError
from platform_api.gotext import open_error, quote

if TYPE_CHECKING:
    from platform_api.apiserver.config import ServerConfig

Given = Callable[[str], str | None]
AUTHORIZATION_MODES = ("AlwaysAllow", "AlwaysDeny", "ABAC", "RBAC", "Node", "Webhook")
HEALTH_PATHS = ("/livez", "/readyz", "/healthz")
# kube's legacy flags, which --authorization-config excludes (not the ABAC policy file,
# which an ABAC authorizer of the file uses).
LEGACY_AUTHORIZATION_FLAGS = (
    "authorization-mode",
    "authorization-webhook-config-file",
    "authorization-webhook-version",
    "authorization-webhook-cache-authorized-ttl",
    "authorization-webhook-cache-unauthorized-ttl",
)


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


def authorization(cfg: ServerConfig, given: Given) -> None:
    if given("authorization-config"):
        _authorization_config(cfg, given)
        return
    if given("authorization-mode") is not None:
        cfg.authorization_modes = _modes(str(given("authorization-mode")))
    cfg.authorization_policy_file = given("authorization-policy-file") or ""
    _policy_file(cfg)
    _authorization_webhook(cfg, given)
    if cfg.anonymous_auth and "AlwaysAllow" in cfg.authorization_modes:
        # kube turns anonymous access off under AlwaysAllow; health stays public.
        cfg.anonymous_paths = HEALTH_PATHS


def _authorization_config(cfg: ServerConfig, given: Given) -> None:
    """kube's rules: no legacy flag, and the file loads and validates at start."""
    if any(given(flag) is not None for flag in LEGACY_AUTHORIZATION_FLAGS):
        raise ConfigError(
            "--authorization-config can not be specified when --authorization-mode or "
            "--authorization-webhook-* flags are defined"
        )
    path = str(given("authorization-config"))
    try:
        loaded = authzconfig.load(path)
    except authzconfig.ConfigError as e:
        raise ConfigError(str(e)) from None
    except OSError as e:
        raise ConfigError(open_error(path, e)) from None
    cfg.authorization_config = path
    # The types in force at start: the service builds the authorizers they need.
    cfg.authorization_modes = list(dict.fromkeys(a.type for a in loaded.authorizers))
    cfg.authorization_policy_file = given("authorization-policy-file") or ""
    if "ABAC" in cfg.authorization_modes:
        _policy_file(cfg)


def _policy_file(cfg: ServerConfig) -> None:
    if "ABAC" in cfg.authorization_modes:
        if not cfg.authorization_policy_file:
            raise ConfigError("authorization-mode ABAC's authorization policy file not passed")
        try:
            abac.load_policies(cfg.authorization_policy_file)
        except (abac.PolicyError, OSError) as e:
            raise ConfigError(f"--authorization-policy-file: {e}") from None
    elif cfg.authorization_policy_file:
        raise ConfigError("cannot specify --authorization-policy-file without mode ABAC")


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


def _authorization_webhook(cfg: ServerConfig, given: Given) -> None:
    path = given("authorization-webhook-config-file") or ""
    if "Webhook" in cfg.authorization_modes and not path:
        raise ConfigError("authorization-mode Webhook's authorization config file not passed")
    if path and "Webhook" not in cfg.authorization_modes:
        raise ConfigError("cannot specify --authorization-webhook-config-file without mode Webhook")
    cfg.authorization_webhook_config_file = _webhook_file("authorization-webhook-config-file", path)
    cfg.authorization_webhook_version = _webhook_version(
        "authorization-webhook-version", given, cfg.authorization_webhook_version
    )
    for flag, attr in (
        ("authorization-webhook-cache-authorized-ttl", "authorization_webhook_authorized_ttl"),
        ("authorization-webhook-cache-unauthorized-ttl", "authorization_webhook_unauthorized_ttl"),
    ):
        if given(flag) is not None:
            setattr(cfg, attr, parse_duration(flag, str(given(flag))))


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


def _webhook_file(flag: str, path: str) -> str:
    """A webhook's kubeconfig-format connection file, checked at start."""
    if path:
        try:
            kubeconfig.load(path)
        except (KubeconfigError, OSError, yaml.YAMLError) as e:
            raise ConfigError(f"--{flag}: {e}") from None
    return path


def _webhook_version(flag: str, given: Given, default: str) -> str:
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
    cfg.authentication_token_webhook_config_file = _webhook_file(flag, given(flag) or "")
    ttl = given("authentication-token-webhook-cache-ttl")
    if ttl is not None:
        cfg.authentication_token_webhook_cache_ttl = parse_duration(
            "authentication-token-webhook-cache-ttl", ttl
        )
    ttl = given("authentication-token-cache-ttl")
    if ttl is not None:
        cfg.authentication_token_cache_ttl = parse_duration("authentication-token-cache-ttl", ttl)
    cfg.authentication_token_webhook_version = _webhook_version(
        "authentication-token-webhook-version", given, cfg.authentication_token_webhook_version
    )


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes:
        raise ConfigError("--authorization-mode: at least one authorization mode must be passed")
    seen = set()
    for mode in modes:
        if mode not in AUTHORIZATION_MODES:
            raise ConfigError(
                f'--authorization-mode: authorization mode "{mode}" is not a valid mode '
                f"(valid modes: {','.join(AUTHORIZATION_MODES)})"
            )
        if mode in seen:
            raise ConfigError(
                f'--authorization-mode: authorization mode "{mode}" has mentioned multiple times'
            )
        seen.add(mode)
    return modes
