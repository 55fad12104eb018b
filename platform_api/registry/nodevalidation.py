"""Nodes as kube's ValidateNode and ValidateNodeUpdate check them.

A Node is written by its kubelet and by controllers (taints, conditions, pod CIDRs), so
most of it may change; what is checked is that each part is well formed: taints (one
per key and effect; kube names them ``metadata.taints``), pod CIDRs (one per IP family),
capacity and allocatable quantities, swap, declared features and the node annotations
kube reads.  The pod CIDRs and the provider ID, once set, and the external ID stay.
"""

from __future__ import annotations

import re
from typing import Any

from platform_api.apiextensions.schema.gojson_meta import DecodeError, parse_rfc3339
from platform_api.gotext import json_string
from platform_api.quantity import QuantityError, parse
from platform_api.registry.nodeannotations import validate_node_annotations
from platform_api.registry.quota_validation import is_integer_resource
from platform_api.timestamps import format_time
from platform_api.validation import field
from platform_api.validation.field import OMIT, FieldError, GoText, go_quote
from platform_api.validation.ips import legacy_cidr_errors, parse_cidr_sloppy
from platform_api.validation.tolerations import validate_taints

Obj = dict[str, Any]
TAINTS = "metadata.taints"
POD_CIDRS = "spec.podCIDRs"
CHANGED_CIDR = 'node updates may not change podCIDR except from "" to valid'
CHANGED_PROVIDER = 'node updates may not change providerID except from "" to valid'
MAX_FEATURE_NAME = 253
_FEATURE = re.compile(r"[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*\Z")
_FEATURE_FORMAT = (
    "must start with an UpperCamelCase segment, with subsequent segments separated by '/' "
    "(e.g., MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters "
    "and slashes"
)


def validate_node(node: Obj) -> list[FieldError]:
    """kube's ValidateNode but for ObjectMeta (the strategy's): spec and, where given,
    status."""
    spec, status = node.get("spec") or {}, node.get("status") or {}
    errs = validate_node_annotations(node["metadata"].get("annotations") or {})
    errs += validate_taints(spec.get("taints") or [], TAINTS, time_added)
    errs += _resources(status)
    errs += _swap(status)
    errs += _declared_features(status.get("declaredFeatures") or [])
    return errs + _pod_cidrs(spec.get("podCIDRs") or [])


def validate_node_update(node: Obj, old: Obj) -> list[FieldError]:
    """kube's ValidateNodeUpdate but for ObjectMeta: the parts that must stay, and
    again the annotations, quantities, declared features, addresses and taints."""
    spec, old_spec = node.get("spec") or {}, old.get("spec") or {}
    status = node.get("status") or {}
    errs = validate_node_annotations(node["metadata"].get("annotations") or {})
    errs += _resources(status)
    errs += _declared_features(status.get("declaredFeatures") or [])
    errs += _duplicate_addresses(status.get("addresses") or [])
    old_cidrs, cidrs = old_spec.get("podCIDRs") or [], spec.get("podCIDRs") or []
    if old_cidrs and len(old_cidrs) != len(cidrs):
        errs.append(field.forbidden(POD_CIDRS, CHANGED_CIDR))
    elif old_cidrs:
        errs += [
            field.forbidden(POD_CIDRS, CHANGED_CIDR)
            for a, b in zip(old_cidrs, cidrs, strict=True)
            if a != b
        ]
    provider = old_spec.get("providerID") or ""
    if provider and provider != (spec.get("providerID") or ""):
        errs.append(field.forbidden("spec.providerID", CHANGED_PROVIDER))
    errs += validate_taints(spec.get("taints") or [], TAINTS, time_added)
    if (spec.get("externalID") or "") != (old_spec.get("externalID") or ""):
        errs.append(field.forbidden("spec.externalID", "may not be updated"))
    return errs


