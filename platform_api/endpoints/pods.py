"""The pod sub-resources that act: ``binding`` (schedule) and ``eviction`` (drain).

Both pass mutating admission, then, once the request is known to be well formed,
validating admission (policies and webhooks on ``pods/binding`` and ``pods/eviction``).

Eviction follows kube's eviction REST: pods that are Pending, Succeeded or Failed are
deleted at once; otherwise the one PodDisruptionBudget selecting the pod must allow a
disruption (it is then charged one), or the answer is 429.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.endpoints.body import decode_subresource
from platform_api.endpoints.delete import options_from
from platform_api.endpoints.negotiation import Output
from platform_api.endpoints.responses import encode
from platform_api.endpoints.scope import Handlers, Scope
from platform_api.endpoints.update import check_update_preconditions
from platform_api.registry.deletion import check_preconditions
from platform_api.registry.disruptionbudget import set_allowed_condition
from platform_api.registry.podspec import selector_matches
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions, Preconditions
from platform_api.timestamps import format_timestamp
from platform_api.validation import field

Obj = dict[str, Any]
BINDING = "io.platform.api.core.v1.Binding"
EVICTION = "io.platform.api.policy.v1.Eviction"
_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MAX_DISRUPTED_PODS = 2000  # kube's MaxDisruptedPodSize
_TWO_BUDGETS = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
    "support."
)


def _success(scope: Scope) -> bytes:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    return scope.finish(201, encode(body), Output("json"))


async def _body(
    scope: Scope, kind: str, definition: str, api_version: str, also: tuple[str, ...] = ()
) -> Obj:
    return await decode_subresource(scope, "CreateOptions", kind, definition, api_version, also)


async def bind(scope: Scope) -> bytes:
    """``POST pods/<name>/binding``."""
    binding = await _body(scope, "Binding", BINDING, "v1")
    # kube's handler admits before its storage sees the Binding.
    await scope.handlers.admission.admit(scope, "CREATE", binding, scope.name)
    name = binding["metadata"].get("name") or ""  # kube does not take the URL's
    if name != scope.name:
        raise errors.bad_request("name in URL does not match name in Binding object")
    return await _bind(scope, binding, name, scope.store)


async def bind_collection(scope: Scope) -> bytes:
    """``POST bindings``: the older form, the pod named in the Binding (a Binding without
    a name is refused where kube's storage refuses it: after validation and admission)."""
    binding = await _body(scope, "Binding", BINDING, "v1")
    name = binding["metadata"].get("name") or ""
    await scope.handlers.admission.admit(scope, "CREATE", binding, name)
    pods = scope.handlers.scheme.lookup("", "v1", "pods")
    assert pods is not None
    return await _bind(scope, binding, name, scope.handlers.store(pods))


async def _bind(scope: Scope, binding: Obj, name: str, pods: Store) -> bytes:
    target = binding.get("target") or {}
    errs = []
    if target.get("kind") not in (None, "", "Node"):
        errs.append(field.not_supported("target.kind", target["kind"], ["Node", "<empty>"]))
    if not target.get("name"):
        errs.append(field.required("target.name"))
    if errs:  # kube's BindingREST returns them as a plain error: a bare 500
        raise errors.StatusError(500, "", field.aggregate(errs))
    await scope.handlers.admission.validator(scope, "CREATE")(binding, None)
    if not name:
        raise errors.bad_request("Name parameter required.")  # kube's key of the pod
    meta = binding["metadata"]
    # kube keeps a Binding's uid and resourceVersion as preconditions on the pod.
    pre = Preconditions(meta.get("uid") or None, meta.get("resourceVersion") or None)
    handlers = scope.handlers

    def assign(existing: Obj | None) -> Obj:
        assert existing is not None
        check_update_preconditions(scope, pre, existing, pods, name)
        _check_bindable(existing, name)
        assign_node(existing, target["name"], binding, handlers, handlers.reactor.seconds())
        return existing

    await pods.update(
        scope.namespace, name, assign, dry_run=scope.ctx.dry_run, subresource="binding"
    )
    return _success(scope)


def _check_bindable(pod: Obj, name: str) -> None:
    """kube's setPodNodeAndMetadata refuses, as a Conflict on pods/binding, a pod going
    away, one already on a node, and one the scheduler may not yet place."""
    spec = pod.get("spec") or {}
    why = ""
    if pod["metadata"].get("deletionTimestamp"):
        why = f"pod {name} is being deleted, cannot be assigned to a host"
    elif spec.get("nodeName"):
        why = f'pod {name} is already assigned to node "{spec["nodeName"]}"'
    elif spec.get("schedulingGates"):
        why = f"pod {name} has non-empty .spec.schedulingGates"
    if why:
        raise errors.conflict("pods/binding", "", name, why)


def assign_node(pod: Obj, node: str, binding: Obj, handlers: Handlers, now: float) -> None:
    """The pod on ``node``, as kube's binding leaves it: the scheduler's nomination
    cleared, the Binding's annotations (and, with PodTopologyLabelsAdmission, its labels)
    merged in, and PodScheduled True."""
    pod.setdefault("spec", {})["nodeName"] = node
    status = pod.setdefault("status", {})
    if handlers.clear_nomination:
        status.pop("nominatedNodeName", None)
    meta, given = pod["metadata"], binding["metadata"]
    if given.get("annotations"):
        meta["annotations"] = {**(meta.get("annotations") or {}), **given["annotations"]}
    if handlers.binding_labels and given.get("labels"):
        meta["labels"] = {**(meta.get("labels") or {}), **given["labels"]}
    scheduled: Obj = {"type": "PodScheduled", "status": "True", "lastProbeTime": None}
    conditions = status.setdefault("conditions", [])
    for i, condition in enumerate(conditions):
        if condition.get("type") == "PodScheduled":  # kube's UpdatePodCondition
            kept = condition.get("status") == "True" and condition.get("lastTransitionTime")
            scheduled["lastTransitionTime"] = kept or format_timestamp(now)
            conditions[i] = scheduled
            return
    scheduled["lastTransitionTime"] = format_timestamp(now)
    conditions.append(scheduled)


async def evict(scope: Scope) -> bytes:
    # kube's EvictionREST takes its v1beta1 too (AcceptsGroupVersion).
    eviction = await _body(scope, "Eviction", EVICTION, "policy/v1", ("policy/v1beta1",))
    name = eviction["metadata"].get("name") or ""
    if name != scope.name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    await scope.handlers.admission.admit(scope, "CREATE", eviction, name)
    await scope.handlers.admission.validator(scope, "CREATE")(eviction, None)
    pod = (await scope.handlers.current(scope.store, scope.namespace, name)).object
    phase = (pod.get("status") or {}).get("phase", "Pending")
    if phase not in ("Pending", "Succeeded", "Failed") and not pod["metadata"].get(
        "deletionTimestamp"
    ):
        await _charge_budget(scope, pod)
    options = options_from(eviction.get("deleteOptions") or {})
    # kube's propagateDryRun: the request's dryRun or its deleteOptions', either one.
    dry_run = scope.ctx.dry_run = scope.ctx.dry_run or options.dry_run
    pre = options.preconditions
    if not dry_run:
        await _mark_disruption_target(scope, name, pre)
    await scope.store.delete(
        scope.namespace,
        name,
        preconditions=pre,
        dry_run=dry_run,
        propagation=options.propagation,
        orphan=options.orphan_dependents,
        grace_period=options.grace_period,
    )
    return _success(scope)


async def _mark_disruption_target(scope: Scope, name: str, pre: Preconditions | None) -> None:
    """kube's addConditionAndDeletePod: the pod says why it goes (DisruptionTarget,
    EvictionByEvictionAPI) before it is deleted; the preconditions hold for this too."""
    now = format_timestamp(scope.handlers.reactor.seconds())

    def mark(existing: Obj | None) -> Obj:
        assert existing is not None
        if pre is not None:
            check_preconditions(scope.store.resource, name, pre, existing)
        status = existing.setdefault("status", {})
        conditions = [
            c for c in status.get("conditions") or () if c.get("type") != "DisruptionTarget"
        ]
        previous: Obj = next(
            (c for c in status.get("conditions") or () if c.get("type") == "DisruptionTarget"), {}
        )
        since = previous.get("lastTransitionTime") if previous.get("status") == "True" else now
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "lastTransitionTime": since,
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
            }
        )
        status["conditions"] = conditions
        return existing

    await scope.store.update(scope.namespace, name, mark, subresource="status")


