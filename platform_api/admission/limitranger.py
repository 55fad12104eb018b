"""LimitRanger: the namespace's LimitRanges default and bound pods' and claims' resources.

kube's plugin/pkg/admission/limitranger.  Creating a pod, the mutating phase fills each
container's missing requests and limits from the ``Container`` limits' ``defaultRequest``
and ``default`` (and says so in the ``platform.io/limit-ranger`` annotation); the
validating phase holds containers, the pod as a whole and PersistentVolumeClaims to
``min``, ``max`` and ``maxLimitRequestRatio``.  Pod updates are skipped (containers'
resources cannot change but through ``resize``), and so is anything being deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext
from platform_api.quantity import MAX_MILLI_VALUE, Quantity, QuantityError, canonical, parse
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions

Obj = dict[str, Any]
Resources = dict[str, Quantity]
ANNOTATION = "platform.io/limit-ranger"
CONTAINER, POD, CLAIM = "Container", "Pod", "PersistentVolumeClaim"
POD_LEVEL_RESOURCES = ("cpu", "memory")  # what spec.resources may set (PodLevelResources on)


def quantities(resources: Obj | None) -> Resources:
    """A ResourceList as quantities; text that does not parse counts as absent."""
    out: Resources = {}
    for name, text in (resources or {}).items():
        try:
            out[name] = parse(str(text))
        except QuantityError:
            continue
    return out


def aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: de-duplicated, bracketed when several."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# -- defaults (the mutating phase) ------------------------------------------------------


def _defaults(limit_range: Obj) -> tuple[Obj, Obj]:
    """(requests, limits) the range's Container limits give containers that set none."""
    requests: Obj = {}
    limits: Obj = {}
    for limit in (limit_range.get("spec") or {}).get("limits") or []:
        if limit.get("type") == CONTAINER:
            requests.update(limit.get("defaultRequest") or {})
            limits.update(limit.get("default") or {})
    return requests, limits


def _fill(container: Obj, defaults: Obj, key: str) -> list[str]:
    """Adds the defaults ``container`` lacks under resources[key]; the names it set."""
    resources = container.setdefault("resources", {})
    current = resources.get(key) or {}
    added = sorted(name for name in defaults if name not in current)
    if added:
        resources[key] = {**current, **{name: canonical(str(defaults[name])) for name in added}}
    return added


def _requests_from_limits(container: Obj) -> None:
    """kube's SetDefaults_Pod, which runs before admission there: a limit without a
    request is also the request."""
    resources = container.get("resources") or {}
    limits = resources.get("limits")
    if limits:
        resources["requests"] = {**limits, **(resources.get("requests") or {})}


def apply_defaults(limit_range: Obj, pod: Obj) -> None:
    """kube's PodMutateLimitFunc: default every container, then annotate what was set."""
    requests, limits = _defaults(limit_range)
    notes: list[str] = []
    spec = pod.get("spec") or {}
    for key, what in (("containers", "container"), ("initContainers", "init container")):
        for container in spec.get(key) or []:
            name = container.get("name", "")
            _requests_from_limits(container)
            set_requests = _fill(container, requests, "requests")
            set_limits = _fill(container, limits, "limits")
            if set_requests:
                notes.append(f"{', '.join(set_requests)} request for {what} {name}")
            if set_limits:
                notes.append(f"{', '.join(set_limits)} limit for {what} {name}")
    if notes:
        annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


# -- constraints (the validating phase) -------------------------------------------------


def _values(*qs: Quantity | None) -> list[int]:
    """requestLimitEnforcedValues: milli-units unless a value would overflow them."""
    ints = [q.int_value() if q is not None else 0 for q in qs]
    if all(v <= MAX_MILLI_VALUE for v in ints):
        return [q.milli_value() if q is not None else 0 for q in qs]
    return ints


def min_constraint(kind: str, name: str, enforced: Quantity, req: Resources, lim: Resources) -> str:
    request, limit = req.get(name), lim.get(name)
    observed_req, observed_lim, want = _values(request, limit, enforced)
    head = f"minimum {name} usage per {kind} is {enforced}"
    if request is None:
        return f"{head}.  No request is specified"
    if observed_req < want:
        return f"{head}, but request is {request}"
    if limit is not None and observed_lim < want:
        return f"{head}, but limit is {limit}"
    return ""


def max_request_constraint(kind: str, name: str, enforced: Quantity, req: Resources) -> str:
    """Claims' max: only their requests are the user's."""
    request = req.get(name)
    observed_req, _, want = _values(request, None, enforced)
    head = f"maximum {name} usage per {kind} is {enforced}"
    if request is None:
        return f"{head}.  No request is specified"
    if observed_req > want:
        return f"{head}, but request is {request}"
    return ""


def max_constraint(kind: str, name: str, enforced: Quantity, req: Resources, lim: Resources) -> str:
    request, limit = req.get(name), lim.get(name)
    observed_req, observed_lim, want = _values(request, limit, enforced)
    head = f"maximum {name} usage per {kind} is {enforced}"
    if limit is None:
        return f"{head}.  No limit is specified"
    if observed_lim > want:
        return f"{head}, but limit is {limit}"
    if request is not None and observed_req > want:
        return f"{head}, but request is {request}"
    return ""


