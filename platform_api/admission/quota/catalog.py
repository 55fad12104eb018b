"""Which evaluator measures a resource, and which resources quota never charges."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from platform_api.admission.quota.deviceclaims import DeviceClaimEvaluator, DeviceClasses
from platform_api.admission.quota.evaluators import (
    LEGACY_ALIASES,
    ClaimEvaluator,
    Evaluator,
    ServiceEvaluator,
)
from platform_api.admission.quota.pods import PodEvaluator

# kube's DefaultIgnoredResources: never charged, whatever a quota says.
IGNORED = frozenset(
    (
        ("", "bindings"),
        ("", "componentstatuses"),
        ("", "events"),
        ("events.platform.io", "events"),
        ("authentication.platform.io", "tokenreviews"),
        ("authentication.platform.io", "selfsubjectreviews"),
        ("authorization.platform.io", "subjectaccessreviews"),
        ("authorization.platform.io", "selfsubjectaccessreviews"),
        ("authorization.platform.io", "localsubjectaccessreviews"),
        ("authorization.platform.io", "selfsubjectrulesreviews"),
    )
)


class Registry:
    """Evaluators by (group, resource); any other resource gets an object counter."""

    def __init__(
        self, clock: Callable[[], float] = time.time, device_classes: DeviceClasses | None = None
    ) -> None:
        """``device_classes``: the DeviceClasses, where dynamic resource allocation is served
        (their extended-resource names are charged as such)."""
        core: list[Evaluator] = [
            PodEvaluator(clock),
            ServiceEvaluator(),
            ClaimEvaluator(),
            DeviceClaimEvaluator(device_classes),
        ]
        self._by: dict[tuple[str, str], Evaluator] = {(ev.group, ev.plural): ev for ev in core}

    def get(self, group: str, plural: str) -> Evaluator | None:
        """None for the resources quota never charges."""
        key = (group, plural)
        if key in IGNORED:
            return None
        if key not in self._by:
            self._by[key] = Evaluator(group, plural)
        return self._by[key]

    def for_names(self, names: Iterable[str]) -> list[Evaluator]:
        """The evaluators that measure some of ``names`` (a quota's hard limits)."""
        wanted = list(names)
        for name in wanted:
            if name.startswith("count/"):
                plural, _, group = name[len("count/") :].partition(".")
                self.get(group, plural)
        for plural in LEGACY_ALIASES:
            self.get("", plural)
        return [ev for ev in self._by.values() if ev.matching_resources(wanted)]
