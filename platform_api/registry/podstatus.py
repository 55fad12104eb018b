"""kube's ValidatePodStatusUpdate: what a write through ``pods/status`` may say.

A kubelet (or a test standing in for one) reports addresses, conditions and container
states here; kube refuses addresses that are not IPs or not one per family, condition
types that are not qualified names, negative generations, a changed QoS class, container
states that go back from terminated under a policy that does not restart them, and
statuses that name claims or resources the pod does not have.  Messages and their order
are the reference kube-apiserver v1.36's (tests/registry/test_podstatus.py).
"""

from __future__ import annotations

from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.ips import legacy_ip_errors, parse_ip
from platform_api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
)

Obj = dict[str, Any]
_SYSTEM_CONDITIONS = ("PodScheduled", "Ready", "Initialized")
_MAX_ID = 2147483647
_HEALTH = ["Healthy", "Unhealthy", "Unknown"]
_NONNEGATIVE = "must be a non-negative integer"


def prepare_pod_status_update(new: Obj, old: Obj) -> None:
    """What kube's podStatusStrategy backfills from the stored pod: the QoS class (set at
    creation; old kubelets dropped it) and any ``observedGeneration`` left unset, the
    pod's and its conditions' (matched by type, in order)."""
    status, old_status = new.setdefault("status", {}), _dict(old.get("status"))
    if not isinstance(status, dict):
        return
    if not status.get("qosClass") and old_status.get("qosClass"):
        status["qosClass"] = old_status["qosClass"]
    if not status.get("observedGeneration") and old_status.get("observedGeneration"):
        status["observedGeneration"] = old_status["observedGeneration"]
    earlier: dict[Any, list[Any]] = {}
    for condition in _list(old_status.get("conditions")):
        earlier.setdefault(condition.get("type"), []).append(condition.get("observedGeneration"))
    for condition in _list(status.get("conditions")):
        remembered = earlier.get(condition.get("type")) or [None]
        generation = remembered.pop(0) if remembered else None
        if not condition.get("observedGeneration") and generation:
            condition["observedGeneration"] = generation


def validate_pod_status_update(new: Obj, old: Obj) -> list[FieldError]:
    """The status rules of a pod status write (object metadata is checked apart)."""
    status, old_status = _dict(new.get("status")), _dict(old.get("status"))
    spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    errs = _conditions(status.get("conditions"))
    errs += _nominated(status, old_status)
    errs += _nonnegative("status.observedGeneration", status.get("observedGeneration"))
    if status.get("qosClass", "") != old_status.get("qosClass", ""):
        errs.append(
            field.invalid("status.qosClass", status.get("qosClass", ""), "field is immutable")
        )
    errs += _transitions(status, old_status, old_spec)
    errs += _claim_statuses(status.get("resourceClaimStatuses"), spec.get("resourceClaims"))
    errs += _extended_claim(status.get("extendedResourceClaimStatus"), spec)
    errs += _pod_ips(status, old_status)
    errs += _host_ips(status, old_status)
    windows = _dict(spec.get("os")).get("name") == "windows"
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        errs += _users(_list(status.get(key)), f"status.{key}", windows)
    for key, containers in (
        ("containerStatuses", "containers"),
        ("initContainerStatuses", "initContainers"),
        ("ephemeralContainerStatuses", "ephemeralContainers"),
    ):
        errs += _allocated(_list(status.get(key)), f"status.{key}", _list(spec.get(containers)))
    return errs


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Obj]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _nonnegative(at: str, value: Any) -> list[FieldError]:
    if isinstance(value, int) and value < 0:
        return [field.invalid(at, value, _NONNEGATIVE)]
    return []


def _conditions(conditions: Any) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, condition in enumerate(_list(conditions)):
        at = f"status.conditions[{i}]"
        errs += _nonnegative(f"{at}.observedGeneration", condition.get("observedGeneration"))
        kind = condition.get("type", "")
        if kind not in _SYSTEM_CONDITIONS:  # kube names the field with a capital T
            errs += [field.invalid(f"{at}.Type", kind, m) for m in is_qualified_name(str(kind))]
    return errs


def _nominated(status: Obj, old: Obj) -> list[FieldError]:
    name = status.get("nominatedNodeName") or ""
    if not name or name == (old.get("nominatedNodeName") or ""):
        return []
    at = "status.nominatedNodeName"
    return [field.invalid(at, name, m) for m in is_dns1123_subdomain(str(name))]


