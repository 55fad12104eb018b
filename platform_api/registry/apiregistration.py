"""APIService (apiregistration.platform.io): kube-aggregator's strategy, defaults and
ValidateAPIService.

An APIService names the server of one group version: ``spec.service`` absent means this
server itself (a "local" APIService, always Available), present means an aggregated
server reached through that Service.  The name must be ``<version>.<group>``; a local
one starts with kube's Available condition, and ``/status`` changes only the status.
"""

from __future__ import annotations

from typing import Any

from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import RESET_FOR_STATUS, GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1035_label, is_dns1123_subdomain
from platform_api.validation.objectmeta import validate_object_meta_update

GROUP = "apiregistration.platform.io"
KIND = "APIService"
STORE_KEY = (GROUP, "v1", "apiservices")
AVAILABLE = "Available"
LOCAL_REASON = "Local"
LOCAL_MESSAGE = "Local APIServices are always available"
_CONDITION_STATUSES = ["True", "False", "Unknown"]


def local_condition(now: str) -> Obj:
    """kube's NewLocalAvailableAPIServiceCondition."""
    return {
        "type": AVAILABLE,
        "status": "True",
        "lastTransitionTime": now,
        "reason": LOCAL_REASON,
        "message": LOCAL_MESSAGE,
    }


@defaults(GROUP, KIND)
def _apiservice(obj: Obj) -> None:
    service = (obj.get("spec") or {}).get("service")
    if isinstance(service, dict):
        service.setdefault("port", 443)  # SetDefaults_ServiceReference


def _name_errors(obj: Obj) -> list[FieldError]:
    """kube's name rule, which ValidateObjectMeta applies to a ``generateName`` too."""
    spec = obj.get("spec") or {}
    required = f"{spec.get('version', '')}.{spec.get('group', '')}"
    detail = f'must be `spec.version+"."+spec.group`: "{required}"'
    meta = obj["metadata"]
    return [
        field.invalid(f"metadata.{key}", meta.get(key, ""), detail)
        for key in ("generateName", "name")
        if (key == "name" or meta.get(key)) and meta.get(key, "") != required
    ]


def validate_spec(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    group, version = spec.get("group", ""), spec.get("version", "")
    if not group and version != "v1":
        detail = "only v1 may have an empty group and it better be legacy kube"
        errs.append(field.required("spec.group", detail))
    if group:
        errs += [field.invalid("spec.group", group, m) for m in is_dns1123_subdomain(group)]
    errs += [field.invalid("spec.version", version, m) for m in is_dns1035_label(version)]
    errs += _priority(spec, "groupPriorityMinimum", 20000)
    errs += _priority(spec, "versionPriority", 1000)
    ca_bundle, insecure = spec.get("caBundle") or "", bool(spec.get("insecureSkipTLSVerify"))
    service = spec.get("service")
    if service is None:
        if ca_bundle:
            size = f"{_decoded_length(ca_bundle)} bytes"
            errs.append(
                field.invalid("spec.caBundle", size, "local APIServices may not have a caBundle")
            )
        if insecure:
            detail = "local APIServices may not have insecureSkipTLSVerify"
            errs.append(field.invalid("spec.insecureSkipTLSVerify", insecure, detail))
        return errs
    if not service.get("namespace"):
        errs.append(field.required("spec.service.namespace"))
    if not service.get("name"):
        errs.append(field.required("spec.service.name"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        detail = "port is not valid: must be between 1 and 65535, inclusive"
        errs.append(field.invalid("spec.service.port", port, detail))
    if insecure and ca_bundle:
        detail = "may not be true if caBundle is present"
        errs.append(field.invalid("spec.insecureSkipTLSVerify", insecure, detail))
    return errs


def _priority(spec: Obj, name: str, highest: int) -> list[FieldError]:
    value = spec.get(name, 0)
    if isinstance(value, int) and 0 < value <= highest:
        return []
    return [field.invalid(f"spec.{name}", value, f"must be positive and less than {highest}")]


def _decoded_length(text: str) -> int:
    """The length of a base64 ``[]byte`` field, as Go counts the decoded bytes."""
    padding = len(text) - len(text.rstrip("="))
    return len(text) * 3 // 4 - padding


def validate_status(status: Any) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, condition in enumerate((status or {}).get("conditions") or []):
        value = condition.get("status", "")
        if value not in _CONDITION_STATUSES:
            path = f"status.conditions[{i}].status"
            errs.append(field.not_supported(path, value, _CONDITION_STATUSES))
    return errs


@register(GROUP, KIND)
class APIServiceStrategy(GenericStrategy):
    allow_unconditional_update = False
    initial_status: Obj | None = {}  # kube's PrepareForCreate: an empty status
    # kube's status strategy keeps these from the stored object
    status_keeps_old_metadata: tuple[str, ...] = RESET_FOR_STATUS

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)  # the status is cleared
        if (obj.get("spec") or {}).get("service") is None:
            created = obj["metadata"].get("creationTimestamp", "")
            obj["status"] = {"conditions": [local_condition(created)]}

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = super().validate(obj)
        # the name rule is kube's name function: after the path-segment checks of the name
        at = sum(1 for e in errs if e.field in ("metadata.generateName", "metadata.name"))
        if not any(e.field == "metadata.name" for e in errs):
            errs[at:at] = _name_errors(obj)
        return errs + validate_spec(obj.get("spec") or {})

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        # kube's ValidateAPIServiceUpdate: the update's metadata rules, then every rule
        # of a new object; a name that is not version.group cannot be kept by an update
        meta = validate_object_meta_update(new["metadata"], old["metadata"])
        return meta + self.validate(new)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        meta = validate_object_meta_update(new["metadata"], old["metadata"])
        return meta + validate_status(new.get("status"))
