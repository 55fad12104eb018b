"""Table columns of PersistentVolumes, PersistentVolumeClaims and storage.platform.io's kinds
(kube's storage printers): what ``kubectl get pv,pvc``, ``storageclasses``, ``csidrivers``,
``csinodes`` and ``volumeattachments`` show.  CSIStorageCapacities have a printer in kube
that its registry does not use (name and creation time)."""

from __future__ import annotations

from typing import Any

from platform_api.admission.storage import DEFAULT_CLASS_ANNOTATIONS, claim_class
from platform_api.endpoints.printers import AGE, NAME, column, created, meta, register
from platform_api.endpoints.tables import COLUMNS, Column, Printer

Obj = dict[str, Any]
GROUP = "storage.platform.io"


def _storage_class_cells(obj: Obj) -> list[Any]:
    """The name (`` (default)`` after a default class's), the provisioner, the reclaim
    policy and binding mode (kube's defaults when unset), whether volumes may expand."""
    annotations = meta(obj).get("annotations") or {}
    default = any(annotations.get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS)
    return [
        meta(obj).get("name", "") + (" (default)" if default else ""),
        obj.get("provisioner", ""),
        obj.get("reclaimPolicy") or "Delete",
        obj.get("volumeBindingMode") or "Immediate",
        bool(obj.get("allowVolumeExpansion")),
        created(obj),
    ]


COLUMNS[(GROUP, "storageclasses")] = Printer(
    (
        NAME,
        column("Provisioner", "provisioner indicates the type of the provisioner."),
        column(
            "ReclaimPolicy",
            "reclaimPolicy controls the reclaimPolicy for dynamically provisioned "
            "PersistentVolumes of this storage class. Defaults to Delete.",
        ),
        column(
            "VolumeBindingMode",
            "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and "
            "bound.  When unset, VolumeBindingImmediate is used. This field is only honored by "
            "servers that enable the VolumeScheduling feature.",
        ),
        column(
            "AllowVolumeExpansion",
            "allowVolumeExpansion shows whether the storage class allow volume expand.",
        ),
        AGE,
    ),
    _storage_class_cells,
)