def _transitions(status: Obj, old: Obj, spec: Obj) -> list[FieldError]:
    """kube's Validate(Init)ContainerStateTransition: under a policy that does not
    restart it, a terminated container stays terminated (index: the old status's)."""
    policy = spec.get("restartPolicy", "Always")
    restartable = {
        c.get("name")
        for c in _list(spec.get("initContainers"))
        if c.get("restartPolicy") == "Always"
    }
    errs: list[FieldError] = []
    for key, rule, skip in (
        ("containerStatuses", policy, set()),
        ("initContainerStatuses", policy, restartable),
        ("ephemeralContainerStatuses", "Never", set()),  # never restarted by a kubelet
    ):
        if rule == "Always":
            continue
        new_statuses = _list(status.get(key))
        for i, previous in enumerate(_list(old.get(key))):
            terminated = _dict(_dict(previous.get("state")).get("terminated"))
            if not terminated or previous.get("name") in skip:
                continue
            if terminated.get("exitCode", 0) != 0 and rule == "OnFailure":
                continue
            for current in new_statuses:
                if current.get("name") == previous.get("name") and not _dict(
                    current.get("state")
                ).get("terminated"):
                    detail = "may not be transitioned to non-terminated state"
                    errs.append(field.forbidden(f"status.{key}[{i}].state", detail))
    return errs


def _claim_statuses(statuses: Any, claims: Any) -> list[FieldError]:
    names = {c.get("name") for c in _list(claims)}
    seen: set[Any] = set()
    errs: list[FieldError] = []
    for i, entry in enumerate(_list(statuses)):
        at, name = f"status.resourceClaimStatuses[{i}]", entry.get("name", "")
        if name not in names:
            detail = "must match the name of an entry in `spec.resourceClaims`"
            errs.append(field.invalid(f"{at}.name", name, detail))
        if name in seen:
            errs.append(field.duplicate(f"{at}.name", name))
        seen.add(name)
        claim = entry.get("resourceClaimName")
        if isinstance(claim, str):
            at_claim = f"{at}.resourceClaimName"
            errs += [field.invalid(at_claim, claim, m) for m in is_dns1123_subdomain(claim)]
    return errs


def _extended_claim(claim: Any, spec: Obj) -> list[FieldError]:
    """kube's validatePodExtendedResourceClaimStatus: the claim the scheduler made for the
    pod's extended resources, each mapping to a container's request (kube names a request
    name's problems at the status's ``requestName``, not the mapping's)."""
    if not isinstance(claim, dict):
        return []
    at = "status.extendedResourceClaimStatus"
    requests = {
        c.get("name", ""): _dict(_dict(c.get("resources")).get("requests"))
        for key in ("initContainers", "containers")
        for c in _list(spec.get(key))
    }
    mappings = _list(claim.get("requestMappings"))
    errs = (
        []
        if mappings
        else [field.required(f"{at}.requestMappings", "at least one request mapping is required")]
    )
    seen: set[tuple[str, str, str]] = set()
    for i, mapping in enumerate(mappings):
        where = f"{at}.requestMappings[{i}]"
        container, resource, request = (
            str(mapping.get(k) or "") for k in ("containerName", "resourceName", "requestName")
        )
        if container not in requests:
            detail = "must match the name of an entry in spec.initContainers.name or spec.containers.name"
            errs.append(field.invalid(f"{where}.containerName", container, detail))
        elif resource not in requests[container]:
            detail = (
                "must match the extended resource name of an entry in "
                "spec.initContainers.resources.requests or spec.containers.resources.requests"
            )
            errs.append(field.invalid(f"{where}.resourceName", resource, detail))
        errs += [field.invalid(f"{at}.requestName", request, m) for m in is_dns1123_label(request)]
        if (container, resource, request) in seen:
            errs += [
                field.duplicate(f"{where}.{key}", value)
                for key, value in (
                    ("containerName", container),
                    ("resourceName", resource),
                    ("requestName", request),
                )
            ]
        seen.add((container, resource, request))
    name = str(claim.get("resourceClaimName") or "")
    if not name:
        errs.append(field.required(f"{at}.resourceClaimName"))
    errs += (
        [field.invalid(f"{at}.resourceClaimName", name, m) for m in is_dns1123_subdomain(name)]
        if name
        else []
    )
    return errs


def _pod_ips(status: Obj, old: Obj) -> list[FieldError]:
    return _ip_list(status.get("podIPs"), old.get("podIPs"), "status.podIPs")


