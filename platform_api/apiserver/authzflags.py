"""Authorization flags: ``--authorization-mode`` and its webhook and policy-file flags,
or ``--authorization-config``; kube-apiserver's names, rules and errors.

Part of the one flag-to-configuration mapping (``config.from_flags`` calls
``authorization`` after authflags.authentication, whose anonymous setting it reads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from platform_api.apiserver.authflags import webhook_file, webhook_version
from platform_api.apiserver.flagvalues import ConfigError, parse_duration
from platform_api.authorization import abac, authzconfig
from platform_api.gotext import open_error

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

# The authorization flags: (flag, default shown in --help, description), in serverflags.FLAGS.
AUTHORIZATION_FLAGS: list[tuple[str, str, str]] = [
    (
        "authorization-mode",
        "AlwaysAllow",
        "Ordered list of authorizers, comma-delimited: AlwaysAllow,AlwaysDeny,ABAC,RBAC,Node,Webhook.",
    ),
    (
        "authorization-config",
        "",
        "AuthorizationConfiguration file (the authorizer chain; webhooks with CEL match "
        "conditions); reloaded when it changes. Exclusive with --authorization-mode and the "
        "--authorization-webhook-* flags.",
    ),
    (
        "authorization-policy-file",
        "",
        "ABAC policies, one JSON object per line (with --authorization-mode=ABAC).",
    ),
    (
        "authorization-webhook-config-file",
        "",
        "kubeconfig-format file naming a remote SubjectAccessReview service (mode Webhook).",
    ),
    ("authorization-webhook-version", "v1beta1", "SubjectAccessReview version: v1beta1 or v1."),
    (
        "authorization-webhook-cache-authorized-ttl",
        "5m0s",
        "How long to cache the webhook's allowed answers.",
    ),
    (
        "authorization-webhook-cache-unauthorized-ttl",
        "30s",
        "How long to cache the webhook's other answers.",
    ),
]


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


def _authorization_webhook(cfg: ServerConfig, given: Given) -> None:
    path = given("authorization-webhook-config-file") or ""
    if "Webhook" in cfg.authorization_modes and not path:
        raise ConfigError("authorization-mode Webhook's authorization config file not passed")
    if path and "Webhook" not in cfg.authorization_modes:
        raise ConfigError("cannot specify --authorization-webhook-config-file without mode Webhook")
    cfg.authorization_webhook_config_file = webhook_file("authorization-webhook-config-file", path)
    cfg.authorization_webhook_version = webhook_version(
        "authorization-webhook-version", given, cfg.authorization_webhook_version
    )
    for flag, attr in (
        ("authorization-webhook-cache-authorized-ttl", "authorization_webhook_authorized_ttl"),
        ("authorization-webhook-cache-unauthorized-ttl", "authorization_webhook_unauthorized_ttl"),
    ):
        if given(flag) is not None:
            setattr(cfg, attr, parse_duration(flag, str(given(flag))))


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
