"""kube-apiserver's ``--audit-*`` flags: names, defaults, checks and start-up errors.

``config.from_flags`` calls ``from_flags``; the service calls ``build`` to get the
``Auditor`` (None when no policy file is given, as kube records nothing then).  The
auditor's parts are imported by ``build`` and ``install``: the worker supervisor parses
these flags too and audits nothing (twisted.web's server alone is ~45 ms of its start).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from platform_api.apiserver.audit.event import GROUP
from platform_api.apiserver.audit.logbackend import FORMATS, LogBackend
from platform_api.apiserver.audit.logbackend import MODES as LOG_MODES
from platform_api.apiserver.audit.policy import PolicyError, load_file
from platform_api.apiserver.audit.truncate import TruncateConfig, wrap
from platform_api.apiserver.audit.webhookbackend import BatchConfig, WebhookBackend
from platform_api.apiserver.flagvalues import (
    ConfigError,
    parse_bool,
    parse_duration,
    parse_int,
)
from platform_api.client import kubeconfig
from platform_api.scheme.types import outbound_group

if TYPE_CHECKING:
    from platform_api.apiserver.audit.hook import Auditor
    from platform_api.apiserver.site import Filters

Given = Callable[[str], str | None]
_ALLOWED_MODES = "batch,blocking,blocking-strict"
VERSION = "audit.k8s.io/v1"

# (flag, default shown in --help, description), appended to serverflags.FLAGS.
AUDIT_FLAGS: list[tuple[str, str, str]] = [
    ("audit-policy-file", "", "Path to the file that defines the audit policy configuration."),
    ("audit-log-path", "", "If set, all requests coming to the apiserver will be logged to "
     "this file. '-' means standard out."),
    ("audit-log-format", "json", 'Format of saved audits. "legacy" indicates 1-line text '
     'format for each event. "json" indicates structured json format. Known formats are '
     "legacy,json."),
    ("audit-log-maxage", "366", "The maximum number of days to retain old audit log files "
     "based on the timestamp encoded in their filename. Setting a value of 0 means old "
     "audit log files are not removed based on age."),
    ("audit-log-maxbackup", "100", "The maximum number of old audit log files to retain. "
     "Setting a value of 0 will mean there's no restriction on the number of files."),
    ("audit-log-maxsize", "100", "The maximum size in megabytes of the audit log file before "
     "it gets rotated. Setting to 0 disables rotation (not recommended)."),
    ("audit-log-compress", "false", "If set, the rotated log files will be compressed using "
     "gzip."),
    ("audit-log-mode", "blocking", "Strategy for sending audit events. Known modes are "
     "batch,blocking,blocking-strict (all write buffered, off the request path)."),
    ("audit-log-version", VERSION, "API group and version used for serializing audit events "
     "written to log."),
    ("audit-webhook-config-file", "", "Path to a kubeconfig formatted file that defines the "
     "audit webhook configuration."),
    ("audit-webhook-mode", "batch", "Strategy for sending audit events. Known modes are "
     "batch,blocking,blocking-strict."),
    ("audit-webhook-batch-buffer-size", "10000", "The size of the buffer to store events "
     "before batching and writing."),
    ("audit-webhook-batch-max-size", "400", "The maximum size of a batch."),
    ("audit-webhook-batch-max-wait", "30s", "The amount of time to wait before force "
     "writing the batch that hadn't reached the max size."),
    ("audit-webhook-batch-throttle-enable", "true", "Whether batching throttling is enabled."),
    ("audit-webhook-batch-throttle-qps", "10", "Maximum average number of batches per second."),
    ("audit-webhook-batch-throttle-burst", "15", "Maximum number of requests sent at the "
     "same moment if ThrottleQPS was not utilized before."),
    ("audit-webhook-initial-backoff", "10s", "The amount of time to wait before retrying "
     "the first failed request."),
    ("audit-webhook-version", VERSION, "API group and version used for serializing audit "
     "events written to webhook."),
    *(flag for plugin in ("log", "webhook") for flag in (
        (f"audit-{plugin}-truncate-enabled", "false", "Whether event and batch truncating "
         "is enabled."),
        (f"audit-{plugin}-truncate-max-batch-size", "10485760", "Maximum size of the batch "
         "sent to the underlying backend. Actual serialized size can be several hundreds of "
         "bytes greater. If a batch exceeds this limit, it is split into several batches of "
         "smaller size."),
        (f"audit-{plugin}-truncate-max-event-size", "102400", "Maximum size of the audit "
         "event sent to the underlying backend. If the size of an event is greater than this "
         "number, first request and response are removed, and if this doesn't reduce the "
         "size enough, event is discarded."),
    )),
]  # fmt: skip
BOOL_FLAGS = (
    "audit-webhook-batch-throttle-enable",
    "audit-log-compress",
    "audit-log-truncate-enabled",
    "audit-webhook-truncate-enabled",
)


@dataclass
class AuditOptions:
    policy_file: str = ""
    log_path: str = ""
    log_format: str = "json"
    log_max_age: int = 366
    log_max_backups: int = 100
    log_max_size: int = 100
    log_compress: bool = False
    log_mode: str = "blocking"
    log_truncate: TruncateConfig = field(default_factory=TruncateConfig)
    webhook_config_file: str = ""
    webhook_mode: str = "batch"
    webhook_batch: BatchConfig = field(default_factory=BatchConfig)
    webhook_truncate: TruncateConfig = field(default_factory=TruncateConfig)


def from_flags(given: Given) -> AuditOptions:
    opts = AuditOptions(
        policy_file=given("audit-policy-file") or "",
        log_path=given("audit-log-path") or "",
        webhook_config_file=given("audit-webhook-config-file") or "",
    )
    if opts.log_path:
        _log_flags(opts, given)
    if opts.webhook_config_file:
        _webhook_flags(opts, given)
    if opts.policy_file:
        try:
            load_file(opts.policy_file)  # refused at start, as kube
        except PolicyError as e:
            raise ConfigError(str(e)) from None
    return opts


def _log_flags(opts: AuditOptions, given: Given) -> None:
    opts.log_mode = _mode("log", given("audit-log-mode") or "blocking")
    opts.log_format = given("audit-log-format") or "json"
    if opts.log_format not in FORMATS:
        raise ConfigError(
            f'invalid audit log format {opts.log_format}, allowed formats are "legacy,json"'
        )
    _version(given("audit-log-version"))
    for name, attr in (
        ("maxage", "log_max_age"),
        ("maxbackup", "log_max_backups"),
        ("maxsize", "log_max_size"),
    ):
        text = given(f"audit-log-{name}")
        if text is not None:
            value = parse_int(f"audit-log-{name}", text, minimum=-(2**63))
            if value < 0:
                raise ConfigError(f"--audit-log-{name} {value} can't be a negative number")
            setattr(opts, attr, value)
    if given("audit-log-compress") is not None:
        opts.log_compress = parse_bool("audit-log-compress", str(given("audit-log-compress")))
    opts.log_truncate = _truncate("log", given)


def _truncate(plugin: str, given: Given) -> TruncateConfig:
    """kube's AuditTruncateOptions for ``plugin``, checked as its Validate checks them."""
    config = TruncateConfig()
    text = given(f"audit-{plugin}-truncate-enabled")
    if text is not None:
        config.enabled = parse_bool(f"audit-{plugin}-truncate-enabled", text)
    for name in ("max-batch-size", "max-event-size"):
        text = given(f"audit-{plugin}-truncate-{name}")
        if text is not None:
            value = parse_int(f"audit-{plugin}-truncate-{name}", text, minimum=-(2**63))
            setattr(config, name.replace("-", "_"), value)
    if config.max_event_size <= 0:
        raise ConfigError(
            f"invalid audit truncate {plugin} max event size {config.max_event_size}, "
            "must be a positive number"
        )
    if config.max_batch_size < config.max_event_size:
        raise ConfigError(
            f"invalid audit truncate {plugin} max batch size {config.max_batch_size}, "
            f"must be greater than max event size ({config.max_event_size})"
        )
    return config


