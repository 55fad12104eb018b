"""Priority: pods get the value and preemption policy of their PriorityClass (kube's plugin).

A new pod naming a class gets its value; one naming none gets the global default class
(the lowest-valued one if several claim it) or priority 0.  A pod may not bring a
different value or policy of its own; updates keep the stored ones.  PriorityClass
writes may not add a second global default (the two system classes are protected from
deletes by their storage, registry/scheduling.py, as in kube).
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext
from platform_api.registry.scheduling import PREEMPT_LOWER
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions

Obj = dict[str, Any]
GROUP = "scheduling.platform.io"


class Priority:
    name = "Priority"
    resources = frozenset({("", "pods"), (GROUP, "priorityclasses")})

    def __init__(self, classes: Store) -> None:
        self._classes = classes

    def _default_class(self) -> Obj | None:
        """The global default class with the lowest value, if any."""
        best: Obj | None = None
        for stored in self._classes.list("", ListOptions()).items:
            pc = stored.object
            if pc.get("globalDefault") and (
                best is None or best.get("value", 0) > pc.get("value", 0)
            ):
                best = pc
        return best

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.subresource or obj is None or (rt.group, rt.plural) != ("", "pods"):
            return
        spec = obj.setdefault("spec", {})
        if attrs.operation == "UPDATE":
            old_spec = (old or {}).get("spec") or {}
            for key in ("priority", "preemptionPolicy"):
                if spec.get(key) is None and old_spec.get(key) is not None:
                    spec[key] = old_spec[key]
        elif attrs.operation == "CREATE":
            self._admit_pod(attrs, obj, spec)

    def _admit_pod(self, attrs: Attributes, pod: Obj, spec: Obj) -> None:
        name = spec.get("priorityClassName") or ""
        if name:
            try:
                pc = self._classes.get("", name).object
            except errors.StatusError as e:
                if e.code == 404:
                    raise forbidden(
                        attrs, pod, f"no PriorityClass with name {name} was found"
                    ) from None
                raise
            value, policy = pc.get("value", 0), pc.get("preemptionPolicy")
        else:
            default = self._default_class()
            if default is None:
                value, policy = 0, PREEMPT_LOWER
            else:
                name, value = default["metadata"]["name"], default.get("value", 0)
                policy = default.get("preemptionPolicy")
        if name:
            spec["priorityClassName"] = name
        given = spec.get("priority")
        if given is not None and given != value:
            raise forbidden(
                attrs,
                pod,
                f"the integer value of priority ({given}) must not be provided in pod spec; "
                f"priority admission controller computed {value} from the given PriorityClass name",
            )
        spec["priority"] = value
        if policy is not None:
            wanted = spec.get("preemptionPolicy")
            if wanted is not None and wanted != policy:
                raise forbidden(
                    attrs,
                    pod,
                    f"the string value of PreemptionPolicy ({wanted}) must not be provided in pod "
                    f"spec; priority admission controller computed {policy} from the given "
                    "PriorityClass name",
                )
            spec["preemptionPolicy"] = policy

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.subresource or (rt.group, rt.plural) != (GROUP, "priorityclasses"):
            return
        if attrs.operation == "DELETE":
            return
        if obj is None or not obj.get("globalDefault"):
            return
        default = self._default_class()
        if default is None:
            return
        current = default["metadata"]["name"]
        if attrs.operation == "CREATE" or current != obj.get("metadata", {}).get("name"):
            why = (
                f"PriorityClass {current} is already marked as default. Only one default can exist"
            )
            raise forbidden(attrs, obj, why)


def build(ctx: PluginContext) -> Priority:
    return Priority(ctx.stores[(GROUP, "v1", "priorityclasses")])
