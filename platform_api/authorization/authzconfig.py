"""``--authorization-config``: AuthorizationConfiguration (apiserver.config.platform.io).

The authorizer chain as a file: built-in types by name, and Webhook entries with their
connection, cache TTLs, timeout, failure policy and CEL match conditions.  Loading
decodes strictly (an unknown field is an error), applies kube's defaults and validates
with kube's field paths and messages, so a file kube-apiserver refuses is refused here
with the same text.  Match conditions are compiled and type-checked once, here.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from platform_api.apiserver.flagvalues import ConfigError as FlagError
from platform_api.apiserver.flagvalues import parse_duration
from platform_api.client import kubeconfig
from platform_api.codec.configfile import ConfigKind, DecodeError
from platform_api.goduration import format_duration
from platform_api.validation import field as fe
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.names import is_dns1123_subdomain

if TYPE_CHECKING:  # CEL loads with the first match condition: flags parse without one
    from platform_api.cel import Environment, Program

GROUP = "apiserver.config.platform.io"
KIND = "AuthorizationConfiguration"
API_VERSIONS = tuple(f"{GROUP}/{v}" for v in ("v1", "v1beta1", "v1alpha1"))
# kube-apiserver's authorization modes are the known types; only Webhook may repeat.
TYPES = ("AlwaysAllow", "AlwaysDeny", "ABAC", "Webhook", "RBAC", "Node")
WEBHOOK = "Webhook"
KUBECONFIG_FILE, IN_CLUSTER = "KubeConfigFile", "InClusterConfig"
MAX_MATCH_CONDITIONS = 64
MAX_TIMEOUT = 30.0
_FIELDS = {
    "": {"apiVersion", "kind", "authorizers"},
    "authorizers": {"type", "name", "webhook"},
    "webhook": {
        *("authorizedTTL", "unauthorizedTTL", "timeout", "failurePolicy", "connectionInfo"),
        *("cacheAuthorizedRequests", "cacheUnauthorizedRequests", "matchConditions"),
        *("subjectAccessReviewVersion", "matchConditionSubjectAccessReviewVersion"),
    },
    "connectionInfo": {"type", "kubeConfigFile"},
    "matchConditions": {"expression"},
}
SCHEMA = ConfigKind(KIND, API_VERSIONS, _FIELDS)


class ConfigError(ValueError):
    pass


@dataclass
class MatchCondition:
    expression: str
    program: Program | None = field(default=None, compare=False, repr=False)


@dataclass
class WebhookConfig:
    """One webhook's settings; durations in seconds, ``None`` where the file left it out."""

    timeout: float = 0.0
    subject_access_review_version: str = ""
    match_condition_version: str = ""
    failure_policy: str = ""
    connection_type: str = ""
    kubeconfig_file: str | None = None
    authorized_ttl: float = 300.0
    unauthorized_ttl: float = 30.0
    cache_authorized: bool = True
    cache_unauthorized: bool = True
    match_conditions: list[MatchCondition] = field(default_factory=list)
    connection: kubeconfig.Connection | None = field(default=None, compare=False, repr=False)

    @property
    def programs(self) -> list[Program]:
        return [c.program for c in self.match_conditions if c.program is not None]


@dataclass
class AuthorizerConfig:
    type: str
    name: str
    webhook: WebhookConfig | None = None


@dataclass
class AuthorizationConfig:
    authorizers: list[AuthorizerConfig]

    @property
    def non_webhook_types(self) -> frozenset[str]:
        return frozenset(a.type for a in self.authorizers if a.type != WEBHOOK)


def load(path: str, required_types: frozenset[str] = frozenset()) -> AuthorizationConfig:
    """Read and validate the file; ``required_types`` must stay (kube's reload rule)."""
    with open(path, "rb") as f:
        return load_data(f.read(), required_types)


