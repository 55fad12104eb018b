"""CSIStorageCapacity (storage.platform.io): kube's validation and update rules for the
capacities a CSI driver's external-provisioner publishes per topology segment.

A capacity's class and topology never change (its capacities do); kube checks
``capacity`` but not ``maximumVolumeSize``.
"""

from __future__ import annotations

from platform_api import quantity
from platform_api.gotext import marshal
from platform_api.registry.csinode import GROUP
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import is_dns1123_subdomain


def validate_capacity(obj: Obj) -> list[FieldError]:
    """kube's ValidateCSIStorageCapacity, in its order: the topology, the class, the
    capacity."""
    errs = validate_label_selector(obj.get("nodeTopology"), "nodeTopology")
    errs += field.each("storageClassName", obj.get("storageClassName", ""), is_dns1123_subdomain)
    capacity = obj.get("capacity")
    if isinstance(capacity, str) and _negative(capacity):
        errs.append(field.invalid("capacity", capacity, field.NONNEGATIVE))
    return errs


def _negative(text: str) -> bool:
    try:
        return quantity.parse_quantity(text) < 0
    except ValueError:  # the decoder refuses what does not parse
        return False


@register(GROUP, "CSIStorageCapacity")
class CSIStorageCapacityStrategy(GenericStrategy):
    allow_unconditional_update = False  # a PUT names the resourceVersion it replaces

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_capacity(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old) + validate_capacity(new)
        if new.get("storageClassName") != old.get("storageClassName"):
            value = new.get("storageClassName")
            errs.append(field.invalid("storageClassName", value, "field is immutable"))
        if new.get("nodeTopology") != old.get("nodeTopology"):
            shown = GoText(marshal(new.get("nodeTopology")))
            errs.append(field.invalid("nodeTopology", shown, "field is immutable"))
        return errs
