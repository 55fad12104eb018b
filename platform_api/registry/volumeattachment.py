"""VolumeAttachment (storage.platform.io): kube's strategy, ValidateVolumeAttachment and
its update and status rules.

An attach/detach controller asks a CSI driver's attacher to attach a volume to a node;
the attacher reports through ``/status``.  The spec never changes after create (kube's
message prints the internal Go struct), status starts as ``attached: false`` and only
``/status`` writes it.  An inline volume spec gets kube's inline PersistentVolume rules:
a CSI source and access modes, no capacity, one source only.
"""

from __future__ import annotations

from typing import Any

from platform_api.gotext import Struct, marshal
from platform_api.registry.csinode import GROUP
from platform_api.registry.pvvalidation import validate_inline_pv_spec
from platform_api.registry.strategy import RESET_FOR_STATUS, GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.names import DRIVER_NAME_MAX_LENGTH, is_dns1123_subdomain
from platform_api.validation.objectmeta import validate_object_meta_update

METADATA_MAX_BYTES = 256 * 1024
ERROR_MESSAGE_MAX_BYTES = 1024  # kube's message names the metadata limit all the same


def _driver_name(name: str, path: str) -> list[FieldError]:
    """kube's ValidateCSIDriverName, as validateAttacher words an empty one."""
    if not name:
        return [field.required(path)]
    if len(name) > DRIVER_NAME_MAX_LENGTH:
        return [field.too_long(path, DRIVER_NAME_MAX_LENGTH)]
    # checked lowercased, as ValidateCSIDriverName checks it: "Example.com" is a name
    return field.checked(path, name, lambda text: is_dns1123_subdomain(text.lower()))


def validate_volume_attachment_spec(spec: Obj) -> list[FieldError]:
    errs = _driver_name(spec.get("attacher", ""), "spec.attacher")
    source = spec.get("source") or {}
    pv_name, inline = source.get("persistentVolumeName"), source.get("inlineVolumeSpec")
    one_of = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    if pv_name is None and inline is None:
        errs.append(field.required("spec.source", one_of))
    elif pv_name is not None and inline is not None:
        errs.append(field.forbidden("spec.source", one_of))
    elif pv_name is not None:
        errs += field.each("spec.source.persistentVolumeName", pv_name, is_dns1123_subdomain)
    else:
        spec_at = "spec.source.inlineVolumeSpec"
        errs += validate_inline_pv_spec(inline if isinstance(inline, dict) else {}, spec_at)
    return errs + field.each("spec.nodeName", spec.get("nodeName", ""), is_dns1123_subdomain)


def validate_volume_attachment_status(status: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    metadata = status.get("attachmentMetadata") or {}
    if sum(len(k) + len(v) for k, v in metadata.items()) > METADATA_MAX_BYTES:
        errs.append(field.too_long("status.attachmentMetadata", METADATA_MAX_BYTES))
    for key in ("attachError", "detachError"):
        message = (status.get(key) or {}).get("message") or ""
        if len(message.encode()) > ERROR_MESSAGE_MAX_BYTES:
            errs.append(field.too_long(f"status.{key}.message", METADATA_MAX_BYTES))
    return errs


def _go_spec(spec: Obj) -> GoText:
    """The spec as kube's immutability message shows it: the internal Go struct."""
    source = spec.get("source") or {}
    shown: dict[str, Any] = Struct(
        Attacher=spec.get("attacher", ""),
        Source=Struct(
            PersistentVolumeName=source.get("persistentVolumeName"),
            InlineVolumeSpec=source.get("inlineVolumeSpec"),
        ),
        NodeName=spec.get("nodeName", ""),
    )
    return GoText(marshal(shown))


@register(GROUP, "VolumeAttachment")
class VolumeAttachmentStrategy(GenericStrategy):
    allow_unconditional_update = False  # a PUT names the resourceVersion it replaces
    status_keeps_old_metadata: tuple[str, ...] = RESET_FOR_STATUS  # kube's status strategy
    returns_deleted_object = True  # as kube's store for the kind answers a delete
    initial_status = {"attached": False}

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_volume_attachment_spec(obj.get("spec") or {})

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old)
        spec = new.get("spec") or {}
        errs += validate_volume_attachment_spec(spec)
        if spec != (old.get("spec") or {}):
            errs.append(field.invalid("spec", _go_spec(spec), "field is immutable"))
        return errs

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_object_meta_update(new["metadata"], old["metadata"])
        return errs + validate_volume_attachment_status(new.get("status") or {})
