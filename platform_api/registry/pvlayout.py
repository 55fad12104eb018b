"""The internal Go structs of a PersistentVolume's source, its node affinity and a
claim's spec, as kube's immutability messages print them (``gostruct``): each field's Go
name, v1 JSON key and zero value, in the order kube declares them (pkg/apis/core)."""

from __future__ import annotations

from platform_api.registry.gostruct import Held, Layout, Many, Tagged

SECRET_REFERENCE: Layout = (("Name", "name", ""), ("Namespace", "namespace", ""))
OBJECT_REFERENCE: Layout = (
    ("Kind", "kind", ""),
    ("Namespace", "namespace", ""),
    ("Name", "name", ""),
    ("UID", "uid", ""),
    ("APIVersion", "apiVersion", ""),
    ("ResourceVersion", "resourceVersion", ""),
    ("FieldPath", "fieldPath", ""),
)
_FS, _RO = ("FSType", "fsType", ""), ("ReadOnly", "readOnly", False)

# Each member of PersistentVolumeSource: (Go name, v1 key, the member's own layout).
SOURCES: Layout = (
    (
        "GCEPersistentDisk",
        "gcePersistentDisk",
        (("PDName", "pdName", ""), _FS, ("Partition", "partition", 0), _RO),
    ),
    (
        "AWSElasticBlockStore",
        "awsElasticBlockStore",
        (("VolumeID", "volumeID", ""), _FS, ("Partition", "partition", 0), _RO),
    ),
    ("HostPath", "hostPath", (("Path", "path", ""), ("Type", "type", None))),
    (
        "Glusterfs",
        "glusterfs",
        (
            ("EndpointsName", "endpoints", ""),
            ("Path", "path", ""),
            _RO,
            ("EndpointsNamespace", "endpointsNamespace", None),
        ),
    ),
    ("NFS", "nfs", (("Server", "server", ""), ("Path", "path", ""), _RO)),
    (
        "RBD",
        "rbd",
        (
            ("CephMonitors", "monitors", None),
            ("RBDImage", "image", ""),
            _FS,
            ("RBDPool", "pool", ""),
            ("RadosUser", "user", ""),
            ("Keyring", "keyring", ""),
            ("SecretRef", "secretRef", SECRET_REFERENCE),
            _RO,
        ),
    ),
    (
        "Quobyte",
        "quobyte",
        (
            ("Registry", "registry", ""),
            ("Volume", "volume", ""),
            _RO,
            ("User", "user", ""),
            ("Group", "group", ""),
            ("Tenant", "tenant", ""),
        ),
    ),
    (
        "ISCSI",
        "iscsi",
        (
            ("TargetPortal", "targetPortal", ""),
            ("IQN", "iqn", ""),
            ("Lun", "lun", 0),
            ("ISCSIInterface", "iscsiInterface", ""),
            _FS,
            _RO,
            ("Portals", "portals", None),
            ("DiscoveryCHAPAuth", "chapAuthDiscovery", False),
            ("SessionCHAPAuth", "chapAuthSession", False),
            ("SecretRef", "secretRef", SECRET_REFERENCE),
            ("InitiatorName", "initiatorName", None),
        ),
    ),
    (
        "FlexVolume",
        "flexVolume",
        (
            ("Driver", "driver", ""),
            _FS,
            ("SecretRef", "secretRef", SECRET_REFERENCE),
            _RO,
            ("Options", "options", None),
        ),
    ),
    (
        "Cinder",
        "cinder",
        (("VolumeID", "volumeID", ""), _FS, _RO, ("SecretRef", "secretRef", SECRET_REFERENCE)),
    ),
    (
        "CephFS",
        "cephfs",
        (
            ("Monitors", "monitors", None),
            ("Path", "path", ""),
            ("User", "user", ""),
            ("SecretFile", "secretFile", ""),
            ("SecretRef", "secretRef", SECRET_REFERENCE),
            _RO,
        ),
    ),
    (
        "FC",
        "fc",
        (
            ("TargetWWNs", "targetWWNs", None),
            ("Lun", "lun", None),
            _FS,
            _RO,
            ("WWIDs", "wwids", None),
        ),
    ),
    (
        "Flocker",
        "flocker",
        (("DatasetName", "datasetName", ""), ("DatasetUUID", "datasetUUID", "")),
    ),
    (
        "AzureFile",
        "azureFile",
        (
            ("SecretName", "secretName", ""),
            ("ShareName", "shareName", ""),
            _RO,
            ("SecretNamespace", "secretNamespace", None),
        ),
    ),
    (
        "VsphereVolume",
        "vsphereVolume",
        (
            ("VolumePath", "volumePath", ""),
            _FS,
            ("StoragePolicyName", "storagePolicyName", ""),
            ("StoragePolicyID", "storagePolicyID", ""),
        ),
    ),
    (
        "AzureDisk",
        "azureDisk",
        (
            ("DiskName", "diskName", ""),
            ("DataDiskURI", "diskURI", ""),
            ("CachingMode", "cachingMode", None),
            ("FSType", "fsType", None),
            ("ReadOnly", "readOnly", None),
            ("Kind", "kind", None),
        ),
    ),
    ("PhotonPersistentDisk", "photonPersistentDisk", (("PdID", "pdID", ""), _FS)),
    ("PortworxVolume", "portworxVolume", (("VolumeID", "volumeID", ""), _FS, _RO)),
    (
        "ScaleIO",
        "scaleIO",
        (
            ("Gateway", "gateway", ""),
            ("System", "system", ""),
            ("SecretRef", "secretRef", SECRET_REFERENCE),
            ("SSLEnabled", "sslEnabled", False),
            ("ProtectionDomain", "protectionDomain", ""),
            ("StoragePool", "storagePool", ""),
            ("StorageMode", "storageMode", ""),
            ("VolumeName", "volumeName", ""),
            _FS,
            _RO,
        ),
    ),
    ("Local", "local", (("Path", "path", ""), ("FSType", "fsType", None))),
    (
        "StorageOS",
        "storageos",
        (
            ("VolumeName", "volumeName", ""),
            ("VolumeNamespace", "volumeNamespace", ""),
            _FS,
            _RO,
            ("SecretRef", "secretRef", OBJECT_REFERENCE),
        ),
    ),
    (
        "CSI",
        "csi",
        (
            ("Driver", "driver", ""),
            ("VolumeHandle", "volumeHandle", ""),
            _RO,
            _FS,
            ("VolumeAttributes", "volumeAttributes", None),
            ("ControllerPublishSecretRef", "controllerPublishSecretRef", SECRET_REFERENCE),
            ("NodeStageSecretRef", "nodeStageSecretRef", SECRET_REFERENCE),
            ("NodePublishSecretRef", "nodePublishSecretRef", SECRET_REFERENCE),
            ("ControllerExpandSecretRef", "controllerExpandSecretRef", SECRET_REFERENCE),
            ("NodeExpandSecretRef", "nodeExpandSecretRef", SECRET_REFERENCE),
        ),
    ),
)
# PersistentVolumeSource is embedded in the spec: its members are the spec's own keys.
PERSISTENT_VOLUME_SOURCE: Layout = SOURCES

