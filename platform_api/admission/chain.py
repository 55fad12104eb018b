"""Admission: mutating plugins and webhooks first, validating ones inside the registry's
retry loop.

A plugin implements ``admit`` (kube's MutationInterface: may change the object) and/or
``validate`` (ValidationInterface: must not).  Either may return an awaitable.  A create
runs the mutating phase once, before the store; an update runs it inside the store's
compare-and-swap loop, on the updated object, as kube's update handler does; the
validating phase runs on every attempt, against the object about to be written.  After
the plugins come kube's webhook plugins, MutatingAdmissionWebhook (last of the mutating
phase) and ValidatingAdmissionWebhook.  For a DELETE both phases see the stored object.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from platform_api.admission import metrics, plugintimes
from platform_api.admission.equivalence import Equivalence
from platform_api.admission.exchange import admission_request, merging, report
from platform_api.admission.interface import AdmissionPlugin, Attributes, Mutating, Validating
from platform_api.admission.plugintimes import ADMIT, VALIDATE
from platform_api.admission.policy.dispatch import PolicyAdmission
from platform_api.admission.policy.mutate import MutatingPolicyAdmission
from platform_api.admission.policy.mutate import Round as PolicyRound
from platform_api.admission.policy.mutating import Atomics, Merge
from platform_api.admission.request import AdmissionRequest
from platform_api.admission.webhook.dispatch import Round as WebhookRound
from platform_api.admission.webhook.dispatch import WebhookAdmission
from platform_api.registry.prepare import ensure_namespace, generate_name
from platform_api.scheme.types import ResourceType

if TYPE_CHECKING:
    from platform_api.endpoints.scope import Scope
    from platform_api.registry.store import Admit, Mutate

Obj = dict[str, Any]
T = TypeVar("T")
P = TypeVar("P", bound="AdmissionPlugin")
MUTATING_POLICY, MUTATING_WEBHOOK = "MutatingAdmissionPolicy", "MutatingAdmissionWebhook"
VALIDATING_POLICY, VALIDATING_WEBHOOK = "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook"


class AdmissionChain:
    def __init__(
        self,
        plugins: list[AdmissionPlugin],
        webhooks: WebhookAdmission | None = None,
        policies: PolicyAdmission | None = None,
        mutating_policies: MutatingPolicyAdmission | None = None,
        equivalence: Equivalence | None = None,
        enabled: Sequence[str] = (),
    ) -> None:
        self.plugins = plugins
        # The plugin names the server runs, in kube's order (its per-plugin latency
        # family observes each, plugintimes.py); by default the built ones.
        self.enabled = tuple(enabled) or tuple(getattr(p, "name", "") for p in plugins)
        self._enabled = frozenset(self.enabled)
        self._plans: dict[tuple[str, bool, str, str, str], plugintimes.Plan] = {}
        self._idle: dict[tuple[str, str, str], plugintimes.Idle | None] = {}
        # The versions webhooks and policies may see a request at; the CRD installer
        # keeps its converters current.
        self.equivalence = equivalence
        self.mutating_policies = mutating_policies
        mutating: list[Mutating] = [p for p in plugins if hasattr(p, "admit")]  # type: ignore[misc]
        # kube allocates a Service's cluster IPs and node ports in its store (BeginCreate,
        # BeginUpdate): after every mutation, webhooks' and policies' too, before validation.
        self.mutating = [p for p in mutating if not getattr(p, "allocates", False)]
        self.allocating = [p for p in mutating if getattr(p, "allocates", False)]
        validating: list[Validating] = [p for p in plugins if hasattr(p, "validate")]  # type: ignore[misc]
        # kube runs ResourceQuota (and AlwaysDeny) after the validating webhooks, so that
        # quota is charged only for what everything else admitted.
        self.validating = [p for p in validating if not getattr(p, "runs_last", False)]
        self.last = [p for p in validating if getattr(p, "runs_last", False)]
        self.webhooks = webhooks
        self.policies = policies
        self._acting: dict[tuple[int, str, str], list[Any]] = {}

    def _on(self, plugins: list[P], rt: ResourceType) -> list[P]:
        """Those of ``plugins`` that may act on ``rt``, in the chain's order."""
        key = (id(plugins), rt.group, rt.plural)
        found = self._acting.get(key)
        if found is None:
            found = self._acting[key] = [p for p in plugins if _acts_on(p, rt)]
        return found

    def _plan(self, step: str, attrs: Attributes, last: bool = False) -> plugintimes.Plan:
        """The built-in plugins of a step, as kube's chain asks them (plugintimes.py)."""
        rt = attrs.resource
        key = (step, last, attrs.operation, rt.group, rt.plural)
        found = self._plans.get(key)
        if found is None:
            plugins: list[Any] = (
                self.mutating if step == ADMIT else (self.last if last else self.validating)
            )
            acting = self._on(plugins, rt)
            found = plugintimes.plan(self.enabled, acting, step, attrs.operation, last)
            self._plans[key] = found
        return found

    async def _part(
        self, name: str, step: str, attrs: Attributes, call: Callable[..., Any], *args: Any
    ) -> Any:
        """A policy or webhook plugin's call, observed as kube observes that plugin."""
        if name in self._enabled and plugintimes.handles(name, step, attrs.operation):
            return await plugintimes.timed((name, attrs.operation, step), call, *args)
        return await call(*args)

    def _nothing(self, name: str, step: str, attrs: Attributes) -> None:
        """A policy or webhook plugin with nothing configured: kube's returns at once."""
        key = (name, step, attrs.operation)
        if key not in self._idle:
            self._idle[key] = plugintimes.idle_for(name, step, attrs.operation, self._enabled)
        idle = self._idle[key]
        if idle is not None:
            idle.count += 1

    def start(self) -> None:
        """Webhooks and policies read their configurations from informers, and so do the
        built-in plugins that have ``start`` (namespaces, quotas: kube's listers)."""
        for plugin in self._informed():
            plugin.start()

    def stop(self) -> None:
        for plugin in self._informed():
            plugin.stop()

    def _informed(self) -> list[Any]:
        extensions = (self.webhooks, self.policies, self.mutating_policies)
        built_in = [p for p in self.plugins if hasattr(p, "start")]
        return [p for p in (*extensions, *built_in) if p is not None]

    @staticmethod
    def attributes(scope: Scope, operation: str, name: str = "") -> Attributes:
        return Attributes(
            operation,
            scope.resource,
            scope.info.subresource,
            scope.namespace,
            name or scope.name,
            scope.ctx.user,
            scope.ctx.dry_run,
            scope.ctx.warn,
            scope.ctx.annotate,
            scope.ctx.on_failure,
            scope.ctx.on_success,
        )

    async def admit(self, scope: Scope, operation: str, obj: Obj | None, name: str = "") -> None:
        """The mutating phase of a create: once, before the registry sees the request.
        Policy and webhook mutations are applied to ``obj`` in place."""
        await _timed("admit", operation, self._admit(scope, operation, obj, name))

    async def _admit(self, scope: Scope, operation: str, obj: Obj | None, name: str) -> None:
        if obj is not None:
            ensure_namespace(scope.resource, obj, scope.namespace)
        attrs = self.attributes(scope, operation, name)
        await self._plan(ADMIT, attrs).run("admit", attrs, obj, None)
        if obj is not None and self._extensions_mutate():
            mutated = await self._mutate_extensions(scope, attrs, obj, None)
            if mutated is not obj:
                obj.clear()
                obj.update(mutated)
        else:
            self._no_mutating_extensions(attrs)
        await self._allocate(attrs, obj, None)

    async def _allocate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        """The allocating plugins, where kube's store begins a create or update: a new
        object that asked for a generated name has it by then (the store fills it in
        before BeginCreate), so the addresses it records name their owner."""
        plugins = self._on(self.allocating, attrs.resource)
        if not plugins:
            return
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if old is None and isinstance(meta, dict) and meta.get("generateName"):
            if not meta.get("name"):
                meta["name"] = generate_name(meta["generateName"])
            attrs = dataclasses.replace(attrs, name=meta["name"])
        for plugin in plugins:
            pending = plugin.admit(attrs, obj, old)
            if pending is not None:
                await pending

    def _no_mutating_extensions(self, attrs: Attributes) -> None:
        self._nothing(MUTATING_POLICY, ADMIT, attrs)
        self._nothing(MUTATING_WEBHOOK, ADMIT, attrs)

    def _extensions_mutate(self) -> bool:
        """Whether a mutating policy or webhook is configured."""
        policies, webhooks = self.mutating_policies, self.webhooks
        return (policies is not None and policies.active()) or (
            webhooks is not None and webhooks.has_mutating()
        )

    async def _mutate_extensions(
        self, scope: Scope, attrs: Attributes, obj: Obj, old: Obj | None
    ) -> Obj:
        """kube's order: MutatingAdmissionPolicy, then MutatingAdmissionWebhook; when
        either changed the object, kube's second round of the chain's mutations."""
        req = admission_request(scope, attrs, obj, old)
        policies, webhooks = self.mutating_policies, self.webhooks
        try:
            first, merged = None, None
            if policies is not None and policies.active():
                merged = merge, atomics = merging(scope)
                first = await self._part(
                    MUTATING_POLICY, ADMIT, attrs, policies.mutate, req, merge, atomics
                )
            else:
                self._nothing(MUTATING_POLICY, ADMIT, attrs)
            hooks = None
            if webhooks is not None and webhooks.has_mutating():
                hooks = await self._part(MUTATING_WEBHOOK, ADMIT, attrs, webhooks.mutate, req)
            else:
                self._nothing(MUTATING_WEBHOOK, ADMIT, attrs)
            if (first is not None and first.dirty) or (hooks is not None and hooks.changed):
                await self._second_round(attrs, req, first, hooks, merged)
        finally:
            report(scope, req)
        if req.object is None:
            return obj
        mutated = getattr(scope.store.strategy, "mutated", None)  # a custom resource's
        if req.object is not obj and mutated is not None:
            return mutated(req.object)
        return req.object

    async def _second_round(
        self,
        attrs: Attributes,
        req: AdmissionRequest,
        first: PolicyRound | None,
        hooks: WebhookRound | None,
        merged: tuple[Merge, Atomics] | None,
    ) -> None:
        """kube's reinvoker: every built-in mutating plugin again (a default a webhook
        removed comes back), the IfNeeded policies that ran, then the IfNeeded webhooks
        whose output something changed since."""
        assert req.object is not None
        await self._plan(ADMIT, attrs).run("admit", attrs, req.object, req.old_object)
        if first is not None and first.reinvoke:
            assert self.mutating_policies is not None and merged is not None
            await self.mutating_policies.mutate(req, *merged, only=first.reinvoke)
        if hooks is not None:
            assert self.webhooks is not None
            await self.webhooks.mutate(req, again=hooks)

    def mutator(self, scope: Scope) -> Mutate | None:
        """The mutating phase of an update, for the store's retry loop (None: nothing)."""
        if not self.mutating and not self.allocating and not self._extensions_mutate():
            return None

        async def mutate(obj: Obj, old: Obj | None) -> Obj:
            operation = "UPDATE" if old is not None else "CREATE"
            return await _timed("admit", operation, mutate_once(obj, old, operation))

        async def mutate_once(obj: Obj, old: Obj | None, operation: str) -> Obj:
            ensure_namespace(scope.resource, obj, scope.namespace)
            name = obj.get("metadata", {}).get("name", "")
            attrs = self.attributes(scope, operation, name)
            await self._plan(ADMIT, attrs).run("admit", attrs, obj, old)
            if self._extensions_mutate():
                obj = await self._mutate_extensions(scope, attrs, obj, old)
            else:
                self._no_mutating_extensions(attrs)
            await self._allocate(attrs, obj, old)
            return obj

        return mutate

    def validator(self, scope: Scope, operation: str) -> Admit:
        """The validating phase, for the store to run against each object it would write."""

        async def validate(obj: Obj, old: Obj | None) -> None:
            # A PUT that finds nothing creates: admission sees a CREATE.
            op = "CREATE" if operation == "UPDATE" and old is None else operation
            await _timed("validate", op, validate_once(obj, old, op))

        async def validate_once(obj: Obj, old: Obj | None, op: str) -> None:
            name = obj.get("metadata", {}).get("name", "") if obj else ""
            attrs = self.attributes(scope, op, name)
            await self._plan(VALIDATE, attrs).run("validate", attrs, obj, old)
            if op == "DELETE":  # the policies see no object; the webhooks, both phases
                await self._validate_extensions(scope, attrs, None, old, webhooks=False)
                await self._delete_webhooks(scope, attrs, old)
            else:
                await self._validate_extensions(scope, attrs, obj, old)
            await self._plan(VALIDATE, attrs, last=True).run("validate", attrs, obj, old)

        return validate

    async def connect(self, scope: Scope, options: Obj) -> None:
        """kube's ConnectResource: the mutating, then the validating phase of a CONNECT,
        with the request's options (``PodExecOptions``...) as the object, before the
        target is looked up.  Of kube's plugins only the policies, the webhooks and
        AlwaysAdmit/AlwaysDeny handle CONNECT; the other built-in ones are not asked."""
        attrs = self.attributes(scope, "CONNECT")
        await _timed("admit", "CONNECT", self._admit_connect(scope, attrs, options))
        await _timed("validate", "CONNECT", self._validate_connect(scope, attrs, options))

    async def _admit_connect(self, scope: Scope, attrs: Attributes, options: Obj) -> None:
        await self._plan(ADMIT, attrs).run("admit", attrs, options, None)
        if self._extensions_mutate():
            await self._mutate_extensions(scope, attrs, options, None)
        else:
            self._no_mutating_extensions(attrs)

    async def _validate_connect(self, scope: Scope, attrs: Attributes, options: Obj) -> None:
        await self._plan(VALIDATE, attrs).run("validate", attrs, options, None)
        await self._validate_extensions(scope, attrs, options, None)
        await self._plan(VALIDATE, attrs, last=True).run("validate", attrs, options, None)

    async def _validate_extensions(
        self,
        scope: Scope,
        attrs: Attributes,
        obj: Obj | None,
        old: Obj | None,
        webhooks: bool = True,
    ) -> None:
        """ValidatingAdmissionPolicy, then (unless ``webhooks`` is False) the validating
        webhooks, as kube orders them; those not configured are not asked."""
        parts: list[tuple[str, Any]] = [(VALIDATING_POLICY, self.policies)]
        if webhooks:
            parts.append((VALIDATING_WEBHOOK, self.webhooks))
        for name, part in parts:
            ready = part is not None and (
                part.active() if name == VALIDATING_POLICY else part.has_validating()
            )
            if not ready:
                self._nothing(name, VALIDATE, attrs)
                continue
            req = admission_request(scope, attrs, obj, old)
            try:
                await self._part(name, VALIDATE, attrs, part.validate, req)
            finally:
                report(scope, req)

    async def _delete_webhooks(self, scope: Scope, attrs: Attributes, old: Obj | None) -> None:
        """kube's delete admission: mutating then validating, on the stored object."""
        webhooks = self.webhooks
        if webhooks is None or not (webhooks.has_mutating() or webhooks.has_validating()):
            self._nothing(VALIDATING_WEBHOOK, VALIDATE, attrs)
            return
        req = admission_request(scope, attrs, None, old)
        try:
            await webhooks.mutate(req)
            await self._part(VALIDATING_WEBHOOK, VALIDATE, attrs, webhooks.validate, req)
        finally:
            report(scope, req)


async def _timed(kind: str, operation: str, step: Awaitable[T]) -> T:
    """One admission step (kube's ``admit`` or ``validate``), timed for its metric."""
    started = time.perf_counter()
    try:
        result = await step
    except BaseException:
        metrics.observe_step(kind, operation, True, time.perf_counter() - started)
        raise
    metrics.observe_step(kind, operation, False, time.perf_counter() - started)
    return result


def _acts_on(plugin: AdmissionPlugin, rt: ResourceType) -> bool:
    resources = getattr(plugin, "resources", None)
    return resources is None or (rt.group, rt.plural) in resources
