"""Validation of admission webhook configurations, with kube's field paths and messages.

kube's ``pkg/apis/admissionregistration/validation`` (the v1 webhook rules): fully
qualified and unique webhook names, rules, policies, side effects, review versions,
timeouts, selectors, the client config (URL or service, as ``k8s.io/apiserver``'s
``util/webhook`` checks them; the CA bundle is not checked) and CEL match conditions.
``Options`` carries the relaxations an update gets for values the stored object already
holds, so an object stored by an older release stays writable.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from platform_api.apiextensions import validation_gojson as gojson
from platform_api.apiextensions.validation_webhook import (
    validate_webhook_service,
    validate_webhook_url,
)
from platform_api.cel import CELError
from platform_api.cel.admission import AdmissionExpressionError, compile_match_condition
from platform_api.validation import field
from platform_api.validation.field import INTERNAL, FieldError
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import (
    is_dns1035_label,
    is_dns1123_subdomain,
    is_qualified_name,
)

Obj = dict[str, Any]

ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")
FAILURE_POLICIES = ["Fail", "Ignore"]
MATCH_POLICIES = ["Equivalent", "Exact"]
NO_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
SIDE_EFFECTS = ["None", "NoneOnDryRun", "Some", "Unknown"]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
REINVOCATION_POLICIES = ["IfNeeded", "Never"]
SCOPES = ["*", "Cluster", "Namespaced"]
MAX_MATCH_CONDITIONS = 64


@dataclass(frozen=True)
class Options:
    """kube's ``validationOptions`` of the webhook configurations; the defaults are a create's."""

    ignore_match_conditions: bool = False
    require_no_side_effects: bool = True
    require_recognized_review_version: bool = True
    require_unique_names: bool = True
    allow_invalid_label_values: bool = False


def update_options(new: list[Obj], old: list[Obj]) -> Options:
    """``Validate*WebhookConfigurationUpdate``: checks relaxed for what ``old`` already holds."""
    names = [hook.get("name", "") for hook in old]
    return Options(
        ignore_match_conditions=len(new) == len(old)
        and all(
            n.get("matchConditions") == o.get("matchConditions")
            for n, o in zip(new, old, strict=True)
        ),
        require_no_side_effects=all(hook.get("sideEffects") in NO_SIDE_EFFECTS for hook in old),
        require_recognized_review_version=all(
            not hook.get("admissionReviewVersions")
            or any(v in ACCEPTED_REVIEW_VERSIONS for v in hook["admissionReviewVersions"])
            for hook in old
        ),
        require_unique_names=len(set(names)) == len(names),
        allow_invalid_label_values=any(
            validate_label_selector(hook.get(key), key)
            for hook in old
            for key in ("namespaceSelector", "objectSelector")
        ),
    )


def validate_webhooks(webhooks: list[Obj], mutating: bool, opts: Options) -> list[FieldError]:
    """Every webhook of a configuration, then its review versions and name uniqueness."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, hook in enumerate(webhooks):
        path = f"webhooks[{i}]"
        errs += _webhook(hook, mutating, opts, path)
        errs += _review_versions(
            hook.get("admissionReviewVersions") or [],
            opts.require_recognized_review_version,
            f"{path}.admissionReviewVersions",
        )
        name = hook.get("name") or ""
        if opts.require_unique_names and name:
            if name in seen:
                errs.append(field.duplicate(f"{path}.name", name))
            seen.add(name)
    return errs


