"""Admission webhooks as the dispatchers use them, compiled from the stored configurations.

kube's webhook plugins read Mutating/ValidatingWebhookConfigurations from an informer,
sort the configurations by name and call their webhooks in order.  ``HookSource`` does
the same over the watch hub: each change marks the list stale, and the next request
rebuilds it (selectors parsed and match conditions compiled once per configuration
revision, not per request).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from twisted.logger import Logger

from platform_api.admission.matching import (
    Condition,
    Rule,
    compile_condition,
    compile_rule,
    compile_selector,
)
from platform_api.controllers.informer import Informer
from platform_api.selectors import LabelSelector
from platform_api.storage.interface import Storage
from platform_api.storage.watch import WatchHub

log = Logger()
Obj = dict[str, Any]

# kube's v1 defaults, for configurations stored before defaulting ran (or by hand).
DEFAULT_TIMEOUT = 10
MAX_MATCH_CONDITIONS = 64


@dataclass(frozen=True)
class Hook:
    """One webhook of a configuration, ready to match and call."""

    uid: str  # kube's accessor UID: <configuration>/<webhook>/<index>
    configuration: str
    name: str
    mutating: bool
    rules: tuple[Rule, ...]
    match_policy: str
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    conditions: tuple[Condition, ...]
    client_config: Obj
    timeout: int
    failure_policy: str
    side_effects: str
    review_versions: tuple[str, ...]
    reinvoke: bool
    selector_error: str = ""  # a selector that does not parse: the call fails closed

    @property
    def ignores_failures(self) -> bool:
        return self.failure_policy == "Ignore"


def compile_hook(configuration: str, index: int, raw: Obj, mutating: bool) -> Hook:
    namespaces, ns_error = compile_selector(raw.get("namespaceSelector"))
    objects, obj_error = compile_selector(raw.get("objectSelector"))
    return Hook(
        uid=f"{configuration}/{raw.get('name', '')}/{index}",
        configuration=configuration,
        name=str(raw.get("name", "")),
        mutating=mutating,
        rules=tuple(compile_rule(r) for r in raw.get("rules") or ()),
        match_policy=raw.get("matchPolicy") or "Equivalent",
        namespace_selector=namespaces,
        object_selector=objects,
        conditions=tuple(compile_condition(c) for c in raw.get("matchConditions") or ()),
        client_config=raw.get("clientConfig") or {},
        timeout=int(raw.get("timeoutSeconds") or DEFAULT_TIMEOUT),
        failure_policy=raw.get("failurePolicy") or "Fail",
        side_effects=raw.get("sideEffects") or "",
        review_versions=tuple(raw.get("admissionReviewVersions") or ()),
        reinvoke=raw.get("reinvocationPolicy") == "IfNeeded",
        selector_error=ns_error or obj_error,
    )


def compile_configuration(obj: Obj, mutating: bool) -> list[Hook]:
    name = obj.get("metadata", {}).get("name", "")
    return [compile_hook(name, i, raw, mutating) for i, raw in enumerate(obj.get("webhooks") or ())]


class HookSource:
    """The webhooks of every stored configuration of one kind, in kube's call order."""

    def __init__(self, storage: Storage, hub: WatchHub, prefix: bytes, mutating: bool) -> None:
        self.mutating = mutating
        self.informer = Informer(storage, hub, (prefix,))
        self._compiled: dict[bytes, tuple[int, list[Hook]]] = {}
        self._hooks: list[Hook] | None = []
        self.informer.add_listener(self._changed)

    def start(self) -> None:
        self.informer.start()

    def stop(self) -> None:
        self.informer.stop()

    def _changed(self, key: bytes, _old: Obj | None, _new: Obj | None) -> None:
        self._hooks = None

    def hooks(self) -> list[Hook]:
        """Every webhook, configurations sorted by name; empty until started."""
        if self._hooks is None:
            self._hooks = self._rebuild()
        return self._hooks

    def _rebuild(self) -> list[Hook]:
        compiled: dict[bytes, tuple[int, list[Hook]]] = {}
        for key, obj in self.informer.objects.items():
            revision = int(obj.get("metadata", {}).get("resourceVersion") or 0)
            cached = self._compiled.get(key)
            if cached is None or cached[0] != revision:
                cached = (revision, compile_configuration(obj, self.mutating))
            compiled[key] = cached
        self._compiled = compiled
        ordered = sorted(
            self.informer.objects.items(), key=lambda kv: kv[1].get("metadata", {}).get("name")
        )
        return [hook for key, _ in ordered for hook in compiled[key][1]]