def _csi_driver_cells(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    tokens = spec.get("tokenRequests")
    audiences = "<unset>" if tokens is None else ",".join(t.get("audience", "") for t in tokens)
    return [
        spec.get("attachRequired") is not False,
        bool(spec.get("podInfoOnMount")),
        bool(spec.get("storageCapacity")),
        audiences,
        bool(spec.get("requiresRepublish")),
        ",".join(spec.get("volumeLifecycleModes") or []) or "<none>",
        created(obj),
    ]


_CSI_CONTEXT = "csi.storage.k8s.io"
register(
    GROUP,
    "csidrivers",
    (
        column(
            "AttachRequired",
            "attachRequired indicates this CSI volume driver requires an attach operation "
            "(because it implements the CSI ControllerPublishVolume() method), and that the "
            "Kubernetes attach detach controller should call the attach volume interface which "
            "checks the volumeattachment status and waits until the volume is attached before "
            "proceeding to mounting. The CSI external-attacher coordinates with CSI volume "
            "driver and updates the volumeattachment status when the attach operation is "
            "complete. If the value is specified to false, the attach operation will be "
            "skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.",
            "boolean",
        ),
        column(
            "PodInfoOnMount",
            "podInfoOnMount indicates this CSI volume driver requires additional pod "
            "information (like podName, podUID, etc.) during mount operations, if set to true. "
            "If set to false, pod information will not be passed on mount. Default is false."
            "\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, "
            "Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() "
            "calls. The CSI driver is responsible for parsing and validating the information "
            "passed in as VolumeContext.\n\nThe following VolumeContext will be passed if "
            "podInfoOnMount is set to true. This list might grow, but the prefix will be used. "
            f'"{_CSI_CONTEXT}/pod.name": pod.Name "{_CSI_CONTEXT}/pod.namespace": '
            f'pod.Namespace "{_CSI_CONTEXT}/pod.uid": string(pod.UID) '
            f'"{_CSI_CONTEXT}/ephemeral": "true" if the volume is an ephemeral inline volume\n'
            "                                defined by a CSIVolumeSource, otherwise "
            f'"false"\n\n"{_CSI_CONTEXT}/ephemeral" is a new feature in Kubernetes 1.16. It is '
            'only required for drivers which support both the "Persistent" and "Ephemeral" '
            "VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this "
            "field. As Kubernetes 1.15 doesn't support this field, drivers can only support one "
            "mode when deployed on such a cluster and the deployment determines which mode that "
            "is, for example via a command line parameter of the driver.\n\nThis field was "
            "immutable in Kubernetes < 1.29 and now is mutable.",
            "boolean",
        ),
        column(
            "StorageCapacity",
            "storageCapacity indicates that the CSI volume driver wants pod scheduling to "
            "consider the storage capacity that the driver deployment will report by creating "
            "CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check "
            "can be enabled immediately when deploying a driver. In that case, provisioning new "
            "volumes with late binding will pause until the driver deployment has published "
            "some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be "
            "deployed with the field unset or false and it can be flipped later when storage "
            "capacity information has been published.\n\nThis field was immutable in "
            "Kubernetes <= 1.22 and now is mutable.",
            "boolean",
        ),
        column(
            "TokenRequests",
            "tokenRequests indicates the CSI driver needs pods' service account tokens it is "
            "mounting volume for to do necessary authentication. Kubelet will pass the tokens "
            "in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse "
            "and validate the following VolumeContext: "
            f'"{_CSI_CONTEXT}/serviceAccount.tokens": {{\n  "<audience>": {{\n    "token": '
            '<token>,\n    "expirationTimestamp": <expiration timestamp in RFC3339>,\n  },\n  '
            "...\n}\n\nNote: Audience in each TokenRequest should be different and at most one "
            "token is empty string. To receive a new token after expiry, RequiresRepublish can "
            "be used to trigger NodePublishVolume periodically.",
        ),
        column(
            "RequiresRepublish",
            "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being "
            "periodically called to reflect any possible change in the mounted volume. This "
            "field defaults to false.\n\nNote: After a successful initial NodePublishVolume "
            "call, subsequent calls to NodePublishVolume should only update the contents of "
            "the volume. New mount points will not be seen by a running container.",
            "boolean",
        ),
        column(
            "Modes",
            "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. "
            'The default if the list is empty is "Persistent", which is the usage defined by '
            "the CSI specification and implemented in Kubernetes via the usual PV/PVC "
            'mechanism.\n\nThe other mode is "Ephemeral". In this mode, volumes are defined '
            "inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the "
            "lifecycle of that pod. A driver has to be aware of this because it is only going "
            "to get a NodePublishVolume call for such a volume.\n\nFor more information about "
            "implementing this mode, see "
            "https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can "
            "support one or more of these modes and more modes may be added in the future."
            "\n\nThis field is beta. This field is immutable.",
        ),
        AGE,
    ),
    _csi_driver_cells,
)
register(
    GROUP,
    "csinodes",
    (
        column(
            "Drivers",
            "Drivers indicates the number of CSI drivers registered on the node",
            "integer",
        ),
        AGE,
    ),
    lambda o: [len((o.get("spec") or {}).get("drivers") or []), created(o)],
)


def _attachment_cells(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    return [
        spec.get("attacher", ""),
        (spec.get("source") or {}).get("persistentVolumeName") or "",
        spec.get("nodeName", ""),
        bool((obj.get("status") or {}).get("attached")),
        created(obj),
    ]


register(
    GROUP,
    "volumeattachments",
    (
        Column(
            "Attacher",
            "string",
            "name",
            "attacher indicates the name of the volume driver that MUST handle this request. "
            "This is the name returned by GetPluginName().",
        ),
        column(
            "PV",
            "persistentVolumeName represents the name of the persistent volume to attach.",
        ),
        column("Node", "nodeName represents the node that the volume should be attached to."),
        column(
            "Attached",
            "attached indicates the volume is successfully attached. This field must only be "
            "set by the entity completing the attach operation, i.e. the external-attacher.",
            "boolean",
        ),
        AGE,
    ),
    _attachment_cells,
)


# kube's GetAccessModesAsString: this order, whatever the order given
_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)
_PV_DOCS = "More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes"


def _access_modes(modes: list[str] | None) -> str:
    return ",".join(short for mode, short in _ACCESS_MODES if mode in (modes or []))


def _phase(obj: Obj) -> str:
    if meta(obj).get("deletionTimestamp"):
        return "Terminating"
    return (obj.get("status") or {}).get("phase") or ""


def _volume_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    claim = spec.get("claimRef")
    return [
        (spec.get("capacity") or {}).get("storage", "0"),
        _access_modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy", ""),
        _phase(obj),
        f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else "",
        claim_class(obj) or "",  # kube's GetPersistentVolume(Claim)Class
        spec.get("volumeAttributesClassName") or "<unset>",
        status.get("reason", ""),
        created(obj),
        spec.get("volumeMode") or "<unset>",
    ]


def _claim_cells(obj: Obj) -> list[Any]:
    """A claim's capacity and access modes are its volume's: empty until it names one."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    bound = bool(spec.get("volumeName"))
    return [
        _phase(obj),
        spec.get("volumeName", ""),
        (status.get("capacity") or {}).get("storage", "0") if bound else "",
        _access_modes(status.get("accessModes")) if bound else "",
        claim_class(obj) or "",  # kube's GetPersistentVolume(Claim)Class
        spec.get("volumeAttributesClassName") or "<unset>",
        created(obj),
        spec.get("volumeMode") or "<unset>",
    ]


register(
    "",
    "persistentvolumes",
    (
        column(
            "Capacity",
            "capacity is the description of the persistent volume's resources and capacity. "
            f"{_PV_DOCS}#capacity",
        ),
        column(
            "Access Modes",
            f"accessModes contains all ways the volume can be mounted. {_PV_DOCS}#access-modes",
        ),
        column(
            "Reclaim Policy",
            "persistentVolumeReclaimPolicy defines what happens to a persistent volume when "
            "released from its claim. Valid options are Retain (default for manually created "
            "PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), "
            "and Recycle (deprecated). Recycle must be supported by the volume plugin underlying "
            f"this PersistentVolume. {_PV_DOCS}#reclaiming",
        ),
        column(
            "Status",
            "phase indicates if a volume is available, bound to a claim, or released by a "
            f"claim. {_PV_DOCS}#phase",
        ),
        column(
            "Claim",
            "claimRef is part of a bi-directional binding between PersistentVolume and "
            "PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the "
            f"authoritative bind between PV and PVC. {_PV_DOCS}#binding",
        ),
        column("StorageClass", "StorageClass of the pv"),
        column("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
        column(
            "Reason",
            "reason is a brief CamelCase string that describes any failure and is meant for "
            "machine parsing and tidy display in the CLI.",
        ),
        AGE,
        column(
            "VolumeMode",
            "volumeMode defines if a volume is intended to be used with a formatted filesystem "
            "or to remain in raw block state. Value of Filesystem is implied when not included "
            "in spec.",
            priority=1,
        ),
    ),
    _volume_cells,
)
register(
    "",
    "persistentvolumeclaims",
    (
        column("Status", "phase represents the current phase of PersistentVolumeClaim."),
        column(
            "Volume",
            "volumeName is the binding reference to the PersistentVolume backing this claim.",
        ),
        column("Capacity", "capacity represents the actual resources of the underlying volume."),
        column(
            "Access Modes",
            "accessModes contains the actual access modes the volume backing the PVC has. "
            f"{_PV_DOCS}#access-modes-1",
        ),
        column("StorageClass", "StorageClass of the pvc"),
        column("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
        AGE,
        column(
            "VolumeMode",
            "volumeMode defines what type of volume is required by the claim. Value of "
            "Filesystem is implied when not included in claim spec.",
            priority=1,
        ),
    ),
    _claim_cells,
)
