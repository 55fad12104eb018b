"""The stored policies and bindings, kept compiled from the watch hub (kube's informers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.admission.policy.compiled import (
    Binding,
    Policy,
    compile_binding,
    compile_policy,
)
from platform_api.controllers.informer import Informer
from platform_api.storage.interface import Storage
from platform_api.storage.watch import WatchHub

Obj = dict[str, Any]


class PolicySource:
    """Every policy with the bindings that name it, policies sorted by name.  Validating
    and mutating policies share it; ``compile`` makes a policy of a stored object."""

    def __init__(
        self,
        storage: Storage,
        hub: WatchHub,
        policies: bytes,
        bindings: bytes,
        compile: Callable[[Obj], Any] = compile_policy,
    ) -> None:
        self._compile = compile
        self.policies = Informer(storage, hub, (policies,))
        self.bindings = Informer(storage, hub, (bindings,))
        self._compiled: dict[bytes, tuple[str, Any]] = {}
        self._hooks: list[tuple[Any, list[Binding]]] | None = []
        for informer in (self.policies, self.bindings):
            informer.add_listener(self._changed)

    def start(self) -> None:
        self.policies.start()
        self.bindings.start()

    def stop(self) -> None:
        self.policies.stop()
        self.bindings.stop()

    def _changed(self, _key: bytes, _old: Obj | None, _new: Obj | None) -> None:
        self._hooks = None

    def hooks(self) -> list[tuple[Any, list[Binding]]]:
        if self._hooks is None:
            self._hooks = self._rebuild()
        return self._hooks

    def _cached(self, key: bytes, obj: Obj, build: Any) -> Any:
        revision = str(obj.get("metadata", {}).get("resourceVersion", ""))
        hit = self._compiled.get(key)
        if hit is None or hit[0] != revision:
            hit = self._compiled[key] = (revision, build(obj))
        return hit[1]

    def _rebuild(self) -> list[tuple[Any, list[Binding]]]:
        live = set(self.policies.objects) | set(self.bindings.objects)
        self._compiled = {k: v for k, v in self._compiled.items() if k in live}
        by_policy: dict[str, list[Binding]] = {}
        for key, obj in sorted(self.bindings.objects.items()):
            binding: Binding = self._cached(key, obj, compile_binding)
            by_policy.setdefault(binding.policy, []).append(binding)
        out = []
        for key, obj in self.policies.objects.items():
            policy: Policy = self._cached(key, obj, self._compile)
            if policy.name in by_policy:
                out.append((policy, by_policy[policy.name]))
        return sorted(out, key=lambda pair: pair[0].name)
