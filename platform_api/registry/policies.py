"""NetworkPolicies and HorizontalPodAutoscalers (autoscaling/v2): kube's spec rules
for the ports, peers and CIDRs of a policy, and an autoscaler's bounds, target,
metrics and scaling behavior, in kube's words and order."""

from __future__ import annotations

from platform_api.quantity import QuantityError, parse
from platform_api.registry import hpaconversion
from platform_api.registry.apps import WorkloadStrategy
from platform_api.registry.defaults import defaults
from platform_api.registry.hpametrics import (
    DESCRIBED,
    RefOptions,
    api_version_problem,
    validate_metrics,
    validate_object_reference,
)
from platform_api.registry.servicespec import port_name_errors, port_number_errors
from platform_api.registry.strategy import Obj, SpecChecked, register
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.ips import cidr_errors, parse_cidr
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.objectmeta import (
    validate_core_meta_update,
)

PROTOCOLS = ["TCP", "UDP", "SCTP"]  # kube lists these unsorted here
POLICY_TYPES = ["Ingress", "Egress"]
SELECT_POLICIES = ["Disabled", "Max", "Min"]
SCALING_POLICY_TYPES = ["Percent", "Pods"]
MAX_WINDOW_SECONDS, MAX_PERIOD_SECONDS = 3600, 1800


