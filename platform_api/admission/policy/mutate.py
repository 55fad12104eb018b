"""kube's MutatingAdmissionPolicy plugin: the last mutating plugin before the webhooks.

Policies in name order, each with its bindings and their parameter objects, as the
validating plugin finds them; every match runs the policy's mutations on the object as
the previous ones left it.  Failures (configuration, evaluation, patching) are collected
and, unless the policy says ``failurePolicy: Ignore``, the first one refuses the request:
a 403 whose reason is Invalid, worded ``policy 'p' with binding 'b' denied request: ...``
as kube's generic policy dispatcher words it.  A policy with ``reinvocationPolicy:
IfNeeded`` runs again when a later plugin (a webhook) changed the object after it.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission import matching
from platform_api.admission.policy import mutating
from platform_api.admission.policy.compiled import Binding
from platform_api.admission.policy.dispatch import Invocation, PolicyAdmission
from platform_api.admission.request import AdmissionRequest

Obj = dict[str, Any]
Failure = tuple[mutating.MutatingPolicy, Binding | None, str]


class MutatingPolicyAdmission(PolicyAdmission):
    async def mutate(
        self,
        req: AdmissionRequest,
        merge: mutating.Merge,
        atomics: mutating.Atomics,
        only: list[Invocation] | None = None,
    ) -> list[Invocation]:
        """Mutate ``req.object``; returns the invocations to repeat if a later plugin
        changes the object (``only``: repeat just those)."""
        if req.object is None or matching.exempt(req):
            return []
        failures: list[Failure] = []
        reinvoke: list[Invocation] = []
        for call in self.invocations(req) if only is None else only:
            policy = call.policy
            assert isinstance(policy, mutating.MutatingPolicy)
            if call.error:
                failures.append((policy, call.binding, call.error))
                continue
            versioned = await self.versioned(req, call.target)
            namespace = self.namespace_for(policy, req)
            try:
                changed = await mutating.mutate(
                    policy, versioned, call.param, namespace, self.authorize, merge, atomics
                )
            except mutating.MutationError as e:
                failures.append((policy, call.binding, str(e)))
                continue
            if changed is not None:
                versioned.object = changed
                if self.equivalence is not None:  # back to the version asked for
                    changed = await self.equivalence.restore(req, versioned)
                req.object = changed
                if policy.reinvocation == "IfNeeded":
                    reinvoke.append(call)
        _refuse(req, failures)
        return reinvoke


def _refuse(req: AdmissionRequest, failures: list[Failure]) -> None:
    """kube's answer to the failures a Fail policy had: 403, reason Invalid, one cause
    per failure, the first one's message."""
    counted = [f for f in failures if not f[0].ignores_failures]
    if not counted:
        return
    messages = []
    for policy, binding, why in counted:
        if binding is not None:
            messages.append(
                f"policy '{policy.name}' with binding '{binding.name}' denied request: {why}"
            )
        else:
            messages.append(f"policy {_quote(policy.name)} denied request: {why}")
    error = errors.forbidden(req.resource, req.group, req.name, messages[0])
    error.message = messages[0]
    error.reason = "Invalid"
    assert error.details is not None
    error.details["causes"] = [{"message": m} for m in messages]
    raise error


def _quote(name: str) -> str:
    """Go's %q of a name (names are plain: quotes suffice)."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