def load_data(data: bytes, required_types: frozenset[str] = frozenset()) -> AuthorizationConfig:
    try:
        config = _decode(data)
    except DecodeError as e:
        raise ConfigError(f"failed to load AuthorizationConfiguration from file: {e}") from None
    errors = validate(config)
    if errors:
        raise ConfigError(fe.aggregate(errors))
    # kube-apiserver's own rules on top of the generic validation.
    problems: list[str] = []
    for entry in config.authorizers:
        if entry.type != WEBHOOK and entry.name != entry.type.lower():
            problems.append(
                f"expected name {entry.type.lower()} for authorizer {entry.type} "
                f"instead of {entry.name}"
            )
    missing = sorted(required_types - config.non_webhook_types)
    if missing:
        problems.append(f"missing required types: [{' '.join(missing)}]")
    if problems:
        raise ConfigError(problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")
    return config


# -- strict decoding ------------------------------------------------------------------


def _decode(data: bytes) -> AuthorizationConfig:
    doc = SCHEMA.document(data, empty={"kind": KIND, "apiVersion": API_VERSIONS[0]})
    entries = SCHEMA.typed(doc.get("authorizers"), "authorizers", list, [])
    authorizers = []
    for i, item in enumerate(entries):
        at = f"authorizers[{i}]"
        entry = SCHEMA.typed(item, at, dict, {})
        hook = entry.get("webhook")
        authorizers.append(
            AuthorizerConfig(
                type=SCHEMA.field(entry, "type", at, str, ""),
                name=SCHEMA.field(entry, "name", at, str, ""),
                webhook=None if hook is None else _webhook(hook, f"{at}.webhook"),
            )
        )
    return AuthorizationConfig(authorizers)


def _duration(block: dict[str, Any], key: str, at: str, default: float) -> float:
    text = SCHEMA.field(block, key, at, str, None)
    if text is None:
        return default
    try:
        value = parse_duration(key, text)
    except FlagError:
        raise DecodeError(f'time: invalid duration "{text}"') from None
    return value or default  # kube defaults zero durations too


def _webhook(block: Any, at: str) -> WebhookConfig:
    block = SCHEMA.typed(block, at, dict, {})
    info = SCHEMA.field(block, "connectionInfo", at, dict, {})
    conditions = []
    for i, item in enumerate(SCHEMA.field(block, "matchConditions", at, list, [])):
        where = f"{at}.matchConditions[{i}]"
        conditions.append(
            MatchCondition(
                SCHEMA.field(SCHEMA.typed(item, where, dict, {}), "expression", where, str, "")
            )
        )
    return WebhookConfig(
        timeout=_duration(block, "timeout", at, 0.0),
        authorized_ttl=_duration(block, "authorizedTTL", at, 300.0),
        unauthorized_ttl=_duration(block, "unauthorizedTTL", at, 30.0),
        cache_authorized=SCHEMA.field(block, "cacheAuthorizedRequests", at, bool, True),
        cache_unauthorized=SCHEMA.field(block, "cacheUnauthorizedRequests", at, bool, True),
        subject_access_review_version=SCHEMA.field(
            block, "subjectAccessReviewVersion", at, str, ""
        ),
        match_condition_version=SCHEMA.field(
            block, "matchConditionSubjectAccessReviewVersion", at, str, ""
        ),
        failure_policy=SCHEMA.field(block, "failurePolicy", at, str, ""),
        connection_type=SCHEMA.field(info, "type", f"{at}.connectionInfo", str, ""),
        kubeconfig_file=SCHEMA.field(info, "kubeConfigFile", f"{at}.connectionInfo", str, None),
        match_conditions=conditions,
    )


# -- validation -----------------------------------------------------------------------


def validate(config: AuthorizationConfig) -> list[FieldError]:
    """kube's ValidateAuthorizationConfiguration; compiles the match conditions."""
    errs: list[FieldError] = []
    if not config.authorizers:
        errs.append(fe.required("authorizers", "at least one authorization mode must be defined"))
    types: set[str] = set()
    names: set[str] = set()
    for i, entry in enumerate(config.authorizers):
        at = f"authorizers[{i}]"
        if not entry.type:
            errs.append(fe.required(f"{at}.type"))
            continue
        if entry.type not in TYPES:
            errs.append(fe.not_supported(f"{at}.type", entry.type, sorted(TYPES)))
            continue
        if entry.type in types and entry.type != WEBHOOK:
            errs.append(fe.duplicate(f"{at}.type", entry.type))
            continue
        types.add(entry.type)
        if not entry.name:
            errs.append(fe.required(f"{at}.name"))
        elif entry.name in names:
            errs.append(fe.duplicate(f"{at}.name", entry.name))
        elif problems := is_dns1123_subdomain(entry.name):
            detail = "authorizer name is invalid: " + ", ".join(problems)
            errs.append(fe.invalid(f"{at}.name", entry.name, detail))
        names.add(entry.name)
        if entry.type == WEBHOOK:
            if entry.webhook is None:
                errs.append(fe.required(f"{at}.webhook", "required when type=Webhook"))
                continue
            errs += _validate_webhook(entry.webhook, at)  # kube's paths omit ".webhook"
        elif entry.webhook is not None:
            errs.append(
                fe.invalid(f"{at}.webhook", "non-null", "may only be specified when type=Webhook")
            )
    return errs


def _validate_webhook(hook: WebhookConfig, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if hook.timeout == 0:
        errs.append(fe.required(f"{at}.timeout"))
    elif not 0 < hook.timeout <= MAX_TIMEOUT:
        errs.append(
            fe.invalid(
                f"{at}.timeout",
                format_duration(round(hook.timeout * 1e9)),
                "must be > 0s and <= 30s",
            )
        )
    for name, ttl in (
        ("authorizedTTL", hook.authorized_ttl),
        ("unauthorizedTTL", hook.unauthorized_ttl),
    ):
        if ttl < 0:
            errs.append(
                fe.invalid(f"{at}.{name}", format_duration(round(ttl * 1e9)), "must be > 0s")
            )
    version = hook.subject_access_review_version
    if not version:
        errs.append(fe.required(f"{at}.subjectAccessReviewVersion"))
    elif version not in ("v1", "v1beta1"):
        errs.append(
            fe.not_supported(f"{at}.subjectAccessReviewVersion", version, ["v1", "v1beta1"])
        )
    version = hook.match_condition_version
    if not version and hook.match_conditions:
        errs.append(
            fe.required(
                f"{at}.matchConditionSubjectAccessReviewVersion",
                "required if match conditions are specified",
            )
        )
    elif version and version != "v1":
        errs.append(
            fe.not_supported(f"{at}.matchConditionSubjectAccessReviewVersion", version, ["v1"])
        )
    if not hook.failure_policy:
        errs.append(fe.required(f"{at}.failurePolicy"))
    elif hook.failure_policy not in ("NoOpinion", "Deny"):
        errs.append(
            fe.not_supported(f"{at}.failurePolicy", hook.failure_policy, ["NoOpinion", "Deny"])
        )
    errs += _validate_connection(hook, f"{at}.connectionInfo")
    errs += _compile_conditions(hook.match_conditions, at)
    return errs


def _validate_connection(hook: WebhookConfig, at: str) -> list[FieldError]:
    path, kind = hook.kubeconfig_file, hook.connection_type
    if not kind:
        return [fe.required(f"{at}.type")]
    if kind == IN_CLUSTER:
        if path is not None:
            detail = "can only be set when type=KubeConfigFile"
            return [fe.invalid(f"{at}.kubeConfigFile", path, detail)]
        return []
    if kind != KUBECONFIG_FILE:
        pointer = "(*string)(nil)" if path is None else "(*string)(0xc000000000)"
        shown = f'apiserver.WebhookConnectionInfo{{Type:"{kind}", KubeConfigFile:{pointer}}}'
        return [fe.not_supported(f"{at}.type", GoText(shown), [IN_CLUSTER, KUBECONFIG_FILE])]
    at = f"{at}.kubeConfigFile"
    if not path:
        return [fe.required(at)]
    if not os.path.isabs(path):
        return [fe.invalid(at, path, "must be an absolute path")]
    try:
        info = os.stat(path)
    except OSError as e:
        return [fe.invalid(at, path, f"error loading file: stat {path}: {_os_text(e)}")]
    if not stat.S_ISREG(info.st_mode):
        return [fe.invalid(at, path, "must be a regular file")]
    try:  # kube loads it when it builds the webhook; a start or reload fails the same way
        hook.connection = kubeconfig.load(path)
    except (kubeconfig.KubeconfigError, OSError, yaml.YAMLError) as e:
        return [fe.invalid(at, path, f"error loading kubeconfig: {e}")]
    return []


def _os_text(e: OSError) -> str:
    return (e.strerror or str(e)).lower()


def _compile_conditions(conditions: list[MatchCondition], at: str) -> list[FieldError]:
    if len(conditions) > MAX_MATCH_CONDITIONS:
        return [fe.too_many(f"{at}.matchConditions", len(conditions), MAX_MATCH_CONDITIONS)]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        path = f"{at}.matchConditions[{i}].expression"
        source = condition.expression
        if not source.strip():
            errs.append(fe.required(path))
            continue
        if source in seen:
            errs.append(fe.duplicate(path, source))
            continue
        seen.add(source)
        from platform_api.cel import CELError  # noqa: PLC0415

        try:
            program = _request_environment().compile(source)
        except CELError as e:
            errs.append(fe.invalid(path, source, str(e)))
            continue
        if program.return_type.upper() != "BOOL":  # kube's typed request has no dyn results
            detail = f"must evaluate to bool but got {program.return_type.lower()}"
            errs.append(fe.invalid(path, source, detail))
            continue
        condition.program = program
    return errs


@functools.cache
def _request_environment() -> Environment:
    from platform_api.cel import DYN_MAP, Environment  # noqa: PLC0415

    return Environment({"request": DYN_MAP})
