"""StatefulSets' spec rules (kube's ValidateStatefulSetSpec and the update rule of
ValidateStatefulSetUpdate), in kube's order: management policy, update strategy, claim
retention, claim templates, counts, ordinals, service name, then the selector and a
template validated as the controller will stamp it (claim volumes in, hostname out)."""

from __future__ import annotations

from typing import Any

from platform_api.registry.claimspec import validate_claim_spec
from platform_api.registry.workloadspec import (
    Rolling,
    go_rolling,
    go_strategy,
    validate_selector_and_template,
)
from platform_api.validation import field
from platform_api.validation.field import FieldError, nonnegative
from platform_api.validation.names import is_dns1123_label

Obj = dict[str, Any]
RETENTION_POLICIES = ["Retain", "Delete"]  # kube lists them unsorted
# Its rolling update's internal struct; MaxUnavailable is a pointer (null when absent).
PARTITION_ROLLING: Rolling = (
    ("Partition", "partition", 0),
    ("MaxUnavailable", "maxUnavailable", None),
)


def validate_statefulset_spec(spec: Obj, update: bool = False) -> list[FieldError]:
    """kube's ValidateStatefulSetSpec, in its order.  An ``update`` tolerates the service
    name and claim templates stored before (both immutable)."""
    errs = _pod_management(spec.get("podManagementPolicy", ""))
    errs += _statefulset_strategy(spec.get("updateStrategy") or {})
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, dict):
        for key in ("whenDeleted", "whenScaled"):
            value = retention.get(key, "")
            if value not in RETENTION_POLICIES:
                at = f"spec.persistentVolumeClaimRetentionPolicy.{key}"
                errs.append(field.not_supported(at, value, RETENTION_POLICIES))
    claims = [c for c in spec.get("volumeClaimTemplates") or [] if isinstance(c, dict)]
    if not update:
        for i, claim in enumerate(claims):
            errs += validate_claim_spec(
                claim.get("spec") or {}, f"spec.volumeClaimTemplates[{i}].spec"
            )
    errs += nonnegative("spec.replicas", spec.get("replicas"))
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        errs += nonnegative("spec.ordinals.start", ordinals.get("start"))
    service = spec.get("serviceName") or ""
    if service and not update:
        errs += [field.invalid("spec.serviceName", service, m) for m in is_dns1123_label(service)]
    return errs + validate_selector_and_template(
        _as_validated(spec, claims), "statefulset", "StatefulSet"
    )


# What an update may change in a StatefulSet's spec (kube's ValidateStatefulSetUpdate).
_STATEFULSET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


def statefulset_changes(spec: Obj, old: Obj) -> list[FieldError]:
    """Any change outside the fields a StatefulSet's update may change is refused."""
    fixed = [key for key in {**spec, **old} if key not in _STATEFULSET_MUTABLE]
    if all(spec.get(key) == old.get(key) for key in fixed):
        return []
    why = (
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
        "'template', 'updateStrategy', 'revisionHistoryLimit', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    return [field.forbidden("spec", why)]


def _pod_management(policy: str) -> list[FieldError]:
    if not policy:
        return [field.required("spec.podManagementPolicy")]
    if policy not in ("OrderedReady", "Parallel"):
        detail = "must be 'OrderedReady' or 'Parallel'"
        return [field.invalid("spec.podManagementPolicy", policy, detail)]
    return []


def _statefulset_strategy(strategy: Obj) -> list[FieldError]:
    kind, rolling = strategy.get("type", ""), strategy.get("rollingUpdate")
    if not kind:
        return [field.required("spec.updateStrategy")]
    if kind == "OnDelete" and rolling is not None:
        detail = "only allowed for updateStrategy 'RollingUpdate'"
        return [
            field.invalid(
                "spec.updateStrategy.rollingUpdate", go_rolling(rolling, PARTITION_ROLLING), detail
            )
        ]
    if kind == "RollingUpdate" and rolling is not None:
        return nonnegative("spec.updateStrategy.rollingUpdate.partition", rolling.get("partition"))
    if kind not in ("RollingUpdate", "OnDelete"):
        detail = "must be 'RollingUpdate' or 'OnDelete'"
        return [
            field.invalid("spec.updateStrategy", go_strategy(strategy, PARTITION_ROLLING), detail)
        ]
    return []


def _as_validated(spec: Obj, claims: list[Obj]) -> Obj:
    """The spec whose template kube validates: without hostname and subdomain (the
    controller sets them), with a claim volume per claim template first (the
    template's own of those names dropped)."""
    pod = dict((spec.get("template") or {}).get("spec") or {})
    if not (pod.get("hostname") or pod.get("subdomain") or claims):
        return spec
    pod.pop("hostname", None)
    pod.pop("subdomain", None)
    names = [(c.get("metadata") or {}).get("name", "") for c in claims]
    added = [{"name": n, "persistentVolumeClaim": {"claimName": n}} for n in dict.fromkeys(names)]
    if claims:
        kept = [v for v in pod.get("volumes") or [] if (v or {}).get("name") not in names]
        pod["volumes"] = added + kept
    template = {**(spec.get("template") or {}), "spec": pod}
    return {**spec, "template": template}