async def _charge_budget(scope: Scope, pod: Obj) -> None:
    budgets = scope.handlers.stores[("policy", "v1", "poddisruptionbudgets")]
    labels = pod["metadata"].get("labels") or {}
    matching = [
        s.object
        for s in budgets.list(scope.namespace, ListOptions()).items
        if selector_matches((s.object.get("spec") or {}).get("selector"), labels)
    ]
    if not matching:
        return
    if len(matching) > 1:  # kube answers a bare Status of its own: no reason, no details
        raise errors.StatusError(500, "", _TWO_BUDGETS)
    budget = matching[0]
    _check_budget(budget)
    now = scope.handlers.reactor.seconds()
    pod_name = pod["metadata"]["name"]

    def charge(existing: Obj | None) -> Obj:
        """kube's checkAndDecrement on the budget as it is now: one disruption fewer, and
        the pod listed as disrupted so the controller stops counting it healthy."""
        assert existing is not None
        _check_budget(existing)
        state = existing.setdefault("status", {})
        state["disruptionsAllowed"] = state.get("disruptionsAllowed", 0) - 1
        if state["disruptionsAllowed"] == 0:
            set_allowed_condition(state, now)
        if not scope.ctx.dry_run:
            disrupted = state.setdefault("disruptedPods", {})
            disrupted[pod_name] = format_timestamp(now)
        return existing

    await budgets.update(
        scope.namespace,
        budget["metadata"]["name"],
        charge,
        subresource="status",
        dry_run=scope.ctx.dry_run,
    )


