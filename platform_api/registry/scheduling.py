"""PriorityClass (scheduling.platform.io): kube's strategy and ValidatePriorityClass.

User classes go up to one billion; names starting ``system-`` belong to the two classes
the server creates at start, with their exact values; value and preemption policy never
change.  Deleting a system class is refused before it is read, as kube's REST storage
refuses it (a deletecollection, which kube's generic store runs, is not).
"""

from __future__ import annotations

from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError

SYSTEM_PREFIX = "system-"
HIGHEST_USER_PRIORITY = 1_000_000_000
PREEMPT_LOWER = "PreemptLowerPriority"
PREEMPTION_POLICIES = [PREEMPT_LOWER, "Never"]
# kube's systemPriorityClasses: name -> value (neither is the global default).
SYSTEM_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}


def system_class(name: str) -> Obj:
    """A system PriorityClass as kube-apiserver creates it at start."""
    description = (
        "Used for system critical pods that must not be moved from their current node."
        if name == "system-node-critical"
        else "Used for system critical pods that must run in the cluster, but can be moved "
        "to another node if necessary."
    )
    return {
        "apiVersion": "scheduling.platform.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": SYSTEM_CLASSES[name],
        "description": description,
    }


def _known_system(name: str, value: object, global_default: bool) -> str:
    """Why a ``system-`` class is not one of kube's ("" when it is)."""
    if name not in SYSTEM_CLASSES:
        return f"{name} is not a known system priority class"
    if value != SYSTEM_CLASSES[name]:
        return f"value of {name} PriorityClass must be {SYSTEM_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def validate_priority_class(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    name = obj.get("metadata", {}).get("name", "")
    value = obj.get("value", 0)
    if name.startswith(SYSTEM_PREFIX):
        why = _known_system(name, value, bool(obj.get("globalDefault")))
        if why:
            errs.append(
                field.forbidden(
                    "metadata.name",
                    f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved for "
                    f"system use only. error: {why}",
                )
            )
    elif isinstance(value, int) and value > HIGHEST_USER_PRIORITY:
        errs.append(
            field.forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None:
        errs += validate_preemption_policy(policy, "preemptionPolicy")
    return errs


def validate_preemption_policy(policy: str, path: str) -> list[FieldError]:
    if policy == "":
        return [field.required(path)]
    if policy not in PREEMPTION_POLICIES:
        return [field.not_supported(path, policy, PREEMPTION_POLICIES)]
    return []


@register("scheduling.platform.io", "PriorityClass")
class PriorityClassStrategy(GenericStrategy):
    def refuses_delete(self, name: str) -> str:
        """Why a delete of ``name`` is refused before it is read ("" when it is not)."""
        return (
            "this is a system priority class and cannot be deleted"
            if name in SYSTEM_CLASSES
            else ""
        )

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj["metadata"]["generation"] = 1

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_priority_class(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old)
        if new.get("value", 0) != old.get("value", 0):
            errs.append(field.forbidden("value", "may not be changed in an update."))
        if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
            errs.append(
                field.invalid("preemptionPolicy", new.get("preemptionPolicy"), "field is immutable")
            )
        return errs
