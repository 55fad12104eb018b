"""kube's MutatingAdmissionPolicy plugin: the last mutating plugin before the webhooks.

Policies in name order (kube's order is its map's, which varies), each with its bindings
and their parameter objects, as the validating plugin finds them; every match runs the
policy's mutations on the object as the previous ones left it, a failed mutation passed
over.  Failures (configuration, evaluation, patching) are collected and, unless the
policy says ``failurePolicy: Ignore``, the first one refuses the request: a 403 worded
``policy 'p' with binding 'b' denied request: ...`` as kube's generic policy dispatcher
words it, reason Invalid (Forbidden for a configuration error: a missing parameter).
When a mutation was made, kube runs the chain's mutations once more: then the policies
with ``reinvocationPolicy: IfNeeded`` that ran run again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from platform_api import errors
from platform_api.admission import matching
from platform_api.admission.equivalence import VersionError
from platform_api.admission.policy import mutating
from platform_api.admission.policy.compiled import Binding
from platform_api.admission.policy.dispatch import Invocation, PolicyAdmission
from platform_api.admission.request import AdmissionRequest

Obj = dict[str, Any]
# (policy, binding, message, reason): a configuration error keeps kube's Forbidden
Failure = tuple[mutating.MutatingPolicy, Binding | None, str, str]


@dataclass
class Round:
    """What one run of the policies leaves for the next: the ``IfNeeded`` invocations
    that ran, and whether any mutation was made (kube then runs the admission chain's
    mutations once more, those invocations among them)."""

    reinvoke: list[Invocation] = field(default_factory=list)
    dirty: bool = False


class MutatingPolicyAdmission(PolicyAdmission):
    async def mutate(
        self,
        req: AdmissionRequest,
        merge: mutating.Merge,
        atomics: mutating.Atomics,
        only: list[Invocation] | None = None,
    ) -> Round:
        """Mutate ``req.object`` (``only``: the invocations a second round repeats)."""
        done = Round()
        if req.object is None or matching.exempt(req):
            return done
        failures: list[Failure] = []
        for call in self.invocations(req) if only is None else only:
            policy = call.policy
            assert isinstance(policy, mutating.MutatingPolicy)
            if call.error:
                failures.append((policy, call.binding, call.error, errors.FORBIDDEN))
                continue
            versioned = await self.versioned(req, call.target)
            namespace = self.namespace_for(policy, req)
            outcome = await mutating.mutate(
                policy, versioned, call.param, namespace, self.authorize, merge, atomics
            )
            failures += [(policy, call.binding, why, errors.INVALID) for why in outcome.failures]
            if outcome.ran and policy.reinvocation == "IfNeeded":
                done.reinvoke.append(call)
            if outcome.object is not None:
                done.dirty = True
                versioned.object = await self._read_back(versioned, outcome.object)
                changed: Obj | None = versioned.object
                if self.equivalence is not None:  # back to the version asked for
                    changed = await self.equivalence.restore(req, versioned)
                req.object = changed
        _refuse(req, failures)
        return done

    async def _read_back(self, versioned: AdmissionRequest, obj: Obj) -> Obj:
        """A custom resource patched into another apiVersion, converted back; kube's
        internal error when it does not convert, whatever the failure policy."""
        if self.equivalence is None:
            return obj
        try:
            return await self.equivalence.read_back(versioned, obj)
        except VersionError as e:
            raise errors.internal_error(f"failed to convert object: {e}") from None


def _refuse(req: AdmissionRequest, failures: list[Failure]) -> None:
    """kube's answer to the failures a Fail policy had: 403, one cause per failure, the
    first one's message and reason (Invalid, or Forbidden for a configuration error)."""
    counted = [f for f in failures if not f[0].ignores_failures]
    if not counted:
        return
    messages = []
    for policy, binding, why, _ in counted:
        if binding is not None:
            messages.append(
                f"policy '{policy.name}' with binding '{binding.name}' denied request: {why}"
            )
        else:
            messages.append(f"policy {_quote(policy.name)} denied request: {why}")
    error = errors.forbidden(req.resource, req.group, req.name, messages[0])
    error.message = messages[0]
    error.reason = counted[0][3]
    assert error.details is not None
    error.details["causes"] = [{"message": m} for m in messages]
    raise error


def _quote(name: str) -> str:
    """Go's %q of a name (names are plain: quotes suffice)."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