def ratio_constraint(
    kind: str, name: str, enforced: Quantity, req: Resources, lim: Resources
) -> str:
    request, limit = req.get(name), lim.get(name)
    observed_req, observed_lim, _ = _values(request, limit, enforced)
    head = f"{name} max limit to request ratio per {kind} is {enforced}"
    if request is None or observed_req == 0:
        return f"{head}, but no request is specified or request is 0"
    if limit is None or observed_lim == 0:
        return f"{head}, but no limit is specified or limit is 0"
    shown = ratio = observed_lim / observed_req
    allowed = float(enforced.int_value())
    if enforced.int_value() <= MAX_MILLI_VALUE:
        ratio, allowed = ratio * 1000, float(enforced.milli_value())
    return f"{head}, but provided ratio is {shown:f}" if ratio > allowed else ""


Check = Callable[[str, str, Quantity, Resources, Resources], str]
_CHECKS: tuple[tuple[str, Check], ...] = (
    ("min", min_constraint),
    ("max", max_constraint),
    ("maxLimitRequestRatio", ratio_constraint),
)


def _check(limit: Obj, req: Resources, lim: Resources) -> Iterator[str]:
    kind = limit.get("type", "")
    for key, check in _CHECKS:
        for name, enforced in sorted(quantities(limit.get(key)).items()):
            message = check(kind, name, enforced, req, lim)
            if message:
                yield message


def validate_pod(limit_range: Obj, pod: Obj) -> list[str]:
    """kube's PodValidateLimitFunc: each container, then the pod's totals."""
    spec = pod.get("spec") or {}
    errs: list[str] = []
    for limit in (limit_range.get("spec") or {}).get("limits") or []:
        if limit.get("type") == CONTAINER:
            for key in ("containers", "initContainers"):
                for container in spec.get(key) or []:
                    resources = container.get("resources") or {}
                    req, lim = (
                        quantities(resources.get("requests")),
                        quantities(resources.get("limits")),
                    )
                    errs.extend(_check(limit, req, lim))
        elif limit.get("type") == POD:
            errs.extend(_check(limit, pod_total(spec, "requests"), pod_total(spec, "limits")))
    return errs


def validate_claim(limit_range: Obj, claim: Obj) -> list[str]:
    """kube's PersistentVolumeClaimValidateLimitFunc: min and max of the requests."""
    requests = quantities(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    errs: list[str] = []
    for limit in (limit_range.get("spec") or {}).get("limits") or []:
        if limit.get("type") != CLAIM:
            continue
        for name, enforced in sorted(quantities(limit.get("min")).items()):
            errs.append(min_constraint(CLAIM, name, enforced, requests, {}))
        for name, enforced in sorted(quantities(limit.get("max")).items()):
            errs.append(max_request_constraint(CLAIM, name, enforced, requests))
    return [e for e in errs if e]


# -- pod totals -------------------------------------------------------------------------


def _add(total: Resources, more: Resources) -> None:
    for name, q in more.items():
        total[name] = (
            Quantity(total[name].value + q.value, total[name].format) if name in total else q
        )


def _max(total: Resources, more: Resources) -> None:
    for name, q in more.items():
        if name not in total or q.value > total[name].value:
            total[name] = q


def pod_total(spec: Obj, key: str) -> Resources:
    """kube's podRequests/podLimits: containers and sidecars add up, init containers
    count by their peak; pod-level resources override the sum."""
    total: Resources = {}
    for container in spec.get("containers") or []:
        _add(total, quantities((container.get("resources") or {}).get(key)))
    sidecars: Resources = {}
    init_peak: Resources = {}
    for container in spec.get("initContainers") or []:
        own = quantities((container.get("resources") or {}).get(key))
        if container.get("restartPolicy") == "Always":
            _add(total, own)
            _add(sidecars, own)
            own = dict(sidecars)
        else:
            _add(own, sidecars)
        _max(init_peak, own)
    _max(total, init_peak)
    pod_level = quantities((spec.get("resources") or {}).get(key))
    total.update({name: q for name, q in pod_level.items() if name in POD_LEVEL_RESOURCES})
    return total


# -- the plugin -------------------------------------------------------------------------


class LimitRanger:
    name = "LimitRanger"
    resources = frozenset({("", "pods"), ("", "persistentvolumeclaims")})

    def __init__(self, limit_ranges: Store) -> None:
        self._ranges = limit_ranges

    @staticmethod
    def _applies(attrs: Attributes, old: Obj | None) -> str:
        """The kind handled ("" when none): pods' creates and resizes, claims' writes."""
        rt = attrs.resource
        if attrs.operation not in ("CREATE", "UPDATE") or rt.group:
            return ""
        if ((old or {}).get("metadata") or {}).get("deletionTimestamp"):
            return ""
        if rt.plural == "pods":
            if attrs.subresource == "resize" and attrs.operation == "UPDATE":
                return "pods"
            return "pods" if not attrs.subresource and attrs.operation == "CREATE" else ""
        return rt.plural if rt.plural == "persistentvolumeclaims" and not attrs.subresource else ""

    def _items(self, namespace: str) -> list[Obj]:
        return [s.object for s in self._ranges.list(namespace, ListOptions()).items]

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if obj is None or self._applies(attrs, old) != "pods":
            return
        for limit_range in self._items(attrs.namespace):
            apply_defaults(limit_range, obj)

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        kind = self._applies(attrs, old) if obj is not None else ""
        if not kind:
            return
        assert obj is not None
        check = validate_pod if kind == "pods" else validate_claim
        for limit_range in self._items(attrs.namespace):
            errs = check(limit_range, obj)
            if errs:
                raise forbidden(attrs, obj, aggregate(errs))


def build(ctx: PluginContext) -> LimitRanger:
    return LimitRanger(ctx.stores[("", "v1", "limitranges")])
