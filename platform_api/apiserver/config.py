"""The one place that maps command-line flags to configuration.

Flags keep kube-apiserver's names, defaults and value syntax (durations like ``1m30s``,
booleans as ``--flag`` or ``--flag=false``); anything wrong is a ``ConfigError`` whose
text is the one line the server prints before exiting.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

from platform_api.authentication import authnconfig
from platform_api.authentication.oidc import OIDCOptions
from platform_api.authorization import abac
from platform_api.client import kubeconfig
from platform_api.client.kubeconfig import KubeconfigError

AUTHORIZATION_MODES = ("AlwaysAllow", "AlwaysDeny", "ABAC", "RBAC", "Node", "Webhook")
# kube-controller-manager's names for the controllers this server runs (and old aliases).
CONTROLLERS = {
    "namespace-controller": "namespace-controller",
    "namespace": "namespace-controller",
    "garbage-collector-controller": "garbage-collector-controller",
    "garbagecollector": "garbage-collector-controller",
}
BUILT_MODES = ("AlwaysAllow", "AlwaysDeny", "ABAC", "Webhook")
HEALTH_PATHS = ("/livez", "/readyz", "/healthz")


class ConfigError(ValueError):
    pass


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(flag: str, text: str) -> float:
    """Go's ``time.ParseDuration`` (``5m``, ``90s``, ``1m30s``, ``500ms``) in seconds."""
    value = text.strip()
    if value == "0":
        return 0.0
    sign = -1.0 if value.startswith("-") else 1.0
    body = value.lstrip("+-")
    pos = 0
    total = 0.0
    for match in _DURATION.finditer(body):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not body or pos != len(body):
        raise ConfigError(
            f'invalid argument "{text}" for "--{flag}" flag: time: invalid duration "{text}"'
        )
    return sign * total


_SIZE = re.compile(r"^(\d+)([KMGTPE]i?)?$")
_SIZES = {
    "": 1,
    "K": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}


def parse_size(flag: str, text: str) -> int:
    match = _SIZE.match(text.strip())
    if not match or (match.group(2) or "") not in _SIZES:
        raise ConfigError(f'invalid argument "{text}" for "--{flag}" flag: not a quantity of bytes')
    return int(match.group(1)) * _SIZES[match.group(2) or ""]


