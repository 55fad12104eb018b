"""``pods/resize``: in-place changes of a pod's cpu and memory, with kube's rules.

A write there takes each container's ``resources`` and ``resizePolicy`` (regular
containers and sidecars, by name) and nothing else; the result must still be a valid
pod, keep its QoS class, and differ from the old one in cpu and memory only.
"""

from __future__ import annotations

import copy
from typing import Any

from platform_api.registry.defaults import apply_defaults
from platform_api.registry.podqos import QOS_RESOURCES, pod_qos
from platform_api.registry.podspec import validate_pod_spec
from platform_api.registry.podupdate import plain
from platform_api.registry.strategy import StatusStrategy, revert_to_old, spec_of
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.objectmeta import validate_object_meta_update

Obj = dict[str, Any]
RESIZED = ("resources", "resizePolicy")


def _resizable(spec: Obj) -> list[Obj]:
    """The containers a resize may touch: regular ones and sidecars."""
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    return list(spec.get("containers") or []) + sidecars


class PodResizeStrategy(StatusStrategy):
    body_is_kind = True

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        request = revert_to_old(new, old)
        wanted = {c.get("name"): c for c in _resizable(request.get("spec") or {})}
        for container in _resizable(new["spec"]):
            given = wanted.get(container.get("name"))
            if given is None:
                continue
            for key in RESIZED:
                if given.get(key) is None:
                    container.pop(key, None)
                else:
                    container[key] = given[key]
        apply_defaults("", "Pod", new)  # requests from limits, as the decoder sets them
        if spec_of(new) != spec_of(old):
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_object_meta_update(new["metadata"], old["metadata"])
        errs += validate_pod_spec(new.get("spec") or {}, "spec", new["metadata"].get("name", ""))
        before = (old.get("status") or {}).get("qosClass") or pod_qos(old)
        if pod_qos(new) != before:
            why = "Pod QOS Class may not change as a result of resizing"
            errs.append(field.invalid("spec", before, why))
        if plain(_without_cpu_memory(new["spec"], old["spec"])) != plain(old["spec"]):
            errs.append(field.forbidden("spec", "only cpu and memory resources are mutable"))
        return errs


def _without_cpu_memory(spec: Obj, old_spec: Obj) -> Obj:
    """``spec`` with its containers' cpu and memory put back as they were."""
    out = copy.deepcopy(spec)
    old = {c.get("name"): c for c in _resizable(old_spec)}
    for container in _resizable(out):
        before = (old.get(container.get("name")) or {}).get("resources") or {}
        resources = container.setdefault("resources", {})
        for key in ("limits", "requests"):
            if before.get(key) is None:
                resources.pop(key, None)
                continue
            values = {k: v for k, v in (resources.get(key) or {}).items() if k not in QOS_RESOURCES}
            values.update({k: v for k, v in before[key].items() if k in QOS_RESOURCES})
            resources[key] = values
    return out
