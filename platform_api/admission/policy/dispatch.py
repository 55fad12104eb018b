"""kube's ValidatingAdmissionPolicy plugin: policies and bindings, decided on each write.

As k8s.io/apiserver's ``policy/validating`` dispatcher: for each policy whose
``matchConstraints`` match (excluding the admission configuration kinds), each binding
whose ``matchResources`` match, each parameter object the binding's ``paramRef`` finds:
match conditions, then every validation.  A failed validation acts per the binding's
``validationActions`` (Deny refuses, Warn adds a ``Warning``, Audit records an audit
annotation).  Configuration and evaluation errors follow the policy's ``failurePolicy``.
The first refusal answers, with kube's message and the validation's ``reason`` (Invalid,
422, by default).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from platform_api import errors
from platform_api.admission import matching
from platform_api.admission.equivalence import Equivalence, Target
from platform_api.admission.policy import evaluate
from platform_api.admission.policy.compiled import Binding, Policy, Resources
from platform_api.admission.policy.source import PolicySource
from platform_api.admission.request import AdmissionRequest
from platform_api.gotext import go_escaped

Obj = dict[str, Any]
# Parameter objects: (apiVersion, kind, namespace or "", name or "", selector or None)
# -> the objects, or None when the kind is not served; raises StatusError.
FindParams = Callable[[str, str, str, str, Obj | None], list[Obj] | None]
# Is a parameter kind namespaced? None when not served.
ParamScope = Callable[[str, str], bool | None]
NamespaceObject = Callable[[str], Obj | None]
_CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}


@dataclass(frozen=True)
class Invocation:
    """One policy, binding and parameter object to evaluate, at the version the policy's
    constraints matched; or (``error``) a configuration error, which refuses the request
    unless the policy's ``failurePolicy`` is Ignore."""

    policy: Policy
    binding: Binding | None
    param: Obj | None = None
    target: Target | None = None
    error: str = ""


class PolicyAdmission:
    def __init__(
        self,
        source: PolicySource,
        find_params: FindParams,
        param_scope: ParamScope,
        namespace_object: NamespaceObject,
        authorize: matching.Authorize | None = None,
        equivalence: Equivalence | None = None,
    ) -> None:
        self.source = source
        self.find_params = find_params
        self.param_scope = param_scope
        self.namespace_object = namespace_object
        self.authorize = authorize
        self.equivalence = equivalence

    def start(self) -> None:
        self.source.start()

    def stop(self) -> None:
        self.source.stop()

    def active(self) -> bool:
        return bool(self.source.hooks())

    def namespace_labels(self, name: str) -> dict[str, str] | None:
        namespace = self.namespace_object(name)
        if namespace is None:
            return None
        return dict(namespace.get("metadata", {}).get("labels") or {})

    def invocations(self, req: AdmissionRequest) -> list[Invocation]:
        """kube's policy dispatcher walk, in policy order: each policy whose constraints
        match, each of its bindings whose resources match, each parameter object."""
        out: list[Invocation] = []
        for policy, bindings in self.source.hooks():
            try:
                target = self._match(policy.constraints, req)
            except errors.StatusError as e:
                why = f"failed to configure policy: {e.message}"
                out.append(Invocation(policy, None, error=why))
                continue
            if target is None:
                continue
            if policy.error:
                why = f"failed to configure policy: {policy.error}"
                out.append(Invocation(policy, None, error=why))
                continue
            for binding in bindings:
                try:
                    if binding.resources is not None and not self._match(binding.resources, req):
                        continue
                    params = self._params(policy, binding, req)
                except (errors.StatusError, ValueError) as e:
                    message = e.message if isinstance(e, errors.StatusError) else str(e)
                    why = f"failed to configure binding: {message}"
                    out.append(Invocation(policy, binding, error=why))
                    continue
                out.extend(Invocation(policy, binding, param, target) for param in params)
        return out

    def _match(self, resources: Resources, req: AdmissionRequest) -> Target | None:
        return resources_match(resources, req, self.namespace_labels, self.equivalence)

    async def versioned(self, req: AdmissionRequest, target: Target | None) -> AdmissionRequest:
        """``req`` at the version the policy matched."""
        if self.equivalence is None or target is None:
            return req
        return await self.equivalence.versioned(req, target)

    def namespace_for(self, policy: Policy, req: AdmissionRequest) -> Obj | None:
        """The ``namespaceObject`` variable: the request's namespace, if the policy asks."""
        if policy.uses_namespace and req.namespace and req.kind != ("", "v1", "Namespace"):
            return self.namespace_object(req.namespace)
        return None

    async def validate(self, req: AdmissionRequest) -> None:
        if matching.exempt(req):
            return
        denied: list[tuple[Policy, Binding | None, evaluate.Decision]] = []
        for call in self.invocations(req):
            policy, binding = call.policy, call.binding
            if call.error:
                if not policy.ignores_failures:
                    denied.append(
                        (policy, binding, evaluate.Decision(False, call.error, error=True))
                    )
                continue
            assert binding is not None
            versioned = await self.versioned(req, call.target)
            namespace = self.namespace_for(policy, req)
            decisions = await evaluate.validate(
                policy, versioned, call.param, namespace, self.authorize
            )
            for index, decision in enumerate(decisions):
                self._act(policy, binding, (index, decision), req, denied)
        if denied:
            raise _denial(req, *denied[0])

    def _act(
        self,
        policy: Policy,
        binding: Binding,
        indexed: tuple[int, evaluate.Decision],
        req: AdmissionRequest,
        denied: list[tuple[Policy, Binding | None, evaluate.Decision]],
    ) -> None:
        """What the binding's actions make of one expression's decision (``indexed``: its
        place among the policy's validations, then its audit annotations)."""
        index, decision = indexed
        if decision.allowed or (decision.error and policy.ignores_failures):
            return
        for action in binding.actions:  # an evaluation error under Fail acts as a denial
            if action == "Deny":
                denied.append((policy, binding, decision))
            elif action == "Warn":
                req.warnings.append(
                    f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' with "
                    f"binding '{binding.name}': {decision.message}"
                )
            elif action == "Audit":  # kube keeps the first failure of the request
                req.audit_annotations.setdefault(
                    VALIDATION_FAILURE, validation_failure(policy, binding, index, decision)
                )

    def _params(self, policy: Policy, binding: Binding, req: AdmissionRequest) -> list[Obj | None]:
        """kube's ``CollectParams``: the parameter objects a binding points at."""
        ref = binding.param_ref
        if policy.param_kind is None or ref is None:
            return [None]
        api_version, kind = policy.param_kind
        namespaced = self.param_scope(api_version, kind)
        if namespaced is None:
            raise ValueError(f"paramKind kind `{kind}.{api_version}` not known")
        namespace = ""
        if namespaced:
            namespace = ref.get("namespace") or req.namespace
            if not namespace:
                raise ValueError(
                    "cannot use namespaced paramRef in policy binding that matches "
                    "cluster-scoped resources"
                )
        elif ref.get("namespace"):
            raise ValueError(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
            )
        found = self.find_params(
            api_version, kind, namespace, ref.get("name") or "", ref.get("selector")
        )
        params: list[Obj | None] = list(found or [])
        if not params and ref.get("parameterNotFoundAction") == "Deny":
            raise ValueError(
                "no params found for policy binding with `Deny` parameterNotFoundAction"
            )
        return params


