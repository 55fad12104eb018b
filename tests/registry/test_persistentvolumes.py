"""PersistentVolumes refused as kube-apiserver v1.36 refused each (reference: dry-run
creates, and dry-run updates of objects it held); "" where kube accepted.  kube's label
and annotation keys are written as this server's platform.io ones.  Where kube walks a Go
map its order varies: those cases hold one key each."""

from __future__ import annotations

import copy

import pytest

from platform_api.registry.pvvalidation import validate_inline_pv_spec
from platform_api.validation.field import aggregate
from tests.registry.pvkit import (
    AFF,
    BETA,
    CLASS_ANNOTATION,
    CREATED,
    CSI,
    CSI_EXP,
    GA,
    HP,
    MO,
    NFS,
    Obj,
    affinity,
    created,
    pv,
    pv_spec,
    pvc,
    res,
    strategy_of,
    update_of_stored,
    updated,
)

PV_CASES: list[tuple[str, Obj, str]] = [
    (
        "empty",
        pv(base=False),
        (
            "[spec.accessModes: Required value, spec.capacity: Required value, "
            'spec.capacity: Unsupported value: null: supported values: "storage", '
            "spec: Required value: must specify a volume type]"
        ),
    ),
    (
        "valid-hostpath",
        pv(hostPath=HP),
        "",
    ),
    (
        "access-bad",
        pv(hostPath=HP, accessModes=["Foo", "ReadWriteOnce"]),
        (
            'spec.accessModes: Unsupported value: "Foo": supported values: "ReadOnlyMany", "ReadWriteMany", '
            '"ReadWriteOnce", "ReadWriteOncePod"'
        ),
    ),
    (
        "access-none",
        pv(hostPath=HP, accessModes=[]),
        "spec.accessModes: Required value",
    ),
    (
        "access-rwop-mixed",
        pv(hostPath=HP, accessModes=["ReadWriteOncePod", "ReadOnlyMany"]),
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
    ),
    (
        "access-rwop",
        pv(hostPath=HP, accessModes=["ReadWriteOncePod"]),
        "",
    ),
    (
        "capacity-cpu",
        pv(hostPath=HP, capacity={"cpu": "1"}),
        'spec.capacity: Unsupported value: {"cpu":"1"}: supported values: "storage"',
    ),
    (
        "capacity-two",
        pv(hostPath=HP, capacity={"storage": "1Gi", "memory": "1Gi"}),
        (
            'spec.capacity: Unsupported value: {"memory":"1Gi","storage":"1Gi"}: supported values: "storage"'
        ),
    ),
    (
        "capacity-zero",
        pv(hostPath=HP, capacity={"storage": "0"}),
        'spec.capacity[storage]: Invalid value: "0": must be greater than zero',
    ),
    (
        "capacity-negative",
        pv(hostPath=HP, capacity={"storage": "-1Gi"}),
        (
            "[spec.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity, "
            'spec.capacity[storage]: Invalid value: "-1Gi": must be greater than zero]'
        ),
    ),
    (
        "capacity-milli",
        pv(hostPath=HP, capacity={"storage": "500m"}),
        "",
    ),
    (
        "capacity-tiny-negative",
        pv(hostPath=HP, capacity={"storage": "-500m"}),
        (
            "[spec.capacity[storage]: Invalid value: -1: must be a valid resource quantity, "
            'spec.capacity[storage]: Invalid value: "-500m": must be greater than zero]'
        ),
    ),
    (
        "reclaim-bad",
        pv(hostPath=HP, persistentVolumeReclaimPolicy="Keep"),
        (
            'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", '
            '"Recycle", "Retain"'
        ),
    ),
    (
        "reclaim-recycle-root",
        pv(hostPath={"path": "/"}, persistentVolumeReclaimPolicy="Recycle"),
        (
            "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'"
        ),
    ),
    (
        "reclaim-recycle-root-dot",
        pv(hostPath={"path": "/tmp/.."}, persistentVolumeReclaimPolicy="Recycle"),
        (
            "[spec.hostPath.path: Invalid value: \"/tmp/..\": must not contain '..', "
            "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/']"
        ),
    ),
    (
        "reclaim-recycle",
        pv(hostPath=HP, persistentVolumeReclaimPolicy="Recycle"),
        "",
    ),
    (
        "two-sources",
        pv(hostPath=HP, nfs={"server": "s", "path": "/a"}),
        "spec.nfs: Forbidden: may not specify more than 1 volume type",
    ),
    (
        "three-sources",
        pv(hostPath=HP, csi={"driver": "d", "volumeHandle": "h"}, cephfs={"monitors": ["m"]}),
        (
            "[spec.cephFS: Forbidden: may not specify more than 1 volume type, "
            "spec.csi: Forbidden: may not specify more than 1 volume type]"
        ),
    ),
    (
        "flex-second",
        pv(hostPath=HP, flexVolume={"driver": "d"}, local={"path": "/a"}),
        "spec.local: Forbidden: may not specify more than 1 volume type",
    ),
    (
        "class-bad",
        pv(hostPath=HP, storageClassName="Bad_Class"),
        (
            "spec.storageClassName: Invalid value: \"Bad_Class\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ),
    ),
    (
        "class-ok",
        pv(hostPath=HP, storageClassName="fast"),
        "",
    ),
    (
        "mode-bad",
        pv(hostPath=HP, volumeMode="Raw"),
        'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
    ),
    (
        "mode-block",
        pv(hostPath=HP, volumeMode="Block"),
        "",
    ),
    (
        "affinity-empty",
        pv(hostPath=HP, nodeAffinity={}),
        "spec.nodeAffinity.required: Required value: must specify required node constraints",
    ),
    (
        "affinity-no-terms",
        pv(hostPath=HP, nodeAffinity={"required": {"nodeSelectorTerms": []}}),
        (
            "spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term"
        ),
    ),
    (
        "affinity-bad-expr",
        pv(
            hostPath=HP,
            nodeAffinity={
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "a", "operator": "In"},
                                {"key": "-b", "operator": "Exists", "values": ["x"]},
                                {"key": "c", "operator": "Gt", "values": ["1", "2"]},
                                {"key": "d", "operator": "Foo"},
                                {"key": "e", "operator": "In", "values": ["bad value"]},
                            ],
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["A_B"]},
                                {"key": "spec.x", "operator": "Exists"},
                            ],
                        }
                    ]
                }
            },
        ),
        (
            "[spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist', spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[1].key: Invalid value: \"-b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[2].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt', spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[3].operator: Invalid value: \"Foo\": not a valid selector operator, spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[4].values[0]: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].values[0]: Invalid value: \"A_B\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[1].operator: Invalid value: \"Exists\": not a valid selector operator, spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[1].key: Invalid value: \"spec.x\": not a valid field selector key]"
        ),
    ),
    (
        "affinity-ok",
        pv(hostPath=HP, nodeAffinity=AFF),
        "",
    ),
    (
        "local-no-affinity",
        pv(local={"path": "/mnt/disk"}),
        "spec.nodeAffinity: Required value: Local volume requires node affinity",
    ),
    (
        "local-no-path",
        pv(local={}, nodeAffinity=AFF),
        "spec.local.path: Required value",
    ),
    (
        "local-backstep",
        pv(local={"path": "/mnt/../disk"}, nodeAffinity=AFF),
        "spec.local.path: Invalid value: \"/mnt/../disk\": must not contain '..'",
    ),
    (
        "local-ok",
        pv(local={"path": "/mnt/disk", "fsType": "ext4"}, nodeAffinity=AFF),
        "",
    ),
    (
        "hostpath-no-path",
        pv(hostPath={}),
        "spec.hostPath.path: Required value",
    ),
    (
        "hostpath-backstep-type",
        pv(hostPath={"path": "../etc", "type": "Weird"}),
        (
            "[spec.hostPath.path: Invalid value: \"../etc\": must not contain '..', "
            'spec.hostPath.type: Unsupported value: "Weird": supported values: "", "BlockDevice", '
            '"CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"]'
        ),
    ),
    (
        "hostpath-type-ok",
        pv(hostPath={"path": "/dev/sda", "type": "BlockDevice"}),
        "",
    ),
    (
        "nfs-empty",
        pv(nfs={}),
        (
            "[spec.nfs.server: Required value, spec.nfs.path: Required value, "
            'spec.nfs.path: Invalid value: "": must be an absolute path]'
        ),
    ),
    (
        "nfs-relative",
        pv(nfs={"server": "s", "path": "a/b"}),
        'spec.nfs.path: Invalid value: "a/b": must be an absolute path',
    ),
    (
        "nfs-ok",
        pv(nfs={"server": "10.0.0.1", "path": "/exports"}),
        "",
    ),
    (
        "iscsi-empty",
        pv(iscsi={}),
        "[spec.iscsi.targetPortal: Required value, spec.iscsi.iqn: Required value]",
    ),
    (
        "iscsi-bad",
        pv(
            iscsi={
                "targetPortal": "1.2.3.4:3260",
                "iqn": "foo",
                "lun": 300,
                "chapAuthSession": True,
                "initiatorName": "bar",
            }
        ),
        (
            '[spec.iscsi.iqn: Invalid value: "foo": must be valid format, '
            "spec.iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive, "
            "spec.iscsi.secretRef: Required value, "
            'spec.iscsi.initiatorname: Invalid value: "bar": must be valid format]'
        ),
    ),
    (
        "iscsi-iqn-format",
        pv(
            iscsi={
                "targetPortal": "t",
                "iqn": "iqn.2015-02.example",
                "lun": -1,
                "secretRef": {},
                "initiatorName": "eui.123",
            }
        ),
        (
            '[spec.iscsi.iqn: Invalid value: "iqn.2015-02.example": must be valid format, '
            "spec.iscsi.lun: Invalid value: -1: must be between 0 and 255, inclusive, "
            "spec.iscsi.secretRef.name: Required value, "
            'spec.iscsi.initiatorname: Invalid value: "eui.123": must be valid format]'
        ),
    ),
    (
        "iscsi-naa",
        pv(iscsi={"targetPortal": "t", "iqn": "naa.1234", "initiatorName": "iqn.bad"}),
        (
            '[spec.iscsi.iqn: Invalid value: "naa.1234": must be valid format, '
            'spec.iscsi.initiatorname: Invalid value: "iqn.bad": must be valid format]'
        ),
    ),
    (
        "iscsi-long",
        pv(
            name="a" * 60,
            iscsi={
                "targetPortal": "1.2.3.4:3260",
                "iqn": "iqn.2015-02.example.com:test",
                "initiatorName": "iqn.2015-02.example.com:init",
            },
        ),
        (
            'spec.iscsi.targetportal: Invalid value: "1.2.3.4:3260": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.'
        ),
    ),
    (
        "iscsi-ok",
        pv(
            iscsi={
                "targetPortal": "1.2.3.4:3260",
                "iqn": "iqn.2015-02.example.com:test",
                "lun": 0,
                "chapAuthDiscovery": True,
                "secretRef": {"name": "chap"},
            }
        ),
        "",
    ),
    (
        "csi-empty",
        pv(csi={}),
        "[spec.csi.driver: Required value, spec.csi.volumeHandle: Required value]",
    ),
    (
        "csi-bad-driver",
        pv(csi={"driver": "Bad_Driver!", "volumeHandle": "h"}),
        (
            "spec.csi.driver: Invalid value: \"Bad_Driver!\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ),
    ),
    (
        "csi-long-driver",
        pv(csi={"driver": "d" * 64, "volumeHandle": "h"}),
        "spec.csi.driver: Too long: may not be more than 63 bytes",
    ),
    (
        "csi-upper-driver",
        pv(csi={"driver": "Example.COM", "volumeHandle": "h"}),
        "",
    ),
    (
        "csi-secrets",
        pv(
            csi={
                "driver": "d.example.com",
                "volumeHandle": "h",
                "controllerPublishSecretRef": {},
                "nodeStageSecretRef": {},
                "nodePublishSecretRef": {"name": "Bad_Name", "namespace": "ns.x"},
                "controllerExpandSecretRef": {"name": "s"},
                "nodeExpandSecretRef": {"namespace": "n"},
            }
        ),
        (
            "[spec.csi.controllerPublishSecretRef.name: Required value, "
            "spec.csi.controllerPublishSecretRef.namespace: Required value, "
            "spec.csi.controllerExpandSecretRef.namespace: Required value, "
            "spec.csi.nodePublishSecretRef.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.csi.nodePublishSecretRef.namespace: Invalid value: \"ns.x\": must not contain dots, spec.csi.nodeExpandSecretRef.name: Required value]"
        ),
    ),
    (
        "csi-ok",
        pv(
            csi={
                "driver": "d.example.com",
                "volumeHandle": "h",
                "fsType": "ext4",
                "volumeAttributes": {"a": "b"},
                "nodePublishSecretRef": {"name": "s", "namespace": "n"},
            }
        ),
        "",
    ),
    (
        "fc-empty",
        pv(fc={}),
        "spec.fc.targetWWNs: Required value: must specify either targetWWNs or wwids, but not both",
    ),
    (
        "fc-both",
        pv(fc={"targetWWNs": ["w"], "wwids": ["x"]}),
        (
            '[spec.fc.targetWWNs: Invalid value: ["w"]: targetWWNs and wwids can not be specified simultaneously, spec.fc.lun: Required value: lun is required if targetWWNs is specified]'
        ),
    ),
    (
        "fc-lun",
        pv(fc={"targetWWNs": ["w"], "lun": 256}),
        "spec.fc.lun: Invalid value: 256: must be between 0 and 255, inclusive",
    ),
    (
        "fc-ok",
        pv(fc={"wwids": ["x"]}),
        "",
    ),
    (
        "rbd-empty",
        pv(rbd={}),
        "[spec.rbd.monitors: Required value, spec.rbd.image: Required value]",
    ),
    (
        "rbd-ok",
        pv(rbd={"monitors": ["m"], "image": "i"}),
        "",
    ),
    (
        "cephfs-empty",
        pv(cephfs={}),
        "spec.cephfs.monitors: Required value",
    ),
    (
        "cephfs-ok",
        pv(cephfs={"monitors": ["m"]}),
        "",
    ),
    (
        "gluster-empty",
        pv(glusterfs={}),
        "[spec.glusterfs.endpoints: Required value, spec.glusterfs.path: Required value]",
    ),
    (
        "gluster-ns-empty",
        pv(glusterfs={"endpoints": "e", "path": "p", "endpointsNamespace": ""}),
        (
            'spec.glusterfs.endpointsNamespace: Invalid value: "": if the endpointnamespace is set, '
            "it must be a valid namespace name"
        ),
    ),
    (
        "gluster-ns-bad",
        pv(glusterfs={"endpoints": "e", "path": "p", "endpointsNamespace": "Bad_NS"}),
        (
            "spec.glusterfs.endpointsNamespace: Invalid value: \"Bad_NS\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ),
    ),
    (
        "gluster-ok",
        pv(glusterfs={"endpoints": "e", "path": "p", "endpointsNamespace": "ns"}),
        "",
    ),
    (
        "gce-empty",
        pv(gcePersistentDisk={"partition": 300}),
        (
            "[spec.persistentDisk.pdName: Required value, "
            "spec.persistentDisk.partition: Invalid value: 300: must be between 1 and 255, inclusive]"
        ),
    ),
    (
        "gce-ok",
        pv(gcePersistentDisk={"pdName": "d", "partition": 1}),
        "",
    ),
    (
        "aws-empty",
        pv(awsElasticBlockStore={"partition": -1}),
        (
            "[spec.awsElasticBlockStore.volumeID: Required value, "
            "spec.awsElasticBlockStore.partition: Invalid value: -1: must be between 1 and 255, inclusive]"
        ),
    ),
    (
        "aws-ok",
        pv(awsElasticBlockStore={"volumeID": "v"}),
        "",
    ),
    (
        "cinder-empty",
        pv(cinder={"secretRef": {}}),
        (
            "[spec.cinder.volumeID: Required value, spec.cinder.secretRef.name: Required value, "
            "spec.cinder.secretRef.namespace: Required value]"
        ),
    ),
    (
        "cinder-ok",
        pv(cinder={"volumeID": "v", "secretRef": {"name": "s", "namespace": "n"}}),
        "",
    ),
    (
        "flex-empty",
        pv(flexVolume={"options": {"kubernetes.io/x": "1", "example.com/y": "3"}}),
        (
            "[spec.flexVolume.driver: Required value, "
            'spec.flexVolume.options[kubernetes.io/x]: Invalid value: "kubernetes.io/x": kubernetes.io and k8s.io namespaces are reserved]'
        ),
    ),
    (
        "flex-k8s-io",
        pv(flexVolume={"driver": "d", "options": {"a.K8S.io": "2"}}),
        (
            'spec.flexVolume.options[a.K8S.io]: Invalid value: "a.K8S.io": kubernetes.io and k8s.io namespaces are reserved'
        ),
    ),
    (
        "flex-ok",
        pv(flexVolume={"driver": "example/lvm", "options": {"a": "b"}}),
        "",
    ),
    (
        "azurefile-empty",
        pv(azureFile={"secretNamespace": ""}),
        (
            "[spec.azureFile.secretName: Required value, spec.azureFile.shareName: Required value, "
            "spec.azureFile.secretNamespace: Required value]"
        ),
    ),
    (
        "azurefile-ok",
        pv(azureFile={"secretName": "s", "shareName": "sh"}),
        "",
    ),
    (
        "vsphere-empty",
        pv(vsphereVolume={}),
        "spec.vsphereVolume.volumePath: Required value",
    ),
    (
        "photon-empty",
        pv(photonPersistentDisk={}),
        "spec.photonPersistentDisk.pdID: Required value",
    ),
    (
        "portworx-empty",
        pv(portworxVolume={}),
        "spec.portworxVolume.volumeID: Required value",
    ),
    (
        "azuredisk-empty",
        pv(azureDisk={}),
        (
            "[spec.azureDisk.diskName: Required value, spec.azureDisk.diskURI: Required value, "
            'spec.azureDisk.diskURI: Unsupported value: "": supported values: "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"]'
        ),
    ),
    (
        "azuredisk-bad",
        pv(
            azureDisk={"diskName": "d", "diskURI": "http://x", "cachingMode": "Fast", "kind": "Odd"}
        ),
        (
            '[spec.azureDisk.cachingMode: Unsupported value: "Fast": supported values: "None", "ReadOnly", '
            '"ReadWrite", spec.azureDisk.kind: Unsupported value: "Odd": supported values: "Dedicated", '
            '"Managed", "Shared", '
            'spec.azureDisk.diskURI: Unsupported value: "http://x": supported values: "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"]'
        ),
    ),
    (
        "azuredisk-managed",
        pv(azureDisk={"diskName": "d", "diskURI": "https://x", "kind": "Managed"}),
        (
            'spec.azureDisk.diskURI: Unsupported value: "https://x": supported values: "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"'
        ),
    ),
    (
        "azuredisk-ok",
        pv(azureDisk={"diskName": "d", "diskURI": "https://acct.blob.core.windows.net/c/d.vhd"}),
        "",
    ),
    (
        "scaleio-empty",
        pv(scaleIO={"secretRef": {"name": "s"}}),
        (
            "[spec.scaleIO.gateway: Required value, spec.scaleIO.system: Required value, "
            "spec.scaleIO.volumeName: Required value]"
        ),
    ),
    (
        "storageos-bad",
        pv(storageos={"volumeName": "Bad_Vol", "volumeNamespace": "Bad_NS", "secretRef": {}}),
        (
            "[spec.storageos.volumeName: Invalid value: \"Bad_Vol\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.storageos.volumeNamespace: Invalid value: \"Bad_NS\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.storageos.secretRef.name: Required value, spec.storageos.secretRef.namespace: Required value]"
        ),
    ),
    (
        "storageos-empty",
        pv(storageos={}),
        "spec.storageos.volumeName: Required value",
    ),
    (
        "quobyte-empty",
        pv(quobyte={}),
        (
            "[spec.quobyte.registry: Required value: must be a host:port pair or multiple pairs separated by commas, spec.quobyte.volume: Required value]"
        ),
    ),
    (
        "quobyte-tenant",
        pv(quobyte={"registry": "r:1", "volume": "v", "tenant": "t" * 65}),
        (
            "spec.quobyte.tenant: Required value: must be a UUID and may not exceed a length of 64 characters"
        ),
    ),
    (
        "quobyte-registry",
        pv(quobyte={"registry": "r:1,bad", "volume": "v"}),
        (
            'spec.quobyte.registry: Invalid value: "r:1,bad": must be a host:port pair or multiple pairs separated by commas'
        ),
    ),
    (
        "flocker-empty",
        pv(flocker={}),
        "spec.flocker: Required value: one of datasetName and datasetUUID is required",
    ),
    (
        "flocker-both",
        pv(flocker={"datasetName": "a/b", "datasetUUID": "u"}),
        (
            '[spec.flocker: Invalid value: "resource": datasetName and datasetUUID can not be specified simultaneously, spec.flocker.datasetName: Invalid value: "a/b": must not contain \'/\']'
        ),
    ),
    (
        "mount-hostpath",
        pv(hostPath=HP, annotations={MO: "ro"}),
        (
            "metadata.annotations.volume.beta.platform.io/mount-options: Forbidden: may not specify mount options for this volume type"
        ),
    ),
    (
        "mount-nfs",
        pv(nfs={"server": "s", "path": "/a"}, annotations={MO: "ro"}),
        "",
    ),
    (
        "mount-field-hostpath",
        pv(hostPath=HP, mountOptions=["ro"]),
        "",
    ),
    (
        "vac-no-csi",
        pv(hostPath=HP, volumeAttributesClassName="gold"),
        "spec.csi: Required value: has to be specified when using volumeAttributesClassName",
    ),
    (
        "vac-empty",
        pv(csi={"driver": "d", "volumeHandle": "h"}, volumeAttributesClassName=""),
        "spec.volumeAttributesClassName: Required value: an empty string is disallowed",
    ),
    (
        "vac-bad",
        pv(csi={"driver": "d", "volumeHandle": "h"}, volumeAttributesClassName="Gold!"),
        (
            "spec.volumeAttributesClassName: Invalid value: \"Gold!\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ),
    ),
    (
        "vac-ok",
        pv(csi={"driver": "d", "volumeHandle": "h"}, volumeAttributesClassName="gold"),
        "",
    ),
    (
        "claimref",
        pv(hostPath=HP, claimRef={"name": "Bad_Name", "namespace": "Bad_NS", "kind": "Foo"}),
        "",
    ),
    (
        "name-bad",
        pv(name="Bad_Name", hostPath=HP),
        (
            "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ),
    ),
    (
        "null-source",
        pv(hostPath=None),
        "spec: Required value: must specify a volume type",
    ),
]
PV_UPDATES: list[tuple[str, Obj, Obj, Obj, str]] = [
    (
        "nfs-path",
        pv_spec(nfs=NFS),
        pv_spec(nfs={"server": "s", "path": "/b"}),
        {},
        (
            "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n"
            "@@ -5,7 +5,7 @@\n"
            '  "Glusterfs": null,\n'
            '  "NFS": {\n'
            '   "Server": "s",\n'
            '-  "Path": "/a",\n'
            '+  "Path": "/b",\n'
            '   "ReadOnly": false\n'
            "  },\n"
            '  "RBD": null,\n'
        ),
    ),
    (
        "source-swap",
        pv_spec(nfs=NFS),
        pv_spec(hostPath=HP),
        {},
        (
            "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n"
            "@@ -1,13 +1,12 @@\n"
            " {\n"
            '  "GCEPersistentDisk": null,\n'
            '  "AWSElasticBlockStore": null,\n'
            '- "HostPath": null,\n'
            '+ "HostPath": {\n'
            '+  "Path": "/tmp",\n'
            '+  "Type": ""\n'
            "+ },\n"
            '  "Glusterfs": null,\n'
            '- "NFS": {\n'
            '-  "Server": "s",\n'
            '-  "Path": "/a",\n'
            '-  "ReadOnly": false\n'
            "- },\n"
            '+ "NFS": null,\n'
            '  "RBD": null,\n'
            '  "Quobyte": null,\n'
            '  "ISCSI": null,\n'
        ),
    ),
    (
        "csi-add-expand",
        pv_spec(csi=CSI),
        pv_spec(csi=CSI_EXP),
        {},
        "",
    ),
    (
        "csi-change-expand",
        pv_spec(csi=CSI_EXP),
        pv_spec(csi={**CSI, "controllerExpandSecretRef": {"name": "t", "namespace": "n"}}),
        {},
        (
            "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n"
            "@@ -30,7 +30,7 @@\n"
            '   "NodeStageSecretRef": null,\n'
            '   "NodePublishSecretRef": null,\n'
            '   "ControllerExpandSecretRef": {\n'
            '-   "Name": "s",\n'
            '+   "Name": "t",\n'
            '    "Namespace": "n"\n'
            "   },\n"
            '   "NodeExpandSecretRef": null\n'
        ),
    ),
    (
        "csi-handle",
        pv_spec(csi=CSI),
        pv_spec(csi={**CSI, "volumeHandle": "h2", "volumeAttributes": {"a": "b"}}),
        {},
        (
            "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n"
            "@@ -22,10 +22,12 @@\n"
            '  "StorageOS": null,\n'
            '  "CSI": {\n'
            '   "Driver": "d.example.com",\n'
            '-  "VolumeHandle": "h",\n'
            '+  "VolumeHandle": "h2",\n'
            '   "ReadOnly": false,\n'
            '   "FSType": "",\n'
            '-  "VolumeAttributes": null,\n'
            '+  "VolumeAttributes": {\n'
            '+   "a": "b"\n'
            "+  },\n"
            '   "ControllerPublishSecretRef": null,\n'
            '   "NodeStageSecretRef": null,\n'
            '   "NodePublishSecretRef": null,\n'
        ),
    ),
    (
        "mode",
        pv_spec(hostPath=HP),
        pv_spec(hostPath=HP, volumeMode="Block"),
        {},
        'volumeMode: Invalid value: "Block": field is immutable',
    ),
    (
        "affinity-set",
        pv_spec(hostPath=HP),
        pv_spec(hostPath=HP, nodeAffinity=AFF),
        {},
        "",
    ),
    (
        "affinity-change",
        pv_spec(hostPath=HP, nodeAffinity=AFF),
        pv_spec(hostPath=HP, nodeAffinity=GA),
        {},
        (
            'nodeAffinity: Invalid value: {"Required":{"NodeSelectorTerms":[{"MatchExpressions":[{"Key":"topology.platform.io/zone","Operator":"In","Values":["z1"]}],"MatchFields":null}]}}: field is immutable, except for updating from beta label to GA'
        ),
    ),
    (
        "affinity-remove",
        pv_spec(hostPath=HP, nodeAffinity=AFF),
        pv_spec(hostPath=HP),
        {},
        (
            "nodeAffinity: Invalid value: null: field is immutable, "
            "except for updating from beta label to GA"
        ),
    ),
    (
        "affinity-beta-ga",
        pv_spec(hostPath=HP, nodeAffinity=BETA),
        pv_spec(hostPath=HP, nodeAffinity=GA),
        {},
        "",
    ),
    (
        "affinity-ga-beta",
        pv_spec(hostPath=HP, nodeAffinity=GA),
        pv_spec(hostPath=HP, nodeAffinity=BETA),
        {},
        (
            'nodeAffinity: Invalid value: {"Required":{"NodeSelectorTerms":[{"MatchExpressions":[{"Key":"failure-domain.beta.platform.io/zone","Operator":"In","Values":["z1"]}],"MatchFields":null}]}}: field is immutable, except for updating from beta label to GA'
        ),
    ),
    (
        "vac-remove",
        pv_spec(csi=CSI, volumeAttributesClassName="gold"),
        pv_spec(csi=CSI),
        {},
        "spec.volumeAttributesClassName: Forbidden: update from non-nil value to nil is forbidden",
    ),
    (
        "vac-set",
        pv_spec(csi=CSI),
        pv_spec(csi=CSI, volumeAttributesClassName="gold"),
        {},
        "",
    ),
    (
        "vac-change",
        pv_spec(csi=CSI, volumeAttributesClassName="gold"),
        pv_spec(csi=CSI, volumeAttributesClassName="silver"),
        {},
        "",
    ),
    (
        "mutable-fields",
        pv_spec(hostPath=HP),
        pv_spec(
            hostPath=HP,
            accessModes=["ReadWriteMany"],
            capacity={"storage": "2Gi"},
            persistentVolumeReclaimPolicy="Delete",
            storageClassName="fast",
            mountOptions=["ro"],
            claimRef={"name": "c", "namespace": "n"},
        ),
        {},
        "",
    ),
    (
        "invalid-new",
        pv_spec(hostPath=HP),
        pv_spec(hostPath=HP, accessModes=["Foo"]),
        {},
        (
            'spec.accessModes: Unsupported value: "Foo": supported values: "ReadOnlyMany", "ReadWriteMany", '
            '"ReadWriteOnce", "ReadWriteOncePod"'
        ),
    ),
    (
        "mount-annotation",
        pv_spec(hostPath=HP),
        pv_spec(hostPath=HP),
        {"annotations": {MO: "ro"}},
        (
            "metadata.annotations.volume.beta.platform.io/mount-options: Forbidden: may not specify mount options for this volume type"
        ),
    ),
    (
        "local-affinity-change",
        pv_spec(local={"path": "/mnt"}, nodeAffinity=AFF),
        pv_spec(local={"path": "/mnt"}, nodeAffinity=GA),
        {},
        (
            'nodeAffinity: Invalid value: {"Required":{"NodeSelectorTerms":[{"MatchExpressions":[{"Key":"topology.platform.io/zone","Operator":"In","Values":["z1"]}],"MatchFields":null}]}}: field is immutable, except for updating from beta label to GA'
        ),
    ),
    (
        "nfs-readonly",
        pv_spec(nfs=NFS),
        pv_spec(nfs={**NFS, "readOnly": True}),
        {},
        (
            "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n"
            "@@ -6,7 +6,7 @@\n"
            '  "NFS": {\n'
            '   "Server": "s",\n'
            '   "Path": "/a",\n'
            '-  "ReadOnly": false\n'
            '+  "ReadOnly": true\n'
            "  },\n"
            '  "RBD": null,\n'
            '  "Quobyte": null,\n'
        ),
    ),
]


@pytest.mark.parametrize(("case", "obj", "message"), PV_CASES, ids=[c[0] for c in PV_CASES])
def test_volumes_refused_as_kube_refused_them(case: str, obj: Obj, message: str) -> None:
    assert created("persistentvolumes", obj)[0] == message


@pytest.mark.parametrize(
    ("case", "old", "new", "extra", "message"), PV_UPDATES, ids=[c[0] for c in PV_UPDATES]
)
def test_volume_updates_as_kube(case: str, old: Obj, new: Obj, extra: Obj, message: str) -> None:
    def change(obj: Obj) -> None:
        obj["spec"] = copy.deepcopy(new)
        if "annotations" in extra:
            obj["metadata"]["annotations"] = extra["annotations"]

    assert (
        updated("persistentvolumes", {"metadata": {"name": case}, "spec": old}, change)[0]
        == message
    )


def test_a_new_volume_is_pending_since_now() -> None:
    message, volume = created("persistentvolumes", pv(hostPath=HP))
    assert message == ""
    assert volume["status"]["phase"] == "Pending"
    assert volume["status"]["lastPhaseTransitionTime"] == CREATED  # kube: the same now
    assert volume["spec"]["hostPath"] == {"path": "/tmp", "type": ""}  # kube's default


@pytest.mark.parametrize(
    ("status", "stamped"),
    [
        ({"phase": "Available"}, "now"),
        ({"phase": "Foo"}, "now"),  # kube checks no phase
        ({"phase": "Pending"}, "old"),
        ({"phase": "Bound", "lastPhaseTransitionTime": "2020-01-01T00:00:00Z"}, "given"),
        ({"phase": "Failed", "message": "m", "reason": "r"}, "now"),
    ],
)
def test_volume_status_writes_stamp_phase_changes_as_kube(status: Obj, stamped: str) -> None:
    before = "2000-01-01T00:00:00Z"

    def change(obj: Obj) -> None:
        obj["metadata"].setdefault("labels", {})["x"] = "y"
        obj["spec"]["capacity"] = {"storage": "5Gi"}
        obj["status"] = copy.deepcopy(status)

    old_status = {"phase": "Pending", "lastPhaseTransitionTime": before}
    message, new, _ = updated(
        "persistentvolumes", pv(hostPath=HP), change, subresource="status", old_status=old_status
    )
    assert message == ""
    stamp = new["status"]["lastPhaseTransitionTime"]
    expected = {"old": before, "given": status.get("lastPhaseTransitionTime")}.get(stamped)
    assert stamp == expected if expected else stamp not in (before, None)
    assert new["spec"]["capacity"] == {"storage": "1Gi"}  # the spec stays
    assert new["metadata"]["labels"] == {"x": "y"}  # metadata changes stick, as in kube
    assert new["status"]["phase"] == status["phase"]


@pytest.mark.parametrize(
    ("plural", "obj", "warnings"),
    [
        (
            "persistentvolumes",
            pv(hostPath=HP, persistentVolumeReclaimPolicy="Recycle"),
            [
                "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. "
                "Instead, the recommended approach is to use dynamic provisioning."
            ],
        ),
        (
            "persistentvolumes",
            pv(nfs=NFS, annotations={MO: "ro"}),
            [
                "metadata.annotations[volume.beta.platform.io/mount-options]: deprecated since "
                'v1.31; use "mountOptions" attribute instead'
            ],
        ),
        (
            "persistentvolumes",
            pv(rbd={"monitors": ["m"], "image": "i"}),
            ["spec.rbd: deprecated in v1.28, non-functional in v1.31+"],
        ),
        (
            "persistentvolumes",
            pv(cephfs={"monitors": ["m"]}),
            ["spec.cephfs: deprecated in v1.28, non-functional in v1.31+"],
        ),
        (
            "persistentvolumes",
            pv(glusterfs={"endpoints": "e", "path": "p"}),
            ["spec.glusterfs: deprecated in v1.25, non-functional in v1.26+"],
        ),
        (
            "persistentvolumeclaims",
            pvc(resources={"requests": {"storage": "1500m"}}),
            [
                'spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer'
            ],
        ),
        (
            "persistentvolumeclaims",
            pvc(resources=res(limits={"storage": "500m"})),
            [
                'spec.resources.limits[storage]: fractional byte value "500m" is invalid, must be an integer'
            ],
        ),
        (
            "persistentvolumeclaims",
            pvc(annotations={CLASS_ANNOTATION: "x"}),
            [
                "metadata.annotations[volume.beta.platform.io/storage-class]: deprecated since "
                'v1.8; use "storageClassName" attribute instead'
            ],
        ),
    ],
)
def test_warnings_as_kube_gave_them(plural: str, obj: Obj, warnings: list[str]) -> None:
    message, made = created(plural, obj)
    assert message == ""
    assert strategy_of(plural).warnings(made, None) == warnings


def test_old_volumes_keep_label_values_kube_no_longer_takes() -> None:
    """kube's AllowInvalidLabelValueInRequiredNodeAffinity, set from the old volume (the
    reference stores no such volume today: this follows its source)."""
    volume = pv(hostPath=HP, nodeAffinity=affinity("platform.io/hostname", "bad value"))

    def grow(obj: Obj) -> None:
        obj["spec"]["capacity"] = {"storage": "2Gi"}

    assert update_of_stored("persistentvolumes", volume, grow) == ""
    message = created("persistentvolumes", volume)[0]
    assert message.startswith(
        "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]: "
        'Invalid value: "bad value": a valid label must be'
    )


def test_an_inline_volume_is_a_csi_volume_with_nothing_of_its_own() -> None:
    """A VolumeAttachment's inline spec: kube-apiserver v1.36's answer, recorded."""
    inline = {
        "accessModes": ["ReadWriteOnce"],
        "claimRef": {"name": "c"},
        "capacity": {"storage": "1Gi"},
        "persistentVolumeReclaimPolicy": "Delete",
        "nodeAffinity": {"required": {"nodeSelectorTerms": []}},
        "storageClassName": "sc",
        "volumeMode": "Block",
        "csi": {"driver": "d.example.com", "volumeHandle": "h"},
    }
    at = "spec.source.inlineVolumeSpec"
    forbidden = "Forbidden: may not be specified in the context of inline volumes"
    assert aggregate(validate_inline_pv_spec(inline, at)) == (
        f"[{at}.claimRef: {forbidden}, {at}.capacity: {forbidden}, "
        f"{at}.persistentVolumeReclaimPolicy: Forbidden: may only be Retain in the context "
        f"of inline volumes, {at}.nodeAffinity: {forbidden}, {at}.storageClassName: "
        f"{forbidden}, {at}.volumeMode: Forbidden: may not specify volumeMode other than "
        "Filesystem in the context of inline volumes]"
    )