def _webhook_flags(opts: AuditOptions, given: Given) -> None:
    opts.webhook_mode = _mode("webhook", given("audit-webhook-mode") or "batch")
    _version(given("audit-webhook-version"))
    batch = opts.webhook_batch
    for name, attr in (("buffer-size", "buffer_size"), ("max-size", "max_batch_size")):
        text = given(f"audit-webhook-batch-{name}")
        if text is not None:
            setattr(batch, attr, parse_int(f"audit-webhook-batch-{name}", text, -(2**63)))
    for flag, attr in (
        ("batch-max-wait", "max_batch_wait"),
        ("initial-backoff", "initial_backoff"),
    ):
        if given(f"audit-webhook-{flag}") is not None:
            value = parse_duration(f"audit-webhook-{flag}", str(given(f"audit-webhook-{flag}")))
            setattr(batch, attr, value)
    text = given("audit-webhook-batch-throttle-enable")
    if text is not None:
        batch.throttle_enable = parse_bool("audit-webhook-batch-throttle-enable", text)
    if given("audit-webhook-batch-throttle-qps") is not None:
        batch.throttle_qps = _float("audit-webhook-batch-throttle-qps", given)
    if given("audit-webhook-batch-throttle-burst") is not None:
        text = str(given("audit-webhook-batch-throttle-burst"))
        batch.throttle_burst = parse_int("audit-webhook-batch-throttle-burst", text, -(2**63))
    if opts.webhook_mode == "batch":
        _check_batch(batch)
    opts.webhook_truncate = _truncate("webhook", given)
    if opts.webhook_truncate.enabled:
        batch.max_batch_bytes = opts.webhook_truncate.max_batch_size
    _webhook_connection(opts.webhook_config_file)  # refused at start, as kube


