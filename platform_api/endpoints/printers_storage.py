"""Table columns of storage.platform.io's kinds (kube's storage printers): what ``kubectl
get storageclasses``, ``csidrivers``, ``csinodes`` and ``volumeattachments`` show.
CSIStorageCapacities have no printer in kube either (name and creation time)."""

from __future__ import annotations

from typing import Any

from platform_api.endpoints.printers import AGE, NAME, age
from platform_api.endpoints.tables import COLUMNS, Column, Printer

Obj = dict[str, Any]
GROUP = "storage.platform.io"


def _meta(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("name", ""), age(meta.get("creationTimestamp"))


def _storage_class_cells(obj: Obj) -> list[Any]:
    name, created = _meta(obj)
    return [
        name,
        obj.get("provisioner", ""),
        obj.get("reclaimPolicy") or "Delete",
        obj.get("volumeBindingMode") or "Immediate",
        bool(obj.get("allowVolumeExpansion")),
        created,
    ]


def _csi_driver_cells(obj: Obj) -> list[Any]:
    name, created = _meta(obj)
    spec = obj.get("spec") or {}
    tokens = ",".join(t.get("audience", "") for t in spec.get("tokenRequests") or [])
    return [
        name,
        bool(spec.get("attachRequired")),
        bool(spec.get("podInfoOnMount")),
        bool(spec.get("storageCapacity")),
        tokens or "<unset>",
        bool(spec.get("requiresRepublish")),
        ",".join(spec.get("volumeLifecycleModes") or []),
        created,
    ]


def _csi_node_cells(obj: Obj) -> list[Any]:
    name, created = _meta(obj)
    return [name, len((obj.get("spec") or {}).get("drivers") or []), created]


def _attachment_cells(obj: Obj) -> list[Any]:
    name, created = _meta(obj)
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    pv = (spec.get("source") or {}).get("persistentVolumeName") or ""
    return [
        name,
        spec.get("attacher", ""),
        pv,
        spec.get("nodeName", ""),
        bool(status.get("attached")),
        created,
    ]


def _column(name: str, kind: str, description: str, fmt: str = "") -> Column:
    return Column(name, kind, fmt, description)


COLUMNS[(GROUP, "storageclasses")] = Printer(
    (
        NAME,
        _column("Provisioner", "string", "provisioner indicates the type of the provisioner."),
        _column(
            "ReclaimPolicy",
            "string",
            "reclaimPolicy controls the reclaimPolicy for dynamically provisioned "
            "PersistentVolumes of this storage class.",
        ),
        _column(
            "VolumeBindingMode",
            "string",
            "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned "
            "and bound.",
        ),
        _column(
            "AllowVolumeExpansion",
            "string",
            "allowVolumeExpansion shows whether the storage class allow volume expand.",
        ),
        AGE,
    ),
    _storage_class_cells,
)
COLUMNS[(GROUP, "csidrivers")] = Printer(
    (
        NAME,
        _column(
            "AttachRequired",
            "boolean",
            "attachRequired indicates this CSI volume driver requires an attach operation.",
        ),
        _column(
            "PodInfoOnMount",
            "boolean",
            "podInfoOnMount indicates this CSI volume driver requires additional pod "
            "information (like podName, podUID, etc.) during mount operations, if set to true.",
        ),
        _column(
            "StorageCapacity",
            "boolean",
            "storageCapacity indicates that the CSI volume driver wants pod scheduling to "
            "consider the storage capacity that the driver deployment will report.",
        ),
        _column(
            "TokenRequests",
            "string",
            "tokenRequests indicates the CSI driver needs pods' service account tokens it "
            "is mounting volume for to do necessary authentication.",
        ),
        _column(
            "RequiresRepublish",
            "boolean",
            "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being "
            "periodically called to reflect any possible change in the mounted volume.",
        ),
        _column(
            "Modes",
            "string",
            "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.",
        ),
        AGE,
    ),
    _csi_driver_cells,
)
COLUMNS[(GROUP, "csinodes")] = Printer(
    (
        NAME,
        _column(
            "Drivers",
            "integer",
            "Drivers indicates the number of CSI drivers registered on the node",
        ),
        AGE,
    ),
    _csi_node_cells,
)
COLUMNS[(GROUP, "volumeattachments")] = Printer(
    (
        NAME,
        _column(
            "Attacher",
            "string",
            "attacher indicates the name of the volume driver that MUST handle this request.",
            "name",
        ),
        _column(
            "PV",
            "string",
            "persistentVolumeName represents the name of the persistent volume to attach.",
        ),
        _column(
            "Node",
            "string",
            "nodeName represents the node that the volume should be attached to.",
        ),
        _column(
            "Attached",
            "boolean",
            "attached indicates the volume is successfully attached.",
        ),
        AGE,
    ),
    _attachment_cells,
)
