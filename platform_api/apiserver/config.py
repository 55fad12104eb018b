"""The one place that maps command-line flags to configuration.

Flags keep kube-apiserver's names, defaults and value syntax (durations like ``1m30s``,
booleans as ``--flag`` or ``--flag=false``); anything wrong is a ``ConfigError`` whose
text is the one line the server prints before exiting.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from platform_api.admission import plugins as admission_plugins
from platform_api.admission.webhook.credentials import load_admission_config
from platform_api.apiserver import (
    aggregatoroptions,
    authflags,
    authzflags,
    egressselector,
    endpointoptions,
    storageoptions,
    tlsflags,
    tracingconfig,
    versionflags,
)
from platform_api.apiserver.aggregatoroptions import AggregatorOptions
from platform_api.apiserver.audit import options as audit_options
from platform_api.apiserver.browserheaders import cors_patterns, hsts_value
from platform_api.apiserver.endpointoptions import EndpointOptions
from platform_api.apiserver.features import FeatureGates
from platform_api.apiserver.flagvalues import (
    ARRAY,
    ConfigError,
    parse_bool,
    parse_duration,
    parse_int,
    parse_ip,
    parse_list,
    parse_port_range,
    parse_size,
)
from platform_api.apiserver.hiddenmetrics import validate_show_hidden
from platform_api.apiserver.runtimeconfig import ResourceConfig
from platform_api.apiserver.runtimeconfig import parse as parse_runtime_config
from platform_api.apiserver.storageoptions import StorageOptions
from platform_api.authentication.oidc import OIDCOptions
from platform_api.controllers import registry as controller_registry
from platform_api.controllers import signingoptions
from platform_api.controllers.legacytokenoptions import CLEAN_UP_PERIOD, clean_up_period
from platform_api.controllers.signingoptions import SigningOptions

if TYPE_CHECKING:  # loaded only when --tls-sni-cert-key is given (cryptography)
    from platform_api.apiserver.sni import Pair

# kube-controller-manager's names for the controllers (and old aliases): one table with
# twistd platform-controller-manager, in platform_api/controllers/registry.py.
CONTROLLERS = controller_registry.names()


DEFAULT_ISSUER = "https://platform.default.svc.cluster.local"


_ANY = -(1 << 63)  # an int64 flag kube takes whatever its value
MAX_WORKERS = 64


@dataclass
class ServerConfig:
    data_dir: str = "./platform-data"
    # Every flag given (list flags' values joined by commas), as /flagz shows them.
    flags_given: dict[str, str] = field(default_factory=dict)
    cert_dir: str = ""
    secure_port: int = 6443
    bind_address: str = "0.0.0.0"
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    tls_min_version: str = ""  # --tls-min-version: Go's name; "" is VersionTLS12
    tls_cipher_suites: tuple[str, ...] = ()  # --tls-cipher-suites: Go's names
    tls_sni_pairs: tuple[Pair, ...] = ()  # --tls-sni-cert-key, loaded once (sni.py)
    tls_curve_preferences: tuple[int, ...] = ()  # --tls-curve-preferences: Go's CurveIDs
    strict_transport_security_directives: tuple[str, ...] = ()
    disable_http2_serving: bool = False  # ALPN offers HTTP/1.1 only
    cors_allowed_origins: tuple[str, ...] = ()  # regular expressions
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
    authentication_token_cache_ttl: float = 10.0  # kube's TokenSuccessCacheTTL; 0: off
    authentication_token_webhook_version: str = "v1beta1"
    service_account_signing_key_file: str = ""
    service_account_key_files: tuple[str, ...] = ()
    service_account_signing_endpoint: str = ""  # an external JWT signer's Unix socket
    service_account_issuers: tuple[str, ...] = (DEFAULT_ISSUER,)
    service_account_jwks_uri: str = ""  # the discovery document's jwks_uri; "" is ours
    api_audiences: tuple[str, ...] = ()  # empty: the issuers
    service_account_lookup: bool = True
    service_account_max_token_expiration: float = 0.0
    service_account_extend_token_expiration: bool = True  # pods' 3607 s tokens last a year
    enable_bootstrap_token_auth: bool = False
    authorization_policy_file: str = ""
    authorization_webhook_config_file: str = ""
    authorization_webhook_version: str = "v1beta1"
    authorization_webhook_authorized_ttl: float = 300.0
    authorization_webhook_unauthorized_ttl: float = 30.0
    # --authorization-config; with it, authorization_modes lists the file's types at start.
    authorization_config: str = ""
    oidc: OIDCOptions | None = None
    authentication_config: str = ""
    oidc_ca_file: str = ""
    anonymous_auth: bool = True
    authorization_modes: list[str] = field(default_factory=lambda: ["AlwaysAllow"])
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    enable_priority_and_fairness: bool = True
    default_not_ready_toleration_seconds: int = 300  # DefaultTolerationSeconds
    default_unreachable_toleration_seconds: int = 300
    request_timeout: float = 60.0
    livez_grace_period: float = 0.0
    shutdown_delay: float = 0.0
    event_ttl: float = 3600.0  # --event-ttl: Events go this long after their last write
    workers: int = 1  # --workers: server processes on one port and data directory
    storage: StorageOptions = field(default_factory=StorageOptions)  # --storage-backend, --etcd-*
    # --proxy-client-cert-file, --proxy-client-key-file, --enable-aggregator-routing
    aggregator: AggregatorOptions = field(default_factory=AggregatorOptions)
    # --advertise-address, --endpoint-reconciler-type, --apiserver-count
    endpoints: EndpointOptions = field(default_factory=EndpointOptions)
    service_cluster_ip_range: str = "10.0.0.0/24"
    service_node_port_range: tuple[int, int] = (30000, 32767)
    kubernetes_service_node_port: int = 0  # 0: the kubernetes Service is a ClusterIP one
    allow_privileged: bool = True  # --allow-privileged (kube's default false; installers' true)
    min_request_timeout: int = 1800  # seconds: a watch lasts this to twice this long
    lmdb_map_size: int = 8 * 2**30
    # --encryption-provider-config (storage/encryption); checked here, built at start.
    encryption_provider_config: str = ""
    encryption_provider_config_automatic_reload: bool = False
    history_window: float = 300.0
    count_poll_period: float = 60.0  # --etcd-count-metric-poll-period
    # Paths left to anonymous requests when anonymous access is otherwise off (AlwaysAllow).
    anonymous_paths: tuple[str, ...] | None = None
    controllers: frozenset[str] = field(default_factory=controller_registry.default_on)
    # --enable-garbage-collector: deletes add no orphan/foregroundDeletion finalizers and
    # the garbage collector does not run (kube's genericregistry EnableGarbageCollection).
    enable_garbage_collector: bool = True
    signing: SigningOptions = field(default_factory=SigningOptions)  # --cluster-signing-*
    tracing: tracingconfig.TracingConfig | None = None  # --tracing-config-file
    legacy_token_clean_up_period: float = CLEAN_UP_PERIOD  # kube-controller-manager's flag
    enable_admission_plugins: tuple[str, ...] = ()
    disable_admission_plugins: tuple[str, ...] = ()
    # --admission-control-config-file: the webhook plugins' client credentials.
    admission_control_config_file: str = ""
    serve_upstream_groups: bool = False
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    show_hidden_metrics_for_version: str = ""  # "" or "1.35" (hiddenmetrics.py)
    audit: audit_options.AuditOptions = field(default_factory=audit_options.AuditOptions)
    # --runtime-config: the API versions and resources served.
    runtime_config: ResourceConfig = field(default_factory=ResourceConfig)

    @property
    def embedded_pki(self) -> bool:
        """No serving certificate given: create (or reuse) our own CA and certificates."""
        return not self.tls_cert_file

    @property
    def admission_plugins(self) -> tuple[str, ...]:
        """Names of the admission plugins to run, in order."""
        return admission_plugins.enabled_plugins(
            self.enable_admission_plugins, self.disable_admission_plugins
        )

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

    _serving(cfg, given)
    cfg.audit = audit_options.from_flags(given)
    cfg.storage = storageoptions.from_flags(given)
    cfg.aggregator = aggregatoroptions.from_flags(given)
    cfg.endpoints = endpointoptions.from_flags(given)
    cfg.client_ca_file = given("client-ca-file") or ""
    cfg.token_auth_file = given("token-auth-file") or ""
    authflags.authentication(cfg, given)
    authzflags.authorization(cfg, given)
    _counts_and_durations(cfg, given)
    if given("event-ttl") is not None:  # kube takes any duration; 0 or less keeps Events
        cfg.event_ttl = parse_duration("event-ttl", str(given("event-ttl")))
    if given("serve-upstream-groups") is not None:
        text = str(given("serve-upstream-groups"))
        cfg.serve_upstream_groups = parse_bool("serve-upstream-groups", text)
    if given("enable-priority-and-fairness") is not None:
        text = str(given("enable-priority-and-fairness"))
        cfg.enable_priority_and_fairness = parse_bool("enable-priority-and-fairness", text)
    seats = (cfg.max_requests_inflight, cfg.max_mutating_requests_inflight)
    if cfg.enable_priority_and_fairness and sum(seats) <= 0:
        raise ConfigError(
            f"invalid configuration: MaxRequestsInFlight={seats[0]} and "
            f"MaxMutatingRequestsInFlight={seats[1]}; they must add up to something positive"
        )
    if given("feature-gates") is not None:
        cfg.feature_gates = FeatureGates.parse(str(given("feature-gates")))
    if given("show-hidden-metrics-for-version"):
        version = str(given("show-hidden-metrics-for-version"))
        cfg.show_hidden_metrics_for_version = validate_show_hidden(version)
    if given("runtime-config"):
        cfg.runtime_config = parse_runtime_config(str(given("runtime-config")))
    if cfg.workers > MAX_WORKERS:  # each a whole server process; past the cores, no gain
        raise ConfigError(f"--workers must be at most {MAX_WORKERS}")
    if cfg.request_timeout <= 0:
        raise ConfigError("--request-timeout must be greater than 0")
    if given("service-cluster-ip-range") is not None:
        cfg.service_cluster_ip_range = _cidr(str(given("service-cluster-ip-range")))
    _services_and_watches(cfg, given)
    versionflags.check(given)
    if given("egress-selector-config-file"):
        egressselector.check(str(given("egress-selector-config-file")))  # all Direct
    if given("tracing-config-file"):
        cfg.tracing = tracingconfig.load(str(given("tracing-config-file")))
    _controllers_and_admission(cfg, given)
    if given("lmdb-map-size") is not None:
        cfg.lmdb_map_size = parse_size("lmdb-map-size", str(given("lmdb-map-size")))
    _encryption(cfg, given)
    return cfg


def _counts_and_durations(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
    """The in-flight budgets, tolerations and worker count; the timeouts and periods."""
    for name, attr, minimum in (
        ("max-requests-inflight", "max_requests_inflight", _ANY),
        ("max-mutating-requests-inflight", "max_mutating_requests_inflight", _ANY),
        ("default-not-ready-toleration-seconds", "default_not_ready_toleration_seconds", _ANY),
        ("default-unreachable-toleration-seconds", "default_unreachable_toleration_seconds", _ANY),
        ("workers", "workers", 1),
    ):
        if given(name) is not None:
            setattr(cfg, attr, parse_int(name, str(given(name)), minimum))
    for name in ("max-requests-inflight", "max-mutating-requests-inflight"):
        if getattr(cfg, name.replace("-", "_")) < 0:
            raise ConfigError(f"--{name} can not be negative value")  # kube's words
    for name, attr in (
        ("request-timeout", "request_timeout"),
        ("livez-grace-period", "livez_grace_period"),
        ("shutdown-delay-duration", "shutdown_delay"),
        ("etcd-compaction-interval", "history_window"),
        ("etcd-count-metric-poll-period", "count_poll_period"),
    ):
        if given(name) is not None:
            value = parse_duration(name, str(given(name)))
            if value < 0:
                raise ConfigError(f"--{name} can not be negative")
            setattr(cfg, attr, value)


def _controllers_and_admission(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
    """The in-server controllers and their options; the admission plugins and their
    configuration file (refused at start, as kube refuses it)."""
    if given("controllers") is not None:
        cfg.controllers = _controllers(str(given("controllers")))
    if given("enable-garbage-collector") is not None:
        text = str(given("enable-garbage-collector"))
        cfg.enable_garbage_collector = parse_bool("enable-garbage-collector", text)
    cfg.controllers = controller_registry.with_garbage_collector(
        cfg.controllers, cfg.enable_garbage_collector
    )
    cfg.signing = signingoptions.from_flags(given)
    cfg.legacy_token_clean_up_period = clean_up_period(
        given("legacy-service-account-token-clean-up-period")
    )
    cfg.enable_admission_plugins, cfg.disable_admission_plugins = admission_plugins.parse(
        given("enable-admission-plugins"), given("disable-admission-plugins")
    )
    if given("admission-control-config-file"):
        cfg.admission_control_config_file = str(given("admission-control-config-file"))
        load_admission_config(cfg.admission_control_config_file)  # refused at start, as kube


def _services_and_watches(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
    """--service-node-port-range, --kubernetes-service-node-port, --min-request-timeout
    and --allow-privileged."""
    if given("service-node-port-range") is not None:
        text = str(given("service-node-port-range"))
        cfg.service_node_port_range = parse_port_range("service-node-port-range", text)
    if given("kubernetes-service-node-port") is not None:
        text = str(given("kubernetes-service-node-port"))
        cfg.kubernetes_service_node_port = parse_int("kubernetes-service-node-port", text, _ANY)
        _check_kubernetes_node_port(cfg.kubernetes_service_node_port, cfg.service_node_port_range)
    if given("min-request-timeout") is not None:
        text = str(given("min-request-timeout"))
        cfg.min_request_timeout = parse_int("min-request-timeout", text, _ANY)
    allow = given("allow-privileged")
    if allow is not None:
        cfg.allow_privileged = parse_bool("allow-privileged", allow)


def _check_kubernetes_node_port(port: int, ports: tuple[int, int]) -> None:
    """kube's checks, its errors aggregated as its options validation prints them."""
    problems = []
    if not 0 <= port <= 65535:
        problems.append(
            f"--kubernetes-service-node-port {port} must be between 0 and 65535, inclusive. "
            "If 0, the Kubernetes master service will be of type ClusterIP"
        )
    if port > 0 and not ports[0] <= port <= ports[1]:
        low, high = ports
        problems.append(f"kubernetes service node port range {low}-{high} doesn't contain {port}")
    if problems:
        raise ConfigError(problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")


def _encryption(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
    """kube refuses a bad encryption configuration at start, with one line."""
    reload = given("encryption-provider-config-automatic-reload")
    if reload is not None:
        cfg.encryption_provider_config_automatic_reload = parse_bool(
            "encryption-provider-config-automatic-reload", reload
        )
    cfg.encryption_provider_config = given("encryption-provider-config") or ""
    if not cfg.encryption_provider_config:
        if cfg.encryption_provider_config_automatic_reload:
            raise ConfigError(
                "--encryption-provider-config-automatic-reload must be set with "
                "--encryption-provider-config"
            )
        return
    # Imported here: grpc and the ciphers load only for servers that encrypt.
    from platform_api.storage.encryption.config import EncryptionConfigError  # noqa: PLC0415
    from platform_api.storage.encryption.dynamic import check  # noqa: PLC0415

    try:
        check(cfg.encryption_provider_config, cfg.encryption_provider_config_automatic_reload)
    except EncryptionConfigError as e:
        raise ConfigError(str(e)) from None


def _serving(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
    """Where the server listens and the files it reads at start."""
    if given("data-dir"):
        cfg.data_dir = str(given("data-dir"))
    cfg.cert_dir = given("cert-dir") or os.path.join(cfg.data_dir, "pki")
    if given("secure-port") is not None:
        cfg.secure_port = parse_int("secure-port", str(given("secure-port")), 0)
        if cfg.secure_port > 65535:
            raise ConfigError("--secure-port must be between 0 and 65535, inclusive")
    if given("bind-address") is not None:
        cfg.bind_address = parse_ip("bind-address", str(given("bind-address")))
    _connection_policies(cfg, given)
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


def _connection_policies(cfg: ServerConfig, given: Callable[[str], str | None]) -> None:
    """What clients may negotiate and what browsers are told: TLS versions and suites,
    HTTP/2, HSTS and CORS, each checked in kube's words."""
    cfg.tls_min_version = tlsflags.min_version(given("tls-min-version") or "")
    cfg.tls_cipher_suites = tlsflags.cipher_suites(parse_list(given("tls-cipher-suites")))
    cfg.tls_curve_preferences = tlsflags.curve_preferences(given("tls-curve-preferences"))
    pairs = given("tls-sni-cert-key")
    given_pairs = pairs.split(ARRAY) if pairs is not None else []
    named = tlsflags.named_cert_keys(given_pairs)
    if named:  # read and checked now: a start with a bad pair fails, as kube's
        from platform_api.apiserver import sni  # noqa: PLC0415 - cryptography, when asked

        cfg.tls_sni_pairs = tuple(sni.load(pair) for pair in named)
    if given("disable-http2-serving") is not None:
        text = str(given("disable-http2-serving"))
        cfg.disable_http2_serving = parse_bool("disable-http2-serving", text)
    hsts = parse_list(given("strict-transport-security-directives"))
    hsts_value(hsts)  # checked now; the header is made when the server is built
    cfg.strict_transport_security_directives = hsts
    cfg.cors_allowed_origins = cors_patterns(parse_list(given("cors-allowed-origins")))


def _controllers(text: str) -> frozenset[str]:
    """kube-controller-manager's syntax: ``*`` (all), ``name`` (on), ``-name`` (off);
    empty or ``-*``: none (for a separate twistd platform-controller-manager)."""
    try:
        return controller_registry.parse(text)
    except ValueError as e:
        raise ConfigError(f"--controllers: {e}") from None


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
