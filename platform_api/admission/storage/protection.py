"""StorageObjectInUseProtection: new claims and volumes carry kube's protection finalizers.

The finalizer keeps a claim (``platform.io/pvc-protection``), a volume
(``platform.io/pv-protection``) or a VolumeAttributesClass (``platform.io/vac-protection``)
from going away while in use; kube's protection controllers remove it.
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext

PVC_PROTECTION = "platform.io/pvc-protection"
PV_PROTECTION = "platform.io/pv-protection"
VAC_PROTECTION = "platform.io/vac-protection"
_FINALIZERS = {
    ("", "persistentvolumeclaims"): PVC_PROTECTION,
    ("", "persistentvolumes"): PV_PROTECTION,
    ("storage.platform.io", "volumeattributesclasses"): VAC_PROTECTION,
}


class StorageObjectInUseProtection:
    name = "StorageObjectInUseProtection"
    resources = frozenset(_FINALIZERS)

    def admit(self, attrs: Attributes, obj: dict[str, Any] | None, old: Any) -> None:
        rt = attrs.resource
        finalizer = _FINALIZERS.get((rt.group, rt.plural))
        if attrs.operation != "CREATE" or finalizer is None or attrs.subresource or obj is None:
            return
        meta = obj.setdefault("metadata", {})
        finalizers = meta.get("finalizers") or []
        if finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, finalizer]


def build(ctx: PluginContext) -> StorageObjectInUseProtection:
    return StorageObjectInUseProtection()
