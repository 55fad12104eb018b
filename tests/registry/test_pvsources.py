"""Each PersistentVolume source's own rules (platform_api/registry/pvsources.py), case by
case as kube-apiserver v1.36 answered a create of the volume."""

from __future__ import annotations

import pytest

from tests.registry.pvkit import (
    Obj,
    created,
    pv,
)

SOURCE_CASES: list[tuple[str, Obj, str]] = [
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
]


@pytest.mark.parametrize(("case", "obj", "message"), SOURCE_CASES, ids=[c[0] for c in SOURCE_CASES])
def test_sources_refused_as_kube_refused_them(case: str, obj: Obj, message: str) -> None:
    assert created("persistentvolumes", obj)[0] == message