def validate_network_policy_spec(spec: Obj) -> list[FieldError]:
    errs = validate_label_selector(spec.get("podSelector") or {}, "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            at = f"spec.{direction}[{i}]"
            for j, port in enumerate(rule.get("ports") or []):
                errs += _policy_port(port, f"{at}.ports[{j}]")
            for j, peer in enumerate(rule.get(peers) or []):
                errs += _peer(peer, f"{at}.{peers}[{j}]")
    types: list[str] = spec.get("policyTypes") or []
    if len(types) > 2:
        return [
            *errs,
            field.invalid("spec.policyTypes", types, "may not specify more than two policyTypes"),
        ]
    for i, kind in enumerate(types):
        if kind not in POLICY_TYPES:
            errs.append(field.not_supported(f"spec.policyTypes[{i}]", kind, POLICY_TYPES))
    return errs


def _policy_port(port: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        errs.append(field.not_supported(f"{at}.protocol", protocol, PROTOCOLS))
    number, end = port.get("port"), port.get("endPort")
    if isinstance(number, int):
        errs += [field.invalid(f"{at}.port", number, m) for m in port_number_errors(number)]
        if end is not None:
            if end < number:
                detail = "must be greater than or equal to `port`"
                errs.append(field.invalid(f"{at}.endPort", number, detail))
            errs += [field.invalid(f"{at}.endPort", end, m) for m in port_number_errors(end)]
    elif isinstance(number, str):
        if end is not None:
            detail = "may not be specified when `port` is non-numeric"
            errs.append(field.invalid(f"{at}.endPort", end, detail))
        errs += [field.invalid(f"{at}.port", number, m) for m in port_name_errors(number)]
    elif end is not None:
        detail = "may not be specified when `port` is not specified"
        errs.append(field.invalid(f"{at}.endPort", end, detail))
    return errs


def _peer(peer: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            errs += validate_label_selector(peer[key], f"{at}.{key}")
    block = peer.get("ipBlock")
    if block is not None:
        count += 1
        errs += _ip_block(block, f"{at}.ipBlock")
    if count == 0:
        errs.append(field.required(at, "must specify a peer"))
    elif count > 1 and block is not None:
        errs.append(field.forbidden(at, "may not specify both ipBlock and another peer"))
    return errs


def _ip_block(block: Obj, at: str) -> list[FieldError]:
    cidr = block.get("cidr") or ""
    if not cidr:
        return [field.required(f"{at}.cidr")]
    errs = cidr_errors(cidr, f"{at}.cidr")
    network = parse_cidr(cidr)
    if network is None:
        return errs
    for i, text in enumerate(block.get("except") or []):
        where = f"{at}.except[{i}]"
        errs += cidr_errors(text, where)
        excluded = parse_cidr(text)
        if excluded is None:
            continue
        inside = excluded.version == network.version and excluded.network_address in network
        if not inside or network.prefixlen >= excluded.prefixlen:
            errs.append(field.invalid(where, text, "must be a strict subset of `cidr`"))
    return errs


def validate_autoscaler_spec(spec: Obj, old: Obj | None = None) -> list[FieldError]:
    """kube's validateHorizontalPodAutoscalerSpec, with the options its strategy derives
    from the object it replaces (``old``: its spec, on update)."""
    errs: list[FieldError] = []
    low, high = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    # HPAScaleToZero is off: zero stays allowed where the old object had it
    floor = 0 if old is not None and old.get("minReplicas") == 0 else 1
    if isinstance(low, int) and low < floor:
        why = f"must be greater than or equal to {floor}"
        errs.append(field.invalid("spec.minReplicas", low, why))
    if high == 0:
        errs.append(field.required("spec.maxReplicas", "must be set and greater than 0"))
    elif high < 0:
        errs.append(field.invalid("spec.maxReplicas", high, "must be greater than or equal to 1"))
    if isinstance(low, int) and high < low:
        detail = "must be greater than or equal to `minReplicas`"
        errs.append(field.invalid("spec.maxReplicas", high, detail))
    target = spec.get("scaleTargetRef") or {}
    errs += validate_object_reference(target, "spec.scaleTargetRef", _target_options(spec, old))
    errs += validate_metrics(spec.get("metrics") or [], "spec.metrics", low, _metric_options(old))
    behavior = spec.get("behavior") or {}
    for key in ("scaleUp", "scaleDown"):
        if isinstance(behavior.get(key), dict):
            errs += _scaling_rules(behavior[key], f"spec.behavior.{key}")
    return errs


def _target_options(spec: Obj, old: Obj | None) -> RefOptions:
    """An update that keeps the target's apiVersion and kind is not checked again; a
    ReplicationController (core, no group) may name none."""
    target, before = spec.get("scaleTargetRef") or {}, (old or {}).get("scaleTargetRef") or {}
    same = old is not None and all(target.get(k) == before.get(k) for k in ("apiVersion", "kind"))
    if same:
        return RefOptions(allow_invalid_version=True)
    return RefOptions(allow_empty_group=target.get("kind") == "ReplicationController")


def _metric_options(old: Obj | None) -> RefOptions:
    """Object metrics whose apiVersion was already invalid stay allowed to be."""
    for metric in (old or {}).get("metrics") or []:
        ref = ((metric or {}).get("object") or {}).get("describedObject")
        invalid = ref is not None and api_version_problem(ref.get("apiVersion") or "", DESCRIBED)
        if metric.get("type") == "Object" and invalid:
            return RefOptions(allow_empty_group=True, allow_invalid_version=True)
    return DESCRIBED


def _scaling_rules(rules: Obj, at: str) -> list[FieldError]:
    """kube's validateScalingRules: a window of at most an hour, a known select policy,
    at least one policy, each a known type with a positive value over at most half an
    hour, and a tolerance that is not negative."""
    errs: list[FieldError] = []
    window = rules.get("stabilizationWindowSeconds")
    if isinstance(window, int):
        if window < 0:
            why = "must be greater than or equal to zero"
            errs.append(field.invalid(f"{at}.stabilizationWindowSeconds", window, why))
        if window > MAX_WINDOW_SECONDS:
            why = f"must be less than or equal to {MAX_WINDOW_SECONDS}"
            errs.append(field.invalid(f"{at}.stabilizationWindowSeconds", window, why))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        errs.append(field.not_supported(f"{at}.selectPolicy", select, SELECT_POLICIES))
    policies = rules.get("policies") or []
    if not policies:
        errs.append(field.required(f"{at}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        errs += _scaling_policy(policy if isinstance(policy, dict) else {}, f"{at}.policies[{i}]")
    tolerance = rules.get("tolerance")
    try:
        quantity = None if tolerance is None else parse(str(tolerance))
    except QuantityError:
        quantity = None  # the decoder refuses what is no quantity
    if quantity is not None and quantity.value < 0:
        errs.append(field.invalid(f"{at}.tolerance", str(quantity), field.NONNEGATIVE))
    return errs


def _scaling_policy(policy: Obj, at: str) -> list[FieldError]:
    kind = policy.get("type", "")
    errs: list[FieldError] = []
    if kind not in SCALING_POLICY_TYPES:
        errs.append(field.not_supported(f"{at}.type", kind, SCALING_POLICY_TYPES))
    value, period = policy.get("value") or 0, policy.get("periodSeconds") or 0
    if value <= 0:
        errs.append(field.invalid(f"{at}.value", value, "must be greater than zero"))
    if period <= 0:
        errs.append(field.invalid(f"{at}.periodSeconds", period, "must be greater than zero"))
    if period > MAX_PERIOD_SECONDS:
        why = f"must be less than or equal to {MAX_PERIOD_SECONDS}"
        errs.append(field.invalid(f"{at}.periodSeconds", period, why))
    return errs


@defaults("networking.platform.io", "NetworkPolicy")
def default_network_policy(obj: Obj) -> None:
    """kube's SetDefaults_NetworkPolicy(Port): a port's protocol is TCP, and a policy
    naming no policyTypes is an Ingress one (and Egress too when it has egress rules).
    The spec is a Go struct: one the body leaves out is defaulted too."""
    if obj.get("spec") is None:
        obj["spec"] = {}
    spec = obj["spec"]
    if not isinstance(spec, dict):
        return
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or []:
            for port in (rule.get("ports") or []) if isinstance(rule, dict) else []:
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


@register("networking.platform.io", "NetworkPolicy")
class NetworkPolicyStrategy(SpecChecked, WorkloadStrategy):
    check = staticmethod(validate_network_policy_spec)


@register("autoscaling", "HorizontalPodAutoscaler")
class AutoscalerStrategy(WorkloadStrategy):
    """Both served versions are validated in the stored form (v2), as kube validates
    its internal one: a v1 request's errors name v2's paths."""

    tracks_generation = False  # kube's HPA strategy leaves metadata.generation alone
    initial_status: Obj | None = {"currentMetrics": None, "desiredReplicas": 0}

    def validate(self, obj: Obj) -> list[FieldError]:
        stored = _stored_form(obj)
        return super().validate(stored) + validate_autoscaler_spec(stored.get("spec") or {})

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        new, old = _stored_form(new), _stored_form(old)
        errs = super().validate_update(new, old)
        return errs + validate_autoscaler_spec(new.get("spec") or {}, old.get("spec") or {})

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's ValidateHorizontalPodAutoscalerStatusUpdate: replica counts that are
        not negative."""
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        status = _stored_form(new).get("status") or {}
        for key in ("currentReplicas", "desiredReplicas"):
            errs += field.nonnegative(f"status.{key}", status.get(key))
        return errs


defaults("autoscaling", "HorizontalPodAutoscaler")(hpaconversion.default_autoscaler)


def _stored_form(obj: Obj) -> Obj:
    return hpaconversion.to_v2(obj) if obj.get("apiVersion") == "autoscaling/v1" else obj
