"""ResourceQuota validation (kube's ``ValidateResourceQuota``) and the resource-name rules
quota shares with pods: which names are standard, native, extended or counted in integers.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.quantity import Quantity, QuantityError, parse
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText, go_quote
from platform_api.validation.names import is_qualified_name

Obj = dict[str, Any]

NATIVE_PREFIX = "platform.io/"  # kube's ResourceDefaultNamespacePrefix
REQUESTS_PREFIX = "requests."
HUGEPAGES_PREFIX = "hugepages-"
REQUESTS_HUGEPAGES_PREFIX = "requests.hugepages-"
STANDARD_QUOTA = frozenset(
    (
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.storage",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "persistentvolumeclaims",
        "configmaps",
        "services.nodeports",
        "services.loadbalancers",
    )
)
_STANDARD = STANDARD_QUOTA | {"storage"}
_INTEGER = frozenset(
    (
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    )
)
SCOPES = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "VolumeAttributesClass",
    "CrossNamespacePodAffinity",
)
_POD_COUNT = frozenset(("pods",))
_POD_COMPUTE = frozenset(
    ("cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory")
)
_CROSS_NS = "CrossNamespacePodAffinity"
_EXISTS_ONLY = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating", _CROSS_NS)
_EXISTS_ONLY_MSG = (
    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
    "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
)
_CONFLICTING = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))


def is_native(name: str) -> bool:
    return "/" not in name or NATIVE_PREFIX in name


def is_extended(name: str) -> bool:
    """An extended resource (``example.com/gpu``): not native, not ``requests.``, and a
    qualified name once prefixed with ``requests.``."""
    if is_native(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return not is_qualified_name(REQUESTS_PREFIX + name)


def is_standard_quota(name: str) -> bool:
    return name in STANDARD_QUOTA or name.startswith((HUGEPAGES_PREFIX, REQUESTS_HUGEPAGES_PREFIX))


def is_integer_resource(name: str) -> bool:
    return name in _INTEGER or is_extended(name)


def scope_valid_for(scope: str, name: str) -> bool:
    """``IsResourceQuotaScopeValidForResource``."""
    if scope in ("Terminating", "NotTerminating", "NotBestEffort", "PriorityClass", _CROSS_NS):
        return name in _POD_COUNT or name in _POD_COMPUTE
    if scope == "BestEffort":
        return name in _POD_COUNT
    if scope == "VolumeAttributesClass":
        return name in ("persistentvolumeclaims", "requests.storage")
    return True


def _resource_name(name: str, path: str) -> list[FieldError]:
    """``ValidateResourceQuotaResourceName``."""
    errs = [field.invalid(path, name, msg) for msg in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name:
        if name not in _STANDARD and not name.startswith(
            (HUGEPAGES_PREFIX, REQUESTS_HUGEPAGES_PREFIX)
        ):
            errs.append(
                field.invalid(path, name, "must be a standard resource type or fully qualified")
            )
        if not is_standard_quota(name):
            errs.append(field.invalid(path, name, "must be a standard resource for quota"))
    return errs


def parse_list(raw: Any, kind: str = "ResourceQuota") -> dict[str, Quantity]:
    """Quantities of a hard/used map; a value that does not parse is refused as kube's
    decoder refuses it (400)."""
    out: dict[str, Quantity] = {}
    for name, value in (raw or {}).items():
        try:
            out[name] = parse(str(value))
        except QuantityError as e:
            raise errors.bad_request(
                f'{kind} in version "v1" cannot be handled as a {kind}: {e}'
            ) from None
    return out


def _resources(raw: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for name, q in parse_list(raw).items():
        at = f"{path}[{name}]"
        errs += _resource_name(name, at)
        if q.value < 0:
            errs.append(field.invalid(at, str(q), "must be greater than or equal to 0"))
        if is_integer_resource(name) and q.milli_value() % 1000:
            errs.append(field.invalid(at, str(q), "must be an integer"))
    return errs


def _scopes(spec: Obj) -> list[FieldError]:
    scopes = spec.get("scopes") or []
    hard = sorted((spec.get("hard") or {}).keys())
    errs: list[FieldError] = []
    for scope in scopes:
        if scope not in SCOPES:
            errs.append(field.invalid("spec.scopes", scopes, "unsupported scope"))
        for name in hard:
            if is_standard_quota(name) and not scope_valid_for(scope, name):
                errs.append(
                    field.invalid("spec.scopes", scopes, "unsupported scope applied to resource")
                )
    for pair in _CONFLICTING:
        if all(s in scopes for s in pair):
            errs.append(field.invalid("spec.scopes", scopes, "conflicting scopes"))
    return errs


def _go_selector(selector: Obj) -> GoText:
    """The internal ScopeSelector as kube prints it in an error (JSON, Go field names)."""
    exprs = []
    for e in selector.get("matchExpressions") or []:
        values = e.get("values")
        exprs.append(
            f'{{"ScopeName":{go_quote(str(e.get("scopeName", "")))},'
            f'"Operator":{go_quote(str(e.get("operator", "")))},'
            f'"Values":{"null" if values is None else field.render_value(values)}}}'
        )
    return GoText('{"MatchExpressions":%s}' % ("[" + ",".join(exprs) + "]" if exprs else "null"))


def _scope_selector(spec: Obj) -> list[FieldError]:
    selector = spec.get("scopeSelector")
    if selector is None:
        return []
    path = "spec.scopeSelector.matchExpressions"
    hard = sorted((spec.get("hard") or {}).keys())
    errs: list[FieldError] = []
    seen: set[str] = set()
    for req in selector.get("matchExpressions") or []:
        scope, op, values = req.get("scopeName", ""), req.get("operator", ""), req.get("values")
        if scope not in SCOPES:
            errs.append(field.invalid(f"{path}.scopeName", scope, "unsupported scope"))
        for name in hard:
            if is_standard_quota(name) and not scope_valid_for(scope, name):
                errs.append(
                    field.invalid(
                        path, _go_selector(selector), "unsupported scope applied to resource"
                    )
                )
        if scope in _EXISTS_ONLY and op != "Exists":
            errs.append(field.invalid(f"{path}.operator", op, _EXISTS_ONLY_MSG))
        errs += _operator(op, values, path)
        seen.add(scope)
    for pair in _CONFLICTING:
        if all(s in seen for s in pair):
            errs.append(field.invalid(path, spec.get("scopes"), "conflicting scopes"))
    return errs


def _operator(op: str, values: Any, path: str) -> list[FieldError]:
    if op in ("In", "NotIn"):
        if not values:
            return [
                field.required(
                    f"{path}.values",
                    "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                )
            ]
    elif op in ("Exists", "DoesNotExist"):
        if values:
            return [
                field.invalid(
                    f"{path}.values",
                    values,
                    "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                )
            ]
    else:
        return [field.invalid(f"{path}.operator", field.named(op), "not a valid selector operator")]
    return []


def validate_spec(spec: Obj) -> list[FieldError]:
    return _resources(spec.get("hard"), "spec.hard") + _scopes(spec) + _scope_selector(spec)


def validate_status(status: Obj) -> list[FieldError]:
    return _resources(status.get("hard"), "status.hard") + _resources(
        status.get("used"), "status.used"
    )


def validate_scopes_unchanged(new: Obj, old: Obj) -> list[FieldError]:
    sent = (new.get("spec") or {}).get("scopes")
    if set(sent or []) != set((old.get("spec") or {}).get("scopes") or []):
        return [field.invalid("spec.scopes", sent, "field is immutable")]  # nil is null
    return []


def create_warnings(spec: Obj) -> list[str]:
    """A request above its limit (``requests.cpu`` over ``limits.cpu``) is worth a warning."""
    hard = parse_list(spec.get("hard"))
    out = []
    for name in ("cpu", "memory", "storage", "ephemeral-storage"):
        request_name = REQUESTS_PREFIX + name
        request = hard.get(request_name)
        if request is None and name in ("cpu", "memory") and name in hard:
            request, request_name = hard[name], name
        limit = hard.get("limits." + name)
        if request is not None and limit is not None and request.value > limit.value:
            out.append(
                f"ResourceQuota {request_name} ({request}) should be less than "
                f"limits.{name} ({limit})"
            )
    return out