def _host_ips(status: Obj, old: Obj) -> list[FieldError]:
    ips = _list(status.get("hostIPs"))
    if not ips:
        return []
    errs: list[FieldError] = []
    if (status.get("hostIP") or "") != (ips[0].get("ip") or ""):
        first = ips[0].get("ip", "")
        errs.append(field.invalid("status.hostIPs[0].ip", first, "must be equal to `hostIP`"))
    return errs + _ip_list(ips, old.get("hostIPs"), "status.hostIPs")


def _ip_list(entries: Any, old_entries: Any, at: str) -> list[FieldError]:
    """Each a valid IP (kube's IsValidIPForLegacyField; one already stored may stay),
    and more than one only as one of each family (IsDualStackIPStrings)."""
    ips = [str(e.get("ip", "")) for e in _list(entries)]
    kept = {e.get("ip") for e in _list(old_entries)}
    errs: list[FieldError] = []
    for i, ip in enumerate(ips):
        if ip not in kept:
            errs += [field.invalid(f"{at}[{i}]", ip, m) for m in legacy_ip_errors(ip)]
    if len(ips) > 1:
        parsed = [parse_ip(ip) for ip in ips]
        bad = next((i for i, ip in enumerate(parsed) if ip is None), None)
        if bad is not None:
            why = f"failed to check for dual stack with error:invalid IP[{bad}]: {ips[bad]}"
            errs.append(field.FieldError(field.INTERNAL, at, field.OMIT, why))
        families = {ip.version for ip in parsed if ip is not None}
        if bad is not None or len(ips) > 2 or families != {4, 6}:
            go_value = [{"IP": ip} for ip in ips]  # kube shows its internal struct
            detail = "may specify no more than one IP for each IP family"
            errs.append(field.invalid(at, go_value, detail))
    return errs


def _users(statuses: list[Obj], at: str, windows: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, entry in enumerate(statuses):
        linux = _dict(entry.get("user")).get("linux")
        if not isinstance(linux, dict):
            continue
        path = f"{at}[{i}].user.linux"
        if windows:
            errs.append(field.forbidden(path, "cannot be set for a windows pod"))
            continue
        errs += field.in_range(f"{path}.uid", linux.get("uid"), 0, _MAX_ID)
        errs += field.in_range(f"{path}.gid", linux.get("gid"), 0, _MAX_ID)
        for g, gid in enumerate(linux.get("supplementalGroups") or []):
            errs += field.in_range(f"{path}.supplementalGroups[{g}]", gid, 0, _MAX_ID)
    return errs


def _allocated(statuses: list[Obj], at: str, containers: list[Obj]) -> list[FieldError]:
    """kube's validateContainerStatusAllocatedResourcesStatus: each entry names one of
    the container's requests (or ``claim:<name>[/<request>]``), resource IDs once each."""
    by_name = {c.get("name"): c for c in containers}
    errs: list[FieldError] = []
    for i, entry in enumerate(statuses):
        container = by_name.get(entry.get("name"))
        for j, allocated in enumerate(_list(entry.get("allocatedResourcesStatus"))):
            path = f"{at}[{i}].allocatedResourcesStatus[{j}]"
            name = str(allocated.get("name", ""))
            if container is not None and name not in _resource_names(container, name):
                errs.append(field.invalid(f"{path}.name", name, _resource_detail(name)))
            ids: set[Any] = set()
            for k, resource in enumerate(_list(allocated.get("resources"))):
                health = resource.get("health", "")
                if health not in _HEALTH:
                    errs.append(
                        field.not_supported(f"{path}.resources[{k}].health", health, _HEALTH)
                    )
                rid = resource.get("resourceID", "")
                if rid in ids:
                    errs.append(field.duplicate(f"{path}.resources[{k}].resourceID", rid))
                ids.add(rid)
    return errs


def _resource_names(container: Obj, name: str) -> set[str]:
    resources = _dict(container.get("resources"))
    if name.startswith("claim:"):
        out = set()
        for claim in _list(resources.get("claims")):
            request = claim.get("request")
            out.add(f"claim:{claim.get('name')}" + (f"/{request}" if request else ""))
        return out
    return set(_dict(resources.get("requests")))


def _resource_detail(name: str) -> str:
    if name.startswith("claim:"):
        return (
            "must match one of the container's resource claims in a format "
            "'claim:<claimName>/<request>' or 'claim:<claimName>' if request is empty"
        )
    return "must match one of the container's resource requests"