def resources_match(
    resources: Resources,
    req: AdmissionRequest,
    labels: matching.NamespaceLabels,
    equivalence: Equivalence | None = None,
) -> Target | None:
    """kube's generic matcher: selectors, then excluded rules, then rules (none: all);
    the version matched, or None."""
    if resources.selector_error:
        raise errors.internal_error(resources.selector_error)
    probe = _Probe(resources)
    target = matching.selected(probe, req, labels, equivalence)
    if target is None:
        return None
    policy = resources.match_policy
    if matching.rules_match(resources.exclude, req, policy, equivalence) is not None:
        return None
    return target


class _Probe:
    """A ``Matchable`` of the resources: no rules means every resource."""

    def __init__(self, resources: Resources) -> None:
        self.namespace_selector = resources.namespace_selector
        self.object_selector = resources.object_selector
        self.selector_error = resources.selector_error
        self.match_policy = resources.match_policy
        self.rules = resources.rules or (matching.Rule(("*",), ("*",), ("*",), ("*", "*/*"), "*"),)


def _denial(
    req: AdmissionRequest, policy: Policy, binding: Binding | None, decision: evaluate.Decision
) -> errors.StatusError:
    """kube's answer: a Forbidden naming the object, with the decision's reason and code."""
    if binding is not None:
        message = (
            f"ValidatingAdmissionPolicy '{policy.name}' with binding '{binding.name}' denied "
            f"request: {decision.message}"
        )
    else:
        message = f"ValidatingAdmissionPolicy '{policy.name}' denied request: {decision.message}"
    error = errors.forbidden(req.resource, req.group, req.name, message)
    reason = decision.reason or "Invalid"
    error.reason = reason
    error.code = _CODES.get(reason, 500)
    assert error.details is not None
    error.details["causes"] = [{"message": message}]
    return error


VALIDATION_FAILURE = "validation.policy.admission.platform.io/validation_failure"


def validation_failure(
    policy: Policy, binding: Binding, index: int, decision: evaluate.Decision
) -> str:
    """kube's audit annotation of a failed validation under ``Audit``: a JSON list (of
    one), its fields in kube's ValidationFailureValue order, as Go's encoder writes it."""
    failure = {
        "message": decision.message,
        "policy": policy.name,
        "binding": binding.name,
        "expressionIndex": index,
        "validationActions": list(binding.actions),
    }
    return go_escaped(orjson.dumps([failure])).decode()
