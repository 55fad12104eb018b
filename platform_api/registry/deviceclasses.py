"""DeviceClasses (resource.platform.io): kube's strategy and ``ValidateDeviceClass`` /
``ValidateDeviceClassUpdate``.

A class selects devices with CEL selectors and may carry driver configuration and the
extended resource name pods can ask for it by.  Selectors and configuration unchanged
by an update count as stored: kube then compiles the expressions in its environment for
stored expressions and no longer limits the parameters' size.
"""

from __future__ import annotations

from platform_api.registry.deviceclaims import (
    CONFIG_MAX_SIZE,
    SELECTORS_MAX_SIZE,
    device_configuration,
    selector,
)
from platform_api.registry.dranames import GROUP, Obj, obj, validate_slice
from platform_api.registry.gointernal import same
from platform_api.registry.quota_validation import is_extended
from platform_api.registry.strategy import RESET_FOR_STATUS, GenericStrategy, register
from platform_api.validation import field
from platform_api.validation.field import FieldError


def validate_class_spec(spec: Obj, old: Obj | None) -> list[FieldError]:
    """``validateDeviceClassSpec``; ``old``: the stored spec on update."""
    stored = old is not None and same(
        "[]dra.DeviceSelector", spec.get("selectors"), old.get("selectors")
    )
    errs = validate_slice(
        spec.get("selectors"),
        SELECTORS_MAX_SIZE,
        lambda s, at: selector(s, at, stored),
        "spec.selectors",
    )
    stored = old is not None and same(
        "[]dra.DeviceClassConfiguration", spec.get("config"), old.get("config")
    )
    errs += validate_slice(
        spec.get("config"),
        CONFIG_MAX_SIZE,
        lambda c, at: device_configuration(obj(c), at, stored),
        "spec.config",
    )
    name = spec.get("extendedResourceName")
    if name is not None and not is_extended(str(name)):
        detail = "must be a valid extended resource name"
        errs.append(field.invalid("spec.extendedResourceName", name, detail))
    return errs


@register(GROUP, "DeviceClass")
class DeviceClassStrategy(GenericStrategy):
    returns_deleted_object = True  # as each of kube's DRA stores
    tracks_generation = True

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """Compared as Go values (quantities by value)."""
        return not same("dra.DeviceClassSpec", new.get("spec"), old.get("spec"))

    def validate(self, cls: Obj) -> list[FieldError]:
        return super().validate(cls) + validate_class_spec(obj(cls.get("spec")), None)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube checks the metadata as on create first, then as an update."""
        errs = super().validate(new) + super().validate_update(new, old)
        return errs + validate_class_spec(obj(new.get("spec")), obj(old.get("spec")))


@register(GROUP, "DeviceTaintRule")
@register(GROUP, "ResourcePoolStatusRequest")
class DeletedObjectStrategy(GenericStrategy):
    status_keeps_old_metadata: tuple[str, ...] = RESET_FOR_STATUS  # kube's status strategy
    """The alpha DRA kinds, checked by their schemas only; a delete answers the object,
    as each of kube's DRA stores does."""

    returns_deleted_object = True
