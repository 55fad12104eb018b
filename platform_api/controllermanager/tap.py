"""``twistd platform-controller-manager``: kube-controller-manager's flags, names and wording."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from twisted.application.service import IService

from platform_api import timers
from platform_api.apiserver.flagoptions import FlagOptions, parameters
from platform_api.apiserver.flagvalues import (
    LIST,
    ConfigError,
    parse_bool,
    parse_duration,
    parse_int,
)
from platform_api.authentication.serviceaccount import load_private_key
from platform_api.controllers import legacytokenoptions, registry, signingoptions
from platform_api.controllers.signingoptions import SigningOptions

FLAGS: list[tuple[str, str, str]] = [
    (
        "kubeconfig",
        "",
        "Path to kubeconfig file with authorization and master location information.",
    ),
    ("master", "", "The address of the API server (overrides any value in kubeconfig)."),
    (
        "controllers",
        "*",
        "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' "
        "enables the controller named 'foo', '-foo' disables the controller named 'foo'. "
        "Empty or '-*': none.",
    ),
    ("leader-elect", "true", "Start a leader election client and gain leadership before running."),
    (
        "enable-garbage-collector",
        "true",
        "Enables the generic garbage collector. MUST be synced with the corresponding flag of "
        "the kube-apiserver.",
    ),
    ("leader-elect-lease-duration", "15s", "How long non-leaders wait before taking over."),
    ("leader-elect-renew-deadline", "10s", "How long the leader tries to renew before giving up."),
    ("leader-elect-retry-period", "2s", "How long clients wait between attempts."),
    ("leader-elect-resource-lock", "leases", "The type of resource object used for locking."),
    ("leader-elect-resource-name", "platform-controller-manager", "The name of the Lease."),
    ("leader-elect-resource-namespace", "platform-system", "The namespace of the Lease."),
    ("secure-port", "10257", "The port on which to serve HTTPS /healthz. 0: none."),
    ("bind-address", "0.0.0.0", "The IP address on which to listen for --secure-port."),
    (
        "service-account-private-key-file",
        "",
        "Filename containing a PEM-encoded private RSA or ECDSA key used to sign service "
        "account tokens.",
    ),
    (
        "root-ca-file",
        "",
        "If set, this root certificate authority will be included in service account's "
        "token secret. This must be a valid PEM-encoded CA bundle.",
    ),
    *signingoptions.SIGNING_FLAGS,
    *legacytokenoptions.CLEANER_FLAGS,
]
# Accepted for kube's command lines and ignored: every controller here syncs one key at a time.
IGNORED = tuple(
    f"concurrent-{name}-syncs"
    for name in (
        "namespace",
        "gc",
        "serviceaccount-token",
        "resource-quota",
        "deployment",
        "replicaset",
        "rc",
        "statefulset",
        "daemonset",
        "job",
        "cron-job",
        "endpoint",
        "service",
        "ttl-after-finished",
        "horizontal-pod-autoscaler",
        "ephemeralvolume",
    )
)
BOOL_FLAGS = ("leader-elect", "enable-garbage-collector")


@dataclass
class ManagerConfig:
    kubeconfig: str = ""
    master: str = ""
    controllers: frozenset[str] = field(default_factory=registry.default_on)
    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    lock_name: str = "platform-controller-manager"
    lock_namespace: str = "platform-system"
    secure_port: int = 10257
    bind_address: str = "0.0.0.0"
    signing: SigningOptions = field(default_factory=SigningOptions)
    legacy_token_clean_up_period: float = legacytokenoptions.CLEAN_UP_PERIOD
    service_account_key: Any = None  # --service-account-private-key-file, loaded
    root_ca: bytes | None = None  # --root-ca-file (else the kubeconfig's CA)


def from_flags(flags: dict[str, str | None]) -> ManagerConfig:
    """A ManagerConfig from raw flag values (None: not given); ConfigError when invalid."""
    value = {name: flags.get(name) if flags.get(name) is not None else d for name, d, _ in FLAGS}
    cfg = ManagerConfig(kubeconfig=value["kubeconfig"] or "", master=value["master"] or "")
    try:
        cfg.controllers = registry.parse(value["controllers"] or "")
    except ValueError as e:
        raise ConfigError(f"--controllers: {e}") from None
    collect = parse_bool("enable-garbage-collector", value["enable-garbage-collector"] or "")
    cfg.controllers = registry.with_garbage_collector(cfg.controllers, collect)
    cfg.leader_elect = parse_bool("leader-elect", value["leader-elect"] or "")
    cfg.lease_duration = parse_duration(
        "leader-elect-lease-duration", value["leader-elect-lease-duration"] or ""
    )
    cfg.renew_deadline = parse_duration(
        "leader-elect-renew-deadline", value["leader-elect-renew-deadline"] or ""
    )
    cfg.retry_period = parse_duration(
        "leader-elect-retry-period", value["leader-elect-retry-period"] or ""
    )
    lock = value["leader-elect-resource-lock"]
    if lock != "leases":
        raise ConfigError(
            f'--leader-elect-resource-lock: invalid value "{lock}": only "leases" is supported'
        )
    cfg.lock_name = value["leader-elect-resource-name"] or ""
    cfg.lock_namespace = value["leader-elect-resource-namespace"] or ""
    cfg.secure_port = parse_int("secure-port", value["secure-port"] or "0")
    cfg.bind_address = value["bind-address"] or "0.0.0.0"
    cfg.signing = signingoptions.from_flags(flags.get)
    cfg.legacy_token_clean_up_period = legacytokenoptions.clean_up_period(
        flags.get("legacy-service-account-token-clean-up-period")
    )
    cfg.service_account_key, cfg.root_ca = _token_signing(value)
    if not (cfg.kubeconfig or cfg.master):
        raise ConfigError(
            "--kubeconfig or --master is required: there is no in-cluster configuration here"
        )
    if cfg.leader_elect and cfg.lease_duration <= cfg.renew_deadline:
        raise ConfigError("leaseDuration must be greater than renewDeadline")
    if cfg.leader_elect and cfg.renew_deadline <= 1.2 * cfg.retry_period:
        raise ConfigError("renewDeadline must be greater than retryPeriod*JitterFactor")
    return cfg


class Options(FlagOptions):
    longdesc = "The controllers of a platform cluster, in their own process, with leader election."
    optParameters = parameters(FLAGS) + [
        [name, None, None, "Accepted and ignored."] for name in IGNORED
    ]
    FLAGS = FLAGS
    BOOL_FLAGS = BOOL_FLAGS
    GATHERED = {"controllers": LIST}  # a slice in kube-controller-manager

    def configure(self, given: dict[str, str | None]) -> None:
        self.config = from_flags(given)


def makeService(options: Any) -> IService:
    timers.install()  # before anything imports the reactor: timers on the monotonic clock
    from platform_api.controllermanager.service import ControllerManagerService  # noqa: PLC0415

    return ControllerManagerService(options.config)


def _token_signing(value: dict[str, str | None]) -> tuple[Any, bytes | None]:
    """The key the tokens controller signs with (None: it does not run) and the CA bundle
    it puts in token Secrets, read at start as kube reads them."""
    key = None
    if value["service-account-private-key-file"]:
        path = value["service-account-private-key-file"]
        try:
            key = load_private_key(path)
        except (OSError, ValueError) as e:
            why = f"error reading key for service account token controller: {e}"
            raise ConfigError(why) from None
    root_ca = None
    if value["root-ca-file"]:
        try:
            with open(value["root-ca-file"], "rb") as f:
                root_ca = f.read()
        except OSError as e:
            why = f"error reading root-ca-file at {value['root-ca-file']}: {e}"
            raise ConfigError(why) from None
        if b"-----BEGIN CERTIFICATE-----" not in root_ca:
            raise ConfigError(
                f"error parsing root-ca-file at {value['root-ca-file']}: data does not contain "
                "any valid RSA or ECDSA certificates"
            )
    return key, root_ca
