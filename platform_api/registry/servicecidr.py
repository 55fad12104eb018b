"""ServiceCIDRs and IPAddresses (networking.platform.io/v1): the ranges Services take
cluster IPs from, and one object per address handed out (kube's MultiCIDRServiceAllocator).

A ServiceCIDR holds one CIDR, or two of different families; it may later gain the second
family (single to dual stack) but never change one it has.  Its status is written only by
the controllers (``/status``), unvalidated as kube leaves it.  An IPAddress is named by
its address in canonical form and points at what holds it (``parentRef``, immutable).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from platform_api.gotext import Struct, marshal
from platform_api.registry.strategy import RESET_FOR_STATUS, GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.ips import strict_cidr_errors
from platform_api.validation.names import is_dns1123_subdomain, is_path_segment_name

GROUP = "networking.platform.io"
LABEL_IP_FAMILY = "ipaddress.platform.io/ip-family"
LABEL_MANAGED_BY = "ipaddress.platform.io/managed-by"
ALLOCATOR = "ipallocator.platform.io"  # the managed-by value of the Service IP allocator
FINALIZER = "networking.platform.io/service-cidr-finalizer"
DEFAULT_SERVICE_CIDR = "kubernetes"
IMMUTABLE = "field is immutable"
_ONE_PER_FAMILY = (
    "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"
)


def ready_condition(cidr: Obj) -> Obj | None:
    """The ServiceCIDR's Ready condition, if anything has set one."""
    for condition in (cidr.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition
    return None


def with_ready(cidr: Obj, status: str, reason: str, message: str, now: str) -> Obj:
    """``cidr`` with its Ready condition set (the others kept), for a /status write."""
    condition = {
        "type": "Ready",
        "status": status,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }
    current = dict(cidr.get("status") or {})
    kept = [c for c in current.get("conditions") or [] if c.get("type") != "Ready"]
    return {**cidr, "status": {**current, "conditions": [condition, *kept]}}


def _family(cidr: str) -> int | None:
    try:
        return ipaddress.ip_network(cidr, strict=False).version
    except ValueError:
        return None


def validate_cidrs(cidrs: list[Any]) -> list[FieldError]:
    """kube's validateServiceCIDRSpec."""
    at = "spec.cidrs"
    if not cidrs:
        return [field.required(at, "at least one CIDR required")]
    if len(cidrs) > 2:
        return [
            field.invalid(at, GoText(marshal(Struct(CIDRs=cidrs))), "may only hold up to 2 values")
        ]
    errs: list[FieldError] = []
    for i, cidr in enumerate(cidrs):
        errs += field.each(f"{at}[{i}]", cidr, strict_cidr_errors)
    if len(cidrs) == 2 and _family(cidrs[0]) is not None and _family(cidrs[0]) == _family(cidrs[1]):
        errs.append(field.invalid(at, GoText(marshal(cidrs)), _ONE_PER_FAMILY))
    return errs


def _cidrs_update(new: list[Any], old: list[Any]) -> list[FieldError]:
    """kube's ValidateServiceCIDRUpdate: only a second family may be added."""
    at = "spec.cidrs"
    if len(new) == len(old):
        return [
            field.invalid(f"{at}[{i}]", cidr, IMMUTABLE)
            for i, (cidr, was) in enumerate(zip(new, old, strict=True))
            if cidr != was
        ]
    if len(old) == 1 and len(new) == 2:
        errs = [] if new[0] == old[0] else [field.invalid(f"{at}[0]", new[0], IMMUTABLE)]
        return errs + validate_cidrs(new)
    return [field.invalid(at, GoText(marshal(new)), IMMUTABLE)]


def _cidrs(obj: Obj) -> list[Any]:
    return list((obj.get("spec") or {}).get("cidrs") or [])


def _go_condition(condition: Any) -> Any:
    """A metav1.Condition as Go writes it: its required fields present, in order."""
    if not isinstance(condition, dict):
        return condition
    out = {"type": condition.get("type", ""), "status": condition.get("status", "")}
    if condition.get("observedGeneration"):
        out["observedGeneration"] = condition["observedGeneration"]
    out["lastTransitionTime"] = condition.get("lastTransitionTime")
    out["reason"] = condition.get("reason", "")
    out["message"] = condition.get("message", "")
    return out


@register(GROUP, "ServiceCIDR")
class ServiceCIDRStrategy(GenericStrategy):
    status_keeps_old_metadata: tuple[str, ...] = RESET_FOR_STATUS  # kube's status strategy
    initial_status: Obj = {}

    def canonicalize(self, obj: Obj) -> None:
        status = obj.get("status")
        if isinstance(status, dict) and isinstance(status.get("conditions"), list):
            status["conditions"] = [_go_condition(c) for c in status["conditions"]]

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_cidrs(_cidrs(obj))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return super().validate_update(new, old) + _cidrs_update(_cidrs(new), _cidrs(old))


def _parent_ref(ref: Any) -> list[FieldError]:
    """kube's validateIPAddressParentReference."""
    at = "spec.parentRef"
    if not isinstance(ref, dict):
        return [field.required(at)]
    errs: list[FieldError] = []
    if ref.get("group"):
        errs += field.each(f"{at}.group", ref["group"], is_dns1123_subdomain)
    for key in ("resource", "name"):
        if not ref.get(key):
            errs.append(field.required(f"{at}.{key}"))
        else:
            errs += field.each(f"{at}.{key}", ref[key], is_path_segment_name)
    if ref.get("namespace"):
        errs += field.each(f"{at}.namespace", ref["namespace"], is_path_segment_name)
    return errs


def _go_ref(ref: Any) -> GoText:
    """A parentRef as kube's immutability message prints it: the internal Go struct."""
    if not isinstance(ref, dict):
        return GoText("null")
    keys = ("Group", "Resource", "Namespace", "Name")
    return GoText(marshal(Struct({k: ref.get(k.lower(), "") for k in keys})))


def _ref(obj: Obj) -> Any:
    return (obj.get("spec") or {}).get("parentRef")


@register(GROUP, "IPAddress")
class IPAddressStrategy(GenericStrategy):
    update_meta_checks = "UC"
    generates_names = False  # kube's: a generateName is the name, as it is

    def canonicalize(self, obj: Obj) -> None:
        ref = _ref(obj)
        if isinstance(ref, dict) and ref.get("group") == "":
            del ref["group"]  # omitempty

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + _parent_ref(_ref(obj))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        # kube's strategy validates the new object whole, then what may not change
        errs = super().validate_update(new, old) + _parent_ref(_ref(new))
        if _ref(new) != _ref(old):
            errs.append(field.invalid("spec.parentRef", _go_ref(_ref(new)), IMMUTABLE))
        return errs
