"""Calling the webhooks a request matches: mutating in order, validating in parallel.

As k8s.io/apiserver's webhook dispatchers.  Mutating webhooks run one after another,
each seeing the previous one's JSON patch applied; a webhook with
``reinvocationPolicy: IfNeeded`` is called once more, in kube's second round of the
chain's mutations, when something changed the object after it (a later webhook, or a
policy run again in that round).  Validating webhooks are called at once; the first refusal in their
order is the answer.  A call that fails (unreachable, timeout, bad answer) is ignored
under ``failurePolicy: Ignore`` and otherwise a 500 ``failed calling webhook``; a dry
run never reaches a webhook that has side effects (400).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from twisted.internet.defer import ensureDeferred, gatherResults
from twisted.logger import Logger

from platform_api import errors
from platform_api.admission import matching, metrics
from platform_api.admission.equivalence import Equivalence, Target, VersionError
from platform_api.admission.patched import read_back_patched
from platform_api.admission.request import AdmissionRequest
from platform_api.admission.webhook import review
from platform_api.admission.webhook.caller import CallError, WebhookCaller
from platform_api.admission.webhook.hooks import Hook, HookSource
from platform_api.admission.webhook.review import InvalidResponse
from platform_api.context import add_webhook_wait
from platform_api.patch import json_patch

log = Logger()
Obj = dict[str, Any]
DRY_RUN_SAFE = ("None", "NoneOnDryRun")
_CALL_ERROR = "calling_webhook_error"


@dataclass
class Round:
    """One round of the mutating webhooks, as kube's reinvocation context keeps it: the
    ``IfNeeded`` webhooks that ran since the object last changed, those whose output a
    later one changed, whether any changed it, and the object they left."""

    previously: list[str] = field(default_factory=list)
    reinvoke: set[str] = field(default_factory=set)
    changed: bool = False
    output: Obj | None = None


class WebhookAdmission:
    """kube's MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins."""

    def __init__(
        self,
        mutating: HookSource | None,
        validating: HookSource | None,
        caller: WebhookCaller,
        namespace_labels: matching.NamespaceLabels,
        authorize: matching.Authorize | None = None,
        review_group: str = "admission.platform.io",
        equivalence: Equivalence | None = None,
    ) -> None:
        self.mutating = mutating
        self.validating = validating
        self.caller = caller
        self.namespace_labels = namespace_labels
        self.authorize = authorize
        self.review_group = review_group
        self.equivalence = equivalence

    def start(self) -> None:
        for source in (self.mutating, self.validating):
            if source is not None:
                source.start()

    def stop(self) -> None:
        for source in (self.mutating, self.validating):
            if source is not None:
                source.stop()

    def has_mutating(self) -> bool:
        return self.mutating is not None and bool(self.mutating.hooks())

    def has_validating(self) -> bool:
        return self.validating is not None and bool(self.validating.hooks())

    async def _versioned(self, req: AdmissionRequest, target: Target) -> AdmissionRequest:
        if self.equivalence is None:
            return req
        return await self.equivalence.versioned(req, target)

    async def _invocation(
        self, hook: Hook, req: AdmissionRequest
    ) -> tuple[Target, AdmissionRequest] | None:
        """Whether ``hook`` is called: the version it sees the request at, and the
        request converted to it (match conditions see it so too)."""
        target = matching.selected(hook, req, self.namespace_labels, self.equivalence)
        if target is None:
            return None
        versioned = await self._versioned(req, target)
        if not await matching.conditions_match(hook, versioned, self.authorize):
            return None
        return target, versioned

    # -- mutating -----------------------------------------------------------------

    async def mutate(self, req: AdmissionRequest, again: Round | None = None) -> Round:
        """Run the mutating webhooks; ``req.object`` ends as they left it.  ``again``:
        the first round's account, for kube's second round of the chain's mutations,
        where only the ``IfNeeded`` webhooks whose output something changed run."""
        if self.mutating is None or matching.exempt(req):
            return Round()
        if again is not None:
            if req.object != again.output:  # changed since (by a policy run again)
                again.reinvoke.update(again.previously)
            hooks = [h for h in self.mutating.hooks() if h.uid in again.reinvoke]
            done = Round()
        else:
            hooks, done = self.mutating.hooks(), Round()
        for hook in hooks:
            invocation = await self._invocation(hook, req)
            if invocation is None:
                continue
            before = req.object
            await self._mutate_once(hook, req, invocation[1])
            if req.object != before:
                # kube: what an IfNeeded webhook saw changed, it runs again next round
                done.changed = True
                done.reinvoke.update(done.previously)
                done.previously.clear()
            if hook.reinvoke:
                done.previously.append(hook.uid)
        if again is None and done.previously:
            # the second round asks whether the object changed since: only an IfNeeded
            # webhook that ran since the last change would be called again for that
            done.output = copy.deepcopy(req.object)
        return done

    async def _mutate_once(
        self, hook: Hook, req: AdmissionRequest, versioned: AdmissionRequest
    ) -> None:
        """Call ``hook`` on ``versioned``; its patch ends in ``req.object``, converted
        back to the version asked for."""
        before = versioned.object
        started = time.perf_counter()  # one after the other: each call is waited for
        try:
            await self._mutate_call(hook, versioned)
        finally:
            add_webhook_wait(time.perf_counter() - started)
        if versioned.object is not before and versioned is not req:
            assert self.equivalence is not None
            req.object = await self.equivalence.restore(req, versioned)

    async def _mutate_call(self, hook: Hook, req: AdmissionRequest) -> None:
        try:
            verdict = await self._call(hook, req)
            if verdict is None:
                return
            if verdict.patch:
                self._apply_patch(hook, req, verdict)
                if self.equivalence is not None and req.object is not None:
                    try:
                        req.object = await self.equivalence.read_back(req, req.object)
                    except VersionError as e:  # kube's converter's error, as it is
                        raise errors.unknown(str(e)) from None
        except CallError as e:
            if hook.ignores_failures:
                log.warn("failed calling webhook, failing open {name}: {e}", name=hook.name, e=e)
                return
            raise errors.internal_error(f'failed calling webhook "{hook.name}": {e}') from None

    @staticmethod
    def _apply_patch(hook: Hook, req: AdmissionRequest, verdict: review.Verdict) -> None:
        try:
            operations = json_patch.decode(orjson.loads(verdict.patch))
        except (orjson.JSONDecodeError, errors.StatusError) as e:
            raise CallError(f"received undecodable patch in webhook response: {e}") from None
        if not operations:
            return
        if req.object is None:
            raise errors.internal_error(
                f'admission webhook "{hook.name}" attempted to modify the object, '
                "which is not supported for this operation"
            )
        if verdict.patch_type != "JSONPatch":
            raise CallError(f'unsupported patch type "{verdict.patch_type}"')
        patched = copy.deepcopy(req.object)
        decoded: dict[int, Any] = {}  # what the patch library decoded (its key order)
        try:
            patched = json_patch.apply(patched, operations, decoded)
        except json_patch.JSONPatchError as e:
            raise errors.internal_error(str(e)) from None
        req.object = read_back_patched(patched, req.kind, decoded=decoded)

    # -- validating ---------------------------------------------------------------

    async def validate(self, req: AdmissionRequest) -> None:
        """Call every matching validating webhook at once; the first refusal wins."""
        if self.validating is None or matching.exempt(req):
            return
        invocations = []
        for hook in self.validating.hooks():
            invocation = await self._invocation(hook, req)
            if invocation is not None:
                invocations.append((hook, invocation[1]))
        if not invocations:
            return
        started = time.perf_counter()  # called in parallel: their wall time is the wait
        try:
            outcomes = await gatherResults(
                [
                    ensureDeferred(self._validate_one(hook, versioned))
                    for hook, versioned in invocations
                ]
            )
        finally:
            add_webhook_wait(time.perf_counter() - started)
        for outcome in outcomes:
            if outcome is not None:
                raise outcome

    async def _validate_one(self, hook: Hook, req: AdmissionRequest) -> errors.StatusError | None:
        try:
            await self._call(hook, req)
        except CallError as e:
            if hook.ignores_failures:
                log.warn("failed calling webhook, failing open {name}: {e}", name=hook.name, e=e)
                return None
            return errors.internal_error(f'failed calling webhook "{hook.name}": {e}')
        except errors.StatusError as e:
            return e
        return None

    # -- one call -------------------------------------------------------------------

    async def _call(self, hook: Hook, req: AdmissionRequest) -> review.Verdict | None:
        """Call ``hook`` (timed and counted as kube's dispatchers count calls)."""
        if req.dry_run and hook.side_effects not in DRY_RUN_SAFE:
            raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        kind = "admit" if hook.mutating else "validating"
        started = time.perf_counter()
        try:
            verdict = await self._call_once(hook, req)
        except CallError:
            if not hook.ignores_failures:
                metrics.observe_rejection(hook.name, kind, req.operation, _CALL_ERROR, 0)
            elapsed = time.perf_counter() - started
            metrics.observe_webhook(
                hook.name, kind, req.operation, 0, not hook.ignores_failures, elapsed
            )
            raise
        except errors.StatusError as e:
            metrics.observe_rejection(hook.name, kind, req.operation, "no_error", e.code)
            elapsed = time.perf_counter() - started
            metrics.observe_webhook(hook.name, kind, req.operation, e.code, True, elapsed)
            raise
        elapsed = time.perf_counter() - started
        metrics.observe_webhook(hook.name, kind, req.operation, 200, False, elapsed)
        return verdict

    async def _call_once(self, hook: Hook, req: AdmissionRequest) -> review.Verdict | None:
        """Call ``hook``; its verdict when allowed, its refusal raised."""
        version = review.review_version(hook.review_versions)
        if not version:
            raise CallError(
                "could not create admission objects: webhook does not accept known "
                "AdmissionReview versions (v1, v1beta1)"
            )
        api_version = f"{self.review_group}/{version}"
        uid, body = review.new_review(req, version, self.review_group)
        plugin = "MutatingAdmissionWebhook" if hook.mutating else "ValidatingAdmissionWebhook"
        span = _span(req, hook, uid)
        try:
            answer = await self.caller.call(
                hook.client_config, body, hook.timeout, plugin, req.trace, span
            )
            verdict = review.verify(answer, uid, api_version, hook.mutating)
        except InvalidResponse as e:
            raise CallError(f"received invalid webhook response: {e}") from None
        finally:
            if span is not None:
                span.end()
        for key, value in verdict.audit_annotations.items():
            req.audit_annotations[f"{hook.name}/{key}"] = value
        req.warnings.extend(verdict.warnings)
        if not verdict.allowed:
            raise review.denied(hook.name, verdict.result)
        return verdict


def _span(req: AdmissionRequest, hook: Hook, uid: str) -> Any:
    """kube's span for one webhook call, when the request is traced."""
    if req.trace is None:
        return None
    kind = "mutating" if hook.mutating else "validating"
    return req.trace.child(
        f"Call {kind} webhook",
        {
            "configuration": hook.configuration,
            "webhook": hook.name,
            "resource": f"{req.group}/{req.version}, Resource={req.resource}",  # Go's GVR
            "subresource": req.subresource,
            "operation": req.operation,
            "UID": uid,
        },
    )
