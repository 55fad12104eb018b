"""PersistentVolumeClaimResize: a claim grows only when bound and its class allows it.

kube's ``resize`` plugin, on updates: asking for more ``storage`` than the stored claim
is refused unless the stored claim is Bound, both claims name the same class, and that
StorageClass has ``allowVolumeExpansion: true``.  Shrinking or keeping the size is left
to validation.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext
from platform_api.admission.storage import claim_class
from platform_api.cel.library.quantity import QuantityError, parse_quantity
from platform_api.errors import StatusError
from platform_api.registry.store import Store

Obj = dict[str, Any]
NOT_BOUND = "Only bound persistent volume claims can be expanded"
NOT_EXPANDABLE = (
    "only dynamically provisioned pvc can be resized and the storageclass that provisions "
    "the pvc must support resize"
)


def _size(claim: Obj) -> Decimal:
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    try:
        return parse_quantity(str(requests.get("storage") or "0"))
    except QuantityError:
        return Decimal(0)


class PersistentVolumeClaimResize:
    name = "PersistentVolumeClaimResize"
    resources = frozenset({("", "persistentvolumeclaims")})

    def __init__(self, classes: Store) -> None:
        self._classes = classes

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation != "UPDATE" or (rt.group, rt.plural) != ("", "persistentvolumeclaims"):
            return
        if attrs.subresource or obj is None or old is None or _size(obj) <= _size(old):
            return
        if (old.get("status") or {}).get("phase") != "Bound":
            raise forbidden(attrs, obj, NOT_BOUND)
        if not self._allows_resize(obj, old):
            raise forbidden(attrs, obj, NOT_EXPANDABLE)

    def _allows_resize(self, claim: Obj, old: Obj) -> bool:
        name, old_name = claim_class(claim) or "", claim_class(old) or ""
        if not name or name != old_name:
            return False
        try:
            storage_class = self._classes.get("", name).object
        except StatusError:
            return False
        return storage_class.get("allowVolumeExpansion") is True


def build(ctx: PluginContext) -> PersistentVolumeClaimResize:
    return PersistentVolumeClaimResize(ctx.stores[("storage.platform.io", "v1", "storageclasses")])
