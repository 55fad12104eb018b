"""RuntimeClass: a new pod's ``runtimeClassName`` must name a RuntimeClass, whose
overhead and scheduling constraints the pod takes.

The mutating half copies the class's ``overhead.podFixed`` into ``spec.overhead``
(refusing a pod that asks for a different one), merges its node selector (a key the
pod sets to another value is a conflict) and adds its tolerations; the validating half
checks, after every other mutation, that the overhead is still the class's, and that a
pod without such a class has none.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.quantity import QuantityError, parse_quantity
from platform_api.storage.interface import Storage, StorageError
from platform_api.validation.tolerations import merge_tolerations

Obj = dict[str, Any]
MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
UNEXPECTED = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"


def same_resources(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal resource lists: the same names, each of the same amount (``1`` is ``1000m``)."""
    if set(a) != set(b):
        return False
    try:
        return all(parse_quantity(str(a[k])) == parse_quantity(str(b[k])) for k in a)
    except QuantityError:
        return a == b


class RuntimeClassAdmission:
    name = "RuntimeClass"
    resources = frozenset({("", "pods")})

    def __init__(self, storage: Storage, prefix: bytes) -> None:
        self._storage = storage
        self._prefix = prefix  # key prefix of the runtimeclasses store (cluster-scoped)

    @staticmethod
    def _applies(attrs: Attributes, obj: Obj | None) -> bool:
        rt = attrs.resource
        return (
            attrs.operation == "CREATE"
            and not attrs.subresource
            and (rt.group, rt.plural) == ("", "pods")
            and obj is not None
        )

    def _runtime_class(self, attrs: Attributes, pod: Obj) -> Obj | None:
        name = (pod.get("spec") or {}).get("runtimeClassName")
        if name is None:
            return None
        try:
            return self._storage.get(self._prefix + str(name).encode()).object
        except StorageError:
            raise _forbidden(attrs, pod, f'pod rejected: RuntimeClass "{name}" not found') from None

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not self._applies(attrs, obj):
            return
        assert obj is not None
        runtime_class = self._runtime_class(attrs, obj)
        if runtime_class is None:
            return
        spec = obj.setdefault("spec", {})
        overhead = runtime_class.get("overhead")
        if overhead is not None:
            fixed = overhead.get("podFixed") or {}
            if spec.get("overhead") and not same_resources(fixed, spec["overhead"]):
                raise _forbidden(attrs, obj, MISMATCH)
            _set(spec, "overhead", dict(fixed))
        scheduling = runtime_class.get("scheduling")
        if scheduling is not None:
            _schedule(attrs, obj, spec, scheduling)

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not self._applies(attrs, obj):
            return
        assert obj is not None
        runtime_class = self._runtime_class(attrs, obj)
        spec = obj.get("spec") or {}
        overhead = (runtime_class or {}).get("overhead")
        if overhead is not None:
            if not same_resources(overhead.get("podFixed") or {}, spec.get("overhead") or {}):
                raise _forbidden(attrs, obj, MISMATCH)
        elif spec.get("overhead") is not None:
            raise _forbidden(attrs, obj, UNEXPECTED)


def _set(spec: Obj, key: str, value: Any) -> None:
    """Set a spec field, leaving it out when Go would (an empty map or list)."""
    if value:
        spec[key] = value
    else:
        spec.pop(key, None)


def _schedule(attrs: Attributes, pod: Obj, spec: Obj, scheduling: Obj) -> None:
    wanted = scheduling.get("nodeSelector") or {}
    selector = spec.get("nodeSelector")
    if selector is None:
        selector = dict(wanted)
    else:
        for key, value in wanted.items():
            if key in selector and selector[key] != value:
                raise _forbidden(
                    attrs,
                    pod,
                    f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                    f"pod.spec.nodeSelector[{key}] = {selector[key]}",
                )
            selector[key] = value
    _set(spec, "nodeSelector", selector)
    tolerations = merge_tolerations(
        spec.get("tolerations") or [], scheduling.get("tolerations") or []
    )
    _set(spec, "tolerations", tolerations)


def _forbidden(attrs: Attributes, pod: Obj, message: str) -> errors.StatusError:
    name = attrs.name or (pod.get("metadata") or {}).get("name", "")
    return errors.forbidden("pods", "", name, message)


def build(ctx: PluginContext) -> RuntimeClassAdmission:
    return RuntimeClassAdmission(
        ctx.storage, ctx.stores[("node.platform.io", "v1", "runtimeclasses")].prefix
    )