def fully_qualified_name(path: str, name: str) -> list[FieldError]:
    """apimachinery's ``IsFullyQualifiedName``: a DNS subdomain of three segments or more."""
    if not name:
        return [field.required(path)]
    problems = is_dns1123_subdomain(name)
    if problems:
        return [field.invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [
            field.invalid(
                path, name, "should be a domain with at least three segments separated by dots"
            )
        ]
    return []


def _webhook(hook: Obj, mutating: bool, opts: Options, path: str) -> list[FieldError]:
    errs = fully_qualified_name(f"{path}.name", hook.get("name") or "")
    for i, rule in enumerate(hook.get("rules") or []):
        errs += validate_rule_with_operations(rule, f"{path}.rules[{i}]")
    errs += _one_of(hook, "failurePolicy", FAILURE_POLICIES, path)
    errs += _one_of(hook, "matchPolicy", MATCH_POLICIES, path)
    allowed = NO_SIDE_EFFECTS if opts.require_no_side_effects else SIDE_EFFECTS
    if hook.get("sideEffects") is None:
        errs.append(
            field.required(f"{path}.sideEffects", "must specify one of " + ", ".join(allowed))
        )
    else:
        errs += _one_of(hook, "sideEffects", allowed, path)
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and not 1 <= timeout <= 30:
        errs.append(
            field.invalid(
                f"{path}.timeoutSeconds",
                timeout,
                "the timeout value must be between 1 and 30 seconds",
            )
        )
    for key in ("namespaceSelector", "objectSelector"):
        errs += validate_label_selector(
            hook.get(key), f"{path}.{key}", opts.allow_invalid_label_values
        )
    if mutating:
        errs += _one_of(hook, "reinvocationPolicy", REINVOCATION_POLICIES, path)
    errs += _client_config(hook.get("clientConfig") or {}, f"{path}.clientConfig")
    if not opts.ignore_match_conditions:
        errs += validate_match_conditions(
            hook.get("matchConditions") or [], f"{path}.matchConditions"
        )
    return errs


def _one_of(hook: Obj, key: str, allowed: list[str], path: str) -> list[FieldError]:
    value = hook.get(key)
    if value is None or value in allowed:
        return []
    return [field.not_supported(f"{path}.{key}", gojson.text(value), allowed)]


def _client_config(config: Obj, path: str) -> list[FieldError]:
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [field.required(path, "exactly one of url or service is required")]
    if url is not None:
        return validate_webhook_url(f"{path}.url", url)
    return validate_webhook_service(f"{path}.service", service if isinstance(service, dict) else {})


def _review_versions(versions: list[str], require_known: bool, path: str) -> list[FieldError]:
    accepted = ", ".join(ACCEPTED_REVIEW_VERSIONS)
    if not versions:
        return [field.required(path, f"must specify one of {accepted}")]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(field.invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs += [field.invalid(f"{path}[{i}]", version, m) for m in is_dns1035_label(version)]
    if require_known and not any(v in ACCEPTED_REVIEW_VERSIONS for v in versions):
        errs.append(
            field.invalid(path, gojson.text(versions), f"must include at least one of {accepted}")
        )
    return errs


def _listed(values: list[Any], path: str, what: str) -> list[FieldError]:
    """Required, and ``*`` only alone: kube's checks on a rule's operations, groups and
    versions."""
    if not values:
        return [field.required(path)]
    if len(values) > 1 and "*" in values:
        message = f"if '*' is present, must not specify other {what}"
        return [field.invalid(path, gojson.text(values), message)]
    return []


def validate_rule_with_operations(rule: Obj, path: str) -> list[FieldError]:
    """kube's ``validateRuleWithOperations`` (sub-resources allowed)."""
    operations = rule.get("operations") or []
    errs = _listed(operations, f"{path}.operations", "operations")
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            errs.append(
                field.not_supported(f"{path}.operations[{i}]", gojson.text(operation), OPERATIONS)
            )
    return errs + _rule(rule, path)


def _rule(rule: Obj, path: str) -> list[FieldError]:
    groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
    errs = _listed(groups, f"{path}.apiGroups", "API groups")
    errs += _listed(versions, f"{path}.apiVersions", "API versions")
    errs += [field.required(f"{path}.apiVersions[{i}]") for i, v in enumerate(versions) if not v]
    errs += validate_resources(rule.get("resources") or [], f"{path}.resources")
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(field.not_supported(f"{path}.scope", gojson.text(scope), SCOPES))
    return errs


def validate_resources(resources: list[str], path: str) -> list[FieldError]:
    """kube's ``validateResources``: ``*``, ``*/*``, ``x/*`` and ``*/x`` may not overlap."""
    errs: list[FieldError] = []
    if not resources:
        errs.append(field.required(path))
    with_any_sub: set[str] = set()  # x/*
    any_with_sub: set[str] = set()  # */x
    double = single = plain = False
    for i, entry in enumerate(resources):
        if entry == "":
            errs.append(field.required(f"{path}[{i}]"))
            continue
        double = double or entry == "*/*"
        single = single or entry == "*"
        if "/" not in entry:
            plain = entry != "*"  # as kube: the last plain entry decides
            continue
        res, sub = entry.split("/", 1)
        if res in with_any_sub:
            errs.append(
                field.invalid(
                    f"{path}[{i}]", entry, f"if '{res}/*' is present, must not specify {entry}"
                )
            )
        if sub in any_with_sub:
            errs.append(
                field.invalid(
                    f"{path}[{i}]", entry, f"if '*/{sub}' is present, must not specify {entry}"
                )
            )
        if sub == "*":
            with_any_sub.add(res)
        if res == "*":
            any_with_sub.add(sub)
    if len(resources) > 1 and double:
        errs.append(
            field.invalid(
                path,
                gojson.text(resources),
                "if '*/*' is present, must not specify other resources",
            )
        )
    if single and plain:
        errs.append(
            field.invalid(
                path,
                gojson.text(resources),
                "if '*' is present, must not specify other resources without subresources",
            )
        )
    return errs


def validate_match_conditions(
    conditions: list[Obj], path: str, params: bool = False
) -> list[FieldError]:
    """At most 64, named by unique qualified names, each a CEL expression yielding bool
    (``params`` declared for a policy with a paramKind)."""
    errs: list[FieldError] = []
    if len(conditions) > MAX_MATCH_CONDITIONS:
        errs.append(field.too_many(path, len(conditions), MAX_MATCH_CONDITIONS))
    names: set[str] = set()
    for i, condition in enumerate(conditions):
        at = f"{path}[{i}]"
        expression = (condition.get("expression") or "").strip()
        if not expression:
            errs.append(field.required(f"{at}.expression"))
        else:
            compile_condition = functools.partial(compile_match_condition, params=params)
            errs += cel_errors(compile_condition, expression, f"{at}.expression")
        name = condition.get("name") or ""
        if not name:
            errs.append(field.required(f"{at}.name"))
        else:
            errs += [field.invalid(f"{at}.name", name, m) for m in is_qualified_name(name)]
        if name:
            if name in names:
                errs.append(field.duplicate(f"{at}.name", name))
            names.add(name)
    return errs


def cel_errors(
    compile_expression: Callable[[str], object], source: str, path: str, shown: str | None = None
) -> list[FieldError]:
    """kube's ``convertCELErrorToValidationError``: a compile failure is an Invalid value
    (``shown``, by default the source), a failure to build the program an internal error."""
    value = source if shown is None else shown
    try:
        compile_expression(source)
    except AdmissionExpressionError as e:
        if e.internal:
            return [FieldError(INTERNAL, path, field.OMIT, str(e))]
        return [field.invalid(path, value, str(e))]
    except CELError as e:
        return [field.invalid(path, value, str(e))]
    return []