def time_added(value: Any) -> str | None:
    """A taint's ``timeAdded`` as Go's metav1.Time writes it (UTC, to the second)."""
    if not isinstance(value, str):
        return None
    try:
        return format_time(parse_rfc3339(value))
    except DecodeError:
        return value


def _resources(status: Obj) -> list[FieldError]:
    """ValidateNodeResources: each capacity and allocatable quantity through kube's
    ValidateResourceQuantityValue (not negative; whole where the resource counts)."""
    errs: list[FieldError] = []
    for part in ("capacity", "allocatable"):
        for name, text in sorted((status.get(part) or {}).items()):
            at = f"status.{part}.{name}"
            try:
                quantity = parse(str(text))
            except QuantityError:
                continue  # the decoder refuses it before validation
            if quantity.value < 0:
                errs.append(field.invalid(at, str(quantity), field.NONNEGATIVE))
            if is_integer_resource(name) and quantity.milli_value() % 1000:
                errs.append(field.invalid(at, str(quantity), "must be an integer"))
    return errs


def _swap(status: Obj) -> list[FieldError]:
    """validateNodeSwapStatus (kube names its path under ``metadata``)."""
    capacity = (((status.get("nodeInfo") or {}).get("swap")) or {}).get("capacity")
    if isinstance(capacity, int) and capacity <= 0:
        at = "metadata.nodeSwapStatus.capacity"
        return [field.invalid(at, capacity, "must be greater than zero")]
    return []


def _declared_features(features: list[str]) -> list[FieldError]:
    """validateNodeDeclaredFeatures: well-formed names, sorted, each once."""
    errs: list[FieldError] = []
    path = "status.declaredFeatures"
    for i, feature in enumerate(features):
        if len(feature) > MAX_FEATURE_NAME:
            detail = f"must be no more than {MAX_FEATURE_NAME} characters"
        else:
            detail = "" if _FEATURE.match(feature) else _FEATURE_FORMAT
        if detail:
            message = f"invalid feature name {go_quote(feature)}: {detail}"
            errs.append(field.invalid(f"{path}[{i}]", feature, message))
        if i + 1 < len(features):
            following = features[i + 1]
            if following == feature:
                errs.append(field.duplicate(f"{path}[{i + 1}]", following))
            elif following < feature:
                detail = "list must be sorted alphabetically"
                errs.append(field.invalid(f"{path}[{i + 1}]", following, detail))
    return errs


def _duplicate_addresses(addresses: list[Obj]) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, address in enumerate(addresses):
        pair = (str(address.get("type") or ""), str(address.get("address") or ""))
        if pair in seen:
            shown = GoText(f'{{"Type":{json_string(pair[0])},"Address":{json_string(pair[1])}}}')
            errs.append(field.duplicate(f"status.addresses[{i}]", shown))
        seen.add(pair)
    return errs


def _pod_cidrs(cidrs: list[str]) -> list[FieldError]:
    """Each a CIDR (kube's legacy rules); two must be a dual-stack pair."""
    errs: list[FieldError] = []
    for i, cidr in enumerate(cidrs):
        errs += field.each(f"{POD_CIDRS}[{i}]", cidr, legacy_cidr_errors)
    if len(cidrs) < 2:
        return errs
    families: set[int] = set()
    for i, cidr in enumerate(cidrs):
        parsed = parse_cidr_sloppy(cidr)
        if parsed is None:
            detail = (
                "invalid PodCIDRs. failed to check with dual stack with error:"
                f"invalid CIDR[{i}]: <nil> (invalid CIDR address: {cidr})"
            )
            errs.append(FieldError(field.INTERNAL, POD_CIDRS, OMIT, detail))
            families.clear()
            break
        families.add(parsed[0].version)
    if families != {4, 6} or len(cidrs) > 2:
        detail = "may specify no more than one CIDR for each IP family"
        errs.append(field.invalid(POD_CIDRS, cidrs, detail))
    return errs
