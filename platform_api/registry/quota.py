"""The ResourceQuota strategy: users write ``spec``, the quota system writes ``status``."""

from __future__ import annotations

from platform_api.quantity import canonical
from platform_api.registry.quota_validation import (
    create_warnings,
    parse_list,
    validate_scopes_unchanged,
    validate_spec,
    validate_status,
)
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation.field import FieldError
from platform_api.validation.objectmeta import (
    validate_core_meta_update,
)


@register("", "ResourceQuota")
class ResourceQuotaStrategy(GenericStrategy):
    returns_deleted_object = True  # as kube's store for the kind answers a delete
    initial_status: Obj = {}  # kube answers ``status: {}`` until the controller fills it

    def validate(self, obj: Obj) -> list[FieldError]:
        return (
            super().validate(obj)
            + validate_spec(obj.get("spec") or {})
            + validate_status(obj.get("status") or {})
        )

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return (
            super().validate_update(new, old)
            + validate_spec(new.get("spec") or {})
            + validate_scopes_unchanged(new, old)
        )

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """Writes through ``/status`` (the quota system's): the status' names and values."""
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        return errs + validate_status(new.get("status") or {})

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        return create_warnings(obj.get("spec") or {}) if old is None else []

    def canonicalize(self, obj: Obj) -> None:
        """Quantities are stored in kube's canonical text (``1.5Gi`` as ``1536Mi``)."""
        for part, key in (("spec", "hard"), ("status", "hard"), ("status", "used")):
            holder = obj.get(part) or {}
            if holder.get(key):
                parse_list(holder[key])  # refuses what does not parse
                holder[key] = {n: canonical(str(holder[key][n])) for n in sorted(holder[key])}
