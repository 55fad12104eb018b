"""CustomResourceDefinition: kube's apiextensions registry strategy.

Status belongs to the server's controllers (names, conditions); a create starts it
empty with the storage version recorded, and every spec change bumps the generation.
A delete first stamps the ``Terminating`` condition and the cleanup finalizer: the
instances go before the definition does.
"""

from __future__ import annotations

from platform_api.apiextensions import crd as crds
from platform_api.apiextensions.defaults import default_crd
from platform_api.apiextensions.validation import (
    validate_crd,
    validate_crd_status_update,
    validate_crd_update,
)
from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation.field import FieldError

defaults(crds.GROUP, "CustomResourceDefinition")(default_crd)


def record_storage_version(obj: Obj) -> None:
    """Add the storage version to ``status.storedVersions`` (a new list: an update's new
    object shares its status with the old one)."""
    status = obj.get("status") or {}
    stored = list(status.get("storedVersions") or [])
    # kube's strategy takes the first version marked storage, whatever its name (an
    # empty one too: validation then names the version, not the stored versions)
    storage = next((v for v in crds.versions(obj) if v.get("storage")), None)
    if storage is not None:
        name = str(storage.get("name") or "")
        if name not in stored:
            stored.append(name)
    obj["status"] = {**status, "storedVersions": stored}


@register(crds.GROUP, "CustomResourceDefinition")
class CustomResourceDefinitionStrategy(GenericStrategy):
    tracks_generation = True
    allow_unconditional_update = False
    finalizers_on_delete: tuple[str, ...] = (crds.CLEANUP_FINALIZER,)
    # An empty status as Go serializes it: acceptedNames' plural and kind are not omitempty.
    initial_status: Obj = {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        record_storage_version(obj)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        record_storage_version(new)

    def validate(self, obj: Obj) -> list[FieldError]:
        return validate_crd(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_crd_update(new, old)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_crd_status_update(new, old)

    def prepare_for_delete(self, obj: Obj) -> None:
        crds.set_condition(
            obj,
            crds.TERMINATING,
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        )
