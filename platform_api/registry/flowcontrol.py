"""FlowSchema and PriorityLevelConfiguration: kube's v1 defaults and validation.

Defaults as ``flowcontrol/v1/defaults.go`` (matchingPrecedence 1000; a limited level's
nominalConcurrencyShares 30, an exempt one's 0; lendablePercent 0; queues 64, handSize 8,
queueLengthLimit 50).  Validation follows ``flowcontrol/validation`` with kube's messages,
including the fixed specs of the mandatory ``exempt`` and ``catch-all`` objects.  The
generation counts spec changes (the config producer reads it).
"""

from __future__ import annotations

import copy
from typing import Any

from platform_api.gotext import json_string
from platform_api.registry import flowcontrol_bootstrap as bootstrap
from platform_api.registry.defaults import defaults
from platform_api.registry.flowschema_rules import validate_policy_rule
from platform_api.registry.gointernal import go_text
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.objectmeta import validate_object_meta_update

GROUP = "flowcontrol.apiserver.platform.io"
MAX_PRECEDENCE = 10000
DISTINGUISHERS = ["ByNamespace", "ByUser"]
MAX_QUEUES = 10_000_000


# Defaults as kube's decoding sets them: before field tracking, so the writer owns the
# fields they fill in (``f:matchingPrecedence``), as in kube's managedFields.
@defaults(GROUP, "FlowSchema")
def default_flow_schema(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = 1000


@defaults(GROUP, "PriorityLevelConfiguration")
def default_priority_level(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    exempt = spec.get("exempt")
    if isinstance(exempt, dict):
        exempt.setdefault("nominalConcurrencyShares", 0)
        exempt.setdefault("lendablePercent", 0)
    limited = spec.get("limited")
    if isinstance(limited, dict):
        if limited.get("nominalConcurrencyShares") is None:
            limited["nominalConcurrencyShares"] = 30
        if limited.get("lendablePercent") is None:
            limited["lendablePercent"] = 0
        queuing = (limited.get("limitResponse") or {}).get("queuing")
        if isinstance(queuing, dict):
            for key, value in (("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)):
                if not queuing.get(key):
                    queuing[key] = value


def validate_flow_schema(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    name, spec = obj["metadata"].get("name", ""), obj.get("spec") or {}
    precedence = spec.get("matchingPrecedence", 0)
    if precedence <= 0:
        errs.append(
            field.invalid("spec.matchingPrecedence", precedence, "must be a positive value")
        )
    if precedence > MAX_PRECEDENCE:
        errs.append(
            field.invalid(
                "spec.matchingPrecedence", precedence, f"must not be greater than {MAX_PRECEDENCE}"
            )
        )
    if precedence == 1 and name != "exempt":
        errs.append(
            field.invalid(
                "spec.matchingPrecedence",
                precedence,
                "only the schema named 'exempt' may have matchingPrecedence 1",
            )
        )
    method = spec.get("distinguisherMethod")
    if method is not None and method.get("type") not in ("ByNamespace", "ByUser"):
        shown = GoText(f'{{"Type":{json_string(method.get("type") or "")}}}')  # kube's struct
        errs.append(field.not_supported("spec.distinguisherMethod.type", shown, DISTINGUISHERS))
    if not (spec.get("priorityLevelConfiguration") or {}).get("name"):
        errs.append(
            field.required(
                "spec.priorityLevelConfiguration.name", "must reference a priority level"
            )
        )
    for i, rule in enumerate(spec.get("rules") or []):
        validate_policy_rule(rule, f"spec.rules[{i}]", errs)
    errs += _mandatory(name, spec, "FlowSchema")
    return errs


def _percent(value: Any, path: str, errs: list[FieldError]) -> None:
    if value is not None and not 0 <= value <= 100:
        errs.append(field.invalid(path, value, "must be between 0 and 100, inclusive"))


def validate_priority_level(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    name, spec = obj["metadata"].get("name", ""), obj.get("spec") or {}
    kind = spec.get("type", "")
    if (name == "exempt") != (kind == "Exempt"):
        errs.append(
            field.invalid("spec.type", kind, "must be 'Exempt' if and only if `name` is 'exempt'")
        )
    if kind == "Exempt":
        if spec.get("limited") is not None:
            errs.append(field.forbidden("spec.limited", "must be nil if the type is not Limited"))
        exempt = spec.get("exempt") or {}
        shares = exempt.get("nominalConcurrencyShares")
        if shares is not None and shares < 0:
            errs.append(
                field.invalid(
                    "spec.exempt.nominalConcurrencyShares", shares, "must be a non-negative integer"
                )
            )
        _percent(exempt.get("lendablePercent"), "spec.exempt.lendablePercent", errs)
    elif kind == "Limited":
        if spec.get("exempt") is not None:
            errs.append(field.forbidden("spec.exempt", "must be nil if the type is Limited"))
        if spec.get("limited") is None:
            errs.append(field.required("spec.limited", "must not be empty when type is Limited"))
        else:
            _limited(spec["limited"], errs)
    else:
        errs.append(field.not_supported("spec.type", kind, ["Exempt", "Limited"]))
    errs += _mandatory(name, spec, "PriorityLevelConfiguration")
    return errs


def _limited(limited: Obj, errs: list[FieldError]) -> None:
    """kube's ValidateLimitedPriorityLevelConfiguration: shares, the limit response,
    then the lending and borrowing percentages."""
    path = "spec.limited"
    shares = limited.get("nominalConcurrencyShares") or 0
    if shares < 0:
        why = "must be a non-negative integer"
        errs.append(field.invalid(f"{path}.nominalConcurrencyShares", shares, why))
    _limit_response(limited.get("limitResponse") or {}, f"{path}.limitResponse", errs)
    _percent(limited.get("lendablePercent"), f"{path}.lendablePercent", errs)
    borrowing = limited.get("borrowingLimitPercent")
    if borrowing is not None and borrowing < 0:
        why = "if specified, must be a non-negative integer"
        errs.append(field.invalid(f"{path}.borrowingLimitPercent", borrowing, why))


def _limit_response(response: Obj, path: str, errs: list[FieldError]) -> None:
    rtype, queuing = response.get("type", ""), response.get("queuing")
    if rtype == "Reject":
        if queuing is not None:
            why = "must be nil if limited.limitResponse.type is not Limited"
            errs.append(field.forbidden(f"{path}.queuing", why))
    elif rtype == "Queue":
        if queuing is None:
            why = "must not be empty if limited.limitResponse.type is Limited"
            errs.append(field.required(f"{path}.queuing", why))
        else:
            _queuing(queuing, f"{path}.queuing", errs)
    else:
        errs.append(field.not_supported(f"{path}.type", rtype, ["Queue", "Reject"]))


def _queuing(q: Obj, path: str, errs: list[FieldError]) -> None:
    length, queues, hand = q.get("queueLengthLimit", 0), q.get("queues", 0), q.get("handSize", 0)
    if length <= 0:
        errs.append(field.invalid(f"{path}.queueLengthLimit", length, "must be positive"))
    if queues <= 0:
        errs.append(field.invalid(f"{path}.queues", queues, "must be positive"))
    elif queues > MAX_QUEUES:
        errs.append(
            field.invalid(f"{path}.queues", queues, f"must not be greater than {MAX_QUEUES}")
        )
    if hand <= 0:
        errs.append(field.invalid(f"{path}.handSize", hand, "must be positive"))
    elif queues > 0 and hand > queues:
        errs.append(
            field.invalid(f"{path}.handSize", hand, f"should not be greater than queues ({queues})")
        )


def _mandatory(name: str, spec: Obj, kind: str) -> list[FieldError]:
    """The mandatory objects' specs are fixed (an exempt level's ``exempt`` excepted)."""
    objects = bootstrap.MANDATORY_SCHEMAS if kind == "FlowSchema" else bootstrap.MANDATORY_LEVELS
    fixed = next((o for o in objects if o["metadata"]["name"] == name), None)
    if fixed is None:
        return []
    want = copy.deepcopy(fixed)
    (default_flow_schema if kind == "FlowSchema" else default_priority_level)(want)
    have, want_spec = dict(spec), want["spec"]
    shown = go_text(f"flowcontrol.{kind}Spec", spec)  # kube prints its internal struct
    if name == "exempt" and kind != "FlowSchema":
        have["exempt"] = want_spec.get("exempt")
        if have != want_spec:
            why = f"spec of '{name}' except the 'spec.exempt' field must equal the fixed value"
            return [field.invalid("spec", shown, why)]
        return []
    if have != want_spec:
        return [field.invalid("spec", shown, f"spec of '{name}' must equal the fixed value")]
    return []


class _Strategy(GenericStrategy):
    status_writes_metadata = False  # kube's status strategy takes the old ObjectMeta whole
    tracks_generation = True
    initial_status: Obj | None = {}  # as kube's: an empty status until a controller writes

    def _check(self, obj: Obj) -> list[FieldError]:
        raise NotImplementedError

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + self._check(obj)

    # kube's Validate{FlowSchema,PriorityLevelConfiguration}Update validate the new
    # object as a create does (its metadata's update rules only in the generic checks)
    update_meta_checks = "C"

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return super().validate_update(new, old) + self._check(new)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's Validate{FlowSchema,PriorityLevelConfiguration}Status: each condition
        has a type, no type twice."""
        errs = validate_object_meta_update(new["metadata"], old["metadata"])
        conditions = (new.get("status") or {}).get("conditions")
        seen: set[Any] = set()
        for i, condition in enumerate(conditions if isinstance(conditions, list) else []):
            kind = condition.get("type", "") if isinstance(condition, dict) else ""
            if kind in seen:
                errs.append(field.duplicate(f"status.conditions[{i}].type", kind))
            seen.add(kind)
            if not kind:
                errs.append(field.required(f"status.conditions[{i}].type"))
        return errs


@register(GROUP, "FlowSchema")
class FlowSchemaStrategy(_Strategy):
    def _check(self, obj: Obj) -> list[FieldError]:
        return validate_flow_schema(obj)


@register(GROUP, "PriorityLevelConfiguration")
class PriorityLevelStrategy(_Strategy):
    def _check(self, obj: Obj) -> list[FieldError]:
        return validate_priority_level(obj)