def _webhook_connection(path: str) -> kubeconfig.Connection:
    try:
        return kubeconfig.load(path)
    except (OSError, kubeconfig.KubeconfigError) as e:
        raise ConfigError(f"initializing audit webhook: {e}") from None


def _check_batch(batch: BatchConfig) -> None:
    if batch.buffer_size <= 0:
        raise ConfigError(
            f"invalid audit batch webhook buffer size {batch.buffer_size}, "
            "must be a positive number"
        )
    if batch.max_batch_size <= 0:
        raise ConfigError(
            f"invalid audit batch webhook max batch size {batch.max_batch_size}, "
            "must be a positive number"
        )
    if batch.throttle_enable and batch.throttle_qps <= 0:
        raise ConfigError(
            f"invalid audit batch webhook throttle QPS {batch.throttle_qps:g}, "
            "must be a positive number"
        )
    if batch.throttle_enable and batch.throttle_burst <= 0:
        raise ConfigError(
            f"invalid audit batch webhook throttle burst {batch.throttle_burst}, "
            "must be a positive number"
        )


def _mode(plugin: str, mode: str) -> str:
    if mode not in LOG_MODES:
        raise ConfigError(
            f'invalid audit {plugin} mode {mode}, allowed modes are "{_ALLOWED_MODES}"'
        )
    return mode


def _version(text: str | None) -> None:
    if text and text != VERSION:
        raise ConfigError(f'invalid group version, allowed versions are ["{VERSION}"]')


def _float(name: str, given: Given) -> float:
    text = str(given(name))
    try:
        return float(text)
    except ValueError:
        raise ConfigError(
            f'invalid argument "{text}" for "--{name}" flag: strconv.ParseFloat: parsing '
            f'"{text}": invalid syntax'
        ) from None


def build(opts: AuditOptions, reactor: Any, upstream: bool = False) -> Auditor | None:
    """The Auditor for these options; None without a policy file or a backend.
    ``upstream``: --serve-upstream-groups, whose events are kube's audit.k8s.io ones."""
    from platform_api.apiserver.audit.hook import Auditor  # noqa: PLC0415

    api_version = f"{outbound_group(GROUP, upstream)}/v1"
    if not opts.policy_file or not (opts.log_path or opts.webhook_config_file):
        return None
    backends: list[Any] = []
    if opts.log_path:
        rotation = {
            "max_size_mb": opts.log_max_size,
            "max_backups": opts.log_max_backups,
            "max_age_days": opts.log_max_age,
            "compress": opts.log_compress,
        }
        log = LogBackend.open(opts.log_path, opts.log_format, reactor, **rotation)
        backends.append(wrap(log, opts.log_truncate))
    if opts.webhook_config_file:
        connection = _webhook_connection(opts.webhook_config_file)
        webhook = WebhookBackend(connection, reactor, opts.webhook_batch, api_version=api_version)
        backends.append(wrap(webhook, opts.webhook_truncate))
    return Auditor(load_file(opts.policy_file), backends, reactor.seconds, api_version)


def install(filters: Filters, auditor: Auditor | None) -> None:
    """Put the auditor in the filter chain; failed authentication is audited too."""
    from platform_api.apiserver.audit.authn import AuditedAuthenticator  # noqa: PLC0415

    filters.audit = auditor
    if auditor is not None:
        filters.authenticator = AuditedAuthenticator(filters.authenticator, auditor)