def _check_budget(budget: Obj) -> None:
    """Refuse as kube's eviction does: a budget the controller has not seen yet, a broken
    or overfull one, or one that allows no disruption now (with kube's reasons)."""
    name = budget["metadata"]["name"]
    status = budget.get("status") or {}
    if status.get("observedGeneration", 0) < budget["metadata"].get("generation", 0):
        raise _violation(
            f"The disruption budget {name} is still being processed by the server.", 10
        )
    allowed = status.get("disruptionsAllowed", 0)
    if allowed < 0:
        raise errors.forbidden(
            "poddisruptionbudgets", "policy", name, "pdb disruptions allowed is negative"
        )
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        reason = "DisruptedPods map too big - too many evictions not confirmed by PDB controller"
        raise errors.forbidden("poddisruptionbudgets", "policy", name, reason)
    if allowed == 0:
        raise _violation(_no_disruption_message(name, status), 0)


def _no_disruption_message(name: str, status: Obj) -> str:
    condition = next(
        (c for c in status.get("conditions") or () if c.get("type") == "DisruptionAllowed"), None
    )
    failed = (
        condition is not None and condition.get("status") == "False" and condition.get("message")
    )
    if failed and condition.get("reason") == "SyncFailed":  # type: ignore[union-attr]
        return (
            f"The disruption budget {name} does not allow evicting pods currently because it "
            f"failed sync: {condition['message']}"  # type: ignore[index]
        )
    healthy, desired = status.get("currentHealthy", 0), status.get("desiredHealthy", 0)
    if healthy <= desired:
        return (
            f"The disruption budget {name} needs {desired} healthy pods and has {healthy} currently"
        )
    if failed:
        return (
            f"The disruption budget {name} does not allow evicting pods currently "
            f"({condition['reason']}): {condition['message']}"  # type: ignore[index]
        )
    return f"The disruption budget {name} does not allow evicting pods currently"


def _violation(cause: str, retry_after: int) -> errors.StatusError:
    error = errors.too_many_requests(_VIOLATION, retry_after=retry_after)
    if not retry_after:
        error.headers = {}
    error.details = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    return error