_REQUIREMENT: Layout = (
    ("Key", "key", ""),
    ("Operator", "operator", ""),
    ("Values", "values", None),
)
_TERM: Layout = (
    ("MatchExpressions", "matchExpressions", Many(_REQUIREMENT)),
    ("MatchFields", "matchFields", Many(_REQUIREMENT)),
)
VOLUME_NODE_AFFINITY: Layout = (
    ("Required", "required", (("NodeSelectorTerms", "nodeSelectorTerms", Many(_TERM)),)),
)

_LABEL_SELECTOR: Layout = (
    ("MatchLabels", "matchLabels", None),
    ("MatchExpressions", "matchExpressions", None),
)
_LOCAL_REF: Layout = (("APIGroup", "apiGroup", None), ("Kind", "kind", ""), ("Name", "name", ""))
CLAIM_SPEC: Layout = (
    ("AccessModes", "accessModes", None),
    ("Selector", "selector", Tagged(_LABEL_SELECTOR)),
    ("Resources", "resources", Held((("Limits", "limits", None), ("Requests", "requests", None)))),
    ("VolumeName", "volumeName", ""),
    ("StorageClassName", "storageClassName", None),
    ("VolumeMode", "volumeMode", None),
    ("DataSource", "dataSource", _LOCAL_REF),
    ("DataSourceRef", "dataSourceRef", (*_LOCAL_REF, ("Namespace", "namespace", None))),
    ("VolumeAttributesClassName", "volumeAttributesClassName", None),
)