def parse_bool(flag: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1", "t", ""):
        return True
    if lowered in ("false", "0", "f"):
        return False
    raise ConfigError(
        f'invalid argument "{text}" for "--{flag}" flag: strconv.ParseBool: parsing "{text}": invalid syntax'
    )


def parse_int(flag: str, text: str, minimum: int = 0) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(
            f'invalid argument "{text}" for "--{flag}" flag: strconv.ParseInt: parsing "{text}": invalid syntax'
        ) from None
    if value < minimum:
        raise ConfigError(f"--{flag} must be at least {minimum}")
    return value


DEFAULT_ISSUER = "https://platform.default.svc.cluster.local"


@dataclass
class ServerConfig:
    data_dir: str = "./platform-data"
    cert_dir: str = ""
    secure_port: int = 6443
    bind_address: str = "0.0.0.0"
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    client_ca_file: str = ""
    token_auth_file: str = ""
    requestheader_client_ca_file: str = ""
    requestheader_allowed_names: tuple[str, ...] = ()
    requestheader_username_headers: tuple[str, ...] = ()
    requestheader_uid_headers: tuple[str, ...] = ()
    requestheader_group_headers: tuple[str, ...] = ()
    requestheader_extra_headers_prefix: tuple[str, ...] = ()
    authentication_token_webhook_config_file: str = ""
    authentication_token_webhook_cache_ttl: float = 120.0
    authentication_token_webhook_version: str = "v1beta1"
    service_account_signing_key_file: str = ""
    service_account_key_files: tuple[str, ...] = ()
    service_account_issuers: tuple[str, ...] = (DEFAULT_ISSUER,)
    api_audiences: tuple[str, ...] = ()  # empty: the issuers
    service_account_lookup: bool = True
    service_account_max_token_expiration: float = 0.0
    enable_bootstrap_token_auth: bool = False
    authorization_policy_file: str = ""
    authorization_webhook_config_file: str = ""
    authorization_webhook_version: str = "v1beta1"
    authorization_webhook_authorized_ttl: float = 300.0
    authorization_webhook_unauthorized_ttl: float = 30.0
    oidc: OIDCOptions | None = None
    authentication_config: str = ""
    oidc_ca_file: str = ""
    anonymous_auth: bool = True
    authorization_modes: list[str] = field(default_factory=lambda: ["AlwaysAllow"])
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    request_timeout: float = 60.0
    livez_grace_period: float = 0.0
    shutdown_delay: float = 0.0
    service_cluster_ip_range: str = "10.0.0.0/24"
    lmdb_map_size: int = 8 * 2**30
    history_window: float = 300.0
    # Paths left to anonymous requests when anonymous access is otherwise off (AlwaysAllow).
    anonymous_paths: tuple[str, ...] | None = None
    controllers: frozenset[str] = frozenset(CONTROLLERS.values())

    @property
    def embedded_pki(self) -> bool:
        """No serving certificate given: create (or reuse) our own CA and certificates."""
        return not self.tls_cert_file

    @property
    def kubeconfig_path(self) -> str:
        return os.path.join(self.data_dir, "admin.kubeconfig")

    @property
    def server_url(self) -> str:
        host = self.bind_address
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"https://{host}:{self.secure_port}"


def from_flags(flags: dict[str, str | None]) -> ServerConfig:
    """Build and validate a ServerConfig from raw flag values (None: not given)."""
    cfg = ServerConfig()

    def given(name: str) -> str | None:
        return flags.get(name)

    if given("data-dir"):
        cfg.data_dir = str(given("data-dir"))
    cfg.cert_dir = given("cert-dir") or os.path.join(cfg.data_dir, "pki")
    if given("secure-port") is not None:
        cfg.secure_port = parse_int("secure-port", str(given("secure-port")), 0)
        if cfg.secure_port > 65535:
            raise ConfigError("--secure-port must be between 0 and 65535, inclusive")
    if given("bind-address") is not None:
        try:
            cfg.bind_address = str(ipaddress.ip_address(str(given("bind-address"))))
        except ValueError:
            raise ConfigError(
                f'invalid argument "{given("bind-address")}" for "--bind-address" flag: failed to parse IP'
            ) from None
    cfg.tls_cert_file = given("tls-cert-file") or ""
    cfg.tls_private_key_file = given("tls-private-key-file") or ""
    if bool(cfg.tls_cert_file) != bool(cfg.tls_private_key_file):
        raise ConfigError("--tls-cert-file and --tls-private-key-file must be given together")
    for name in (
        "tls-cert-file",
        "tls-private-key-file",
        "client-ca-file",
        "token-auth-file",
        "requestheader-client-ca-file",
        "authentication-token-webhook-config-file",
    ):
        path = given(name)
        if path and not os.path.isfile(path):
            raise ConfigError(f"--{name}: {path}: no such file")
    cfg.client_ca_file = given("client-ca-file") or ""
    cfg.token_auth_file = given("token-auth-file") or ""
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
    if given("authorization-mode") is not None:
        cfg.authorization_modes = _modes(str(given("authorization-mode")))
    for name, attr in (
        ("max-requests-inflight", "max_requests_inflight"),
        ("max-mutating-requests-inflight", "max_mutating_requests_inflight"),
    ):
        if given(name) is not None:
            setattr(cfg, attr, parse_int(name, str(given(name))))
    for name, attr in (
        ("request-timeout", "request_timeout"),
        ("livez-grace-period", "livez_grace_period"),
        ("shutdown-delay-duration", "shutdown_delay"),
        ("etcd-compaction-interval", "history_window"),
    ):
        if given(name) is not None:
            value = parse_duration(name, str(given(name)))
            if value < 0:
                raise ConfigError(f"--{name} can not be negative")
            setattr(cfg, attr, value)
    if cfg.request_timeout <= 0:
        raise ConfigError("--request-timeout must be greater than 0")
    if given("service-cluster-ip-range") is not None:
        cfg.service_cluster_ip_range = _cidr(str(given("service-cluster-ip-range")))
    if given("controllers") is not None:
        cfg.controllers = _controllers(str(given("controllers")))
    if given("lmdb-map-size") is not None:
        cfg.lmdb_map_size = parse_size("lmdb-map-size", str(given("lmdb-map-size")))
    _authentication_config(cfg, given)
    cfg.authorization_policy_file = given("authorization-policy-file") or ""
    if "ABAC" in cfg.authorization_modes:
        if not cfg.authorization_policy_file:
            raise ConfigError("authorization-mode ABAC's authorization policy file not passed")
        try:
            abac.load_policies(cfg.authorization_policy_file)
        except (abac.PolicyError, OSError) as e:
            raise ConfigError(f"--authorization-policy-file: {e}") from None
    _authorization_webhook(cfg, given)
    if cfg.authorization_policy_file and "ABAC" not in cfg.authorization_modes:
        raise ConfigError("cannot specify --authorization-policy-file without mode ABAC")
    if cfg.anonymous_auth and "AlwaysAllow" in cfg.authorization_modes:
        # kube turns anonymous access off under AlwaysAllow; health stays public.
        cfg.anonymous_paths = HEALTH_PATHS
    return cfg


def _request_header(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
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


def _list(text: str | None) -> tuple[str, ...]:
    return tuple(item.strip() for item in (text or "").split(",") if item.strip())


def _service_accounts(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
    cfg.service_account_signing_key_file = given("service-account-signing-key-file") or ""
    cfg.service_account_key_files = _list(given("service-account-key-file"))
    for path in (cfg.service_account_signing_key_file, *cfg.service_account_key_files):
        if path and not os.path.isfile(path):
            raise ConfigError(f"--service-account-key-file: {path}: no such file")
    if given("service-account-issuer") is not None:
        cfg.service_account_issuers = _list(given("service-account-issuer"))
        if not cfg.service_account_issuers:
            raise ConfigError("--service-account-issuer: must not be empty")
    cfg.api_audiences = _list(given("api-audiences"))
    if given("service-account-lookup") is not None:
        cfg.service_account_lookup = parse_bool(
            "service-account-lookup", str(given("service-account-lookup"))
        )
    if given("service-account-max-token-expiration") is not None:
        cfg.service_account_max_token_expiration = parse_duration(
            "service-account-max-token-expiration",
            str(given("service-account-max-token-expiration")),
        )


_OIDC_ALGS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")


def _oidc(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
    issuer, client_id = given("oidc-issuer-url") or "", given("oidc-client-id") or ""
    if not issuer and not client_id:
        return
    if not issuer or not client_id:
        raise ConfigError("oidc-issuer-url and oidc-client-id must be specified together")
    if not issuer.startswith("https://"):
        raise ConfigError(f'--oidc-issuer-url: URL scheme must be https, got "{issuer}"')
    required: dict[str, str] = {}
    for pair in _list(given("oidc-required-claim")):
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--oidc-required-claim: {pair!r} is not key=value")
        required[key] = value
    algs = _list(given("oidc-signing-algs")) or ("RS256",)
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


def _authorization_webhook(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
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


def _authentication_config(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
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


def _webhook_version(flag: str, given: Callable[[str], str | None], default: str) -> str:
    version = given(flag)
    if version is None:
        return default
    if version not in ("v1beta1", "v1"):
        raise ConfigError(
            f'--{flag}: unsupported version "{version}", supported versions are "v1beta1", "v1"'
        )
    return version


def _token_webhook(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
    flag = "authentication-token-webhook-config-file"
    cfg.authentication_token_webhook_config_file = _webhook_file(flag, given(flag) or "")
    ttl = given("authentication-token-webhook-cache-ttl")
    if ttl is not None:
        cfg.authentication_token_webhook_cache_ttl = parse_duration(
            "authentication-token-webhook-cache-ttl", ttl
        )
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
        if mode not in BUILT_MODES:
            raise ConfigError(
                f"--authorization-mode: mode {mode} is not available in this version of the "
                f"server (available: {', '.join(BUILT_MODES)})"
            )
    return modes


def _controllers(text: str) -> frozenset[str]:
    """kube-controller-manager's syntax: ``*`` (all), ``name`` (on), ``-name`` (off)."""
    on: set[str] = set()
    off: set[str] = set()
    for item in (i.strip() for i in text.split(",") if i.strip()):
        if item == "*":
            on |= set(CONTROLLERS.values())
            continue
        name = item.lstrip("-")
        if name not in CONTROLLERS:
            raise ConfigError(f'--controllers: "{name}" is not in the list of known controllers')
        (off if item.startswith("-") else on).add(CONTROLLERS[name])
    return frozenset(on - off)


def _cidr(text: str) -> str:
    ranges = [r.strip() for r in text.split(",") if r.strip()]
    if not 1 <= len(ranges) <= 2:
        raise ConfigError("--service-cluster-ip-range: takes one or two comma-separated CIDRs")
    for value in ranges:
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise ConfigError(
                f"--service-cluster-ip-range: {value!r} is not a valid CIDR"
            ) from None
    return text
