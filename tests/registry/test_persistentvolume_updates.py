"""PersistentVolume updates: kube-apiserver v1.36's immutability rules and their messages
(the struct diffs included), case by case."""

from __future__ import annotations

import copy

import pytest

from tests.registry.pvkit import (
    AFF,
    BETA,
    CSI,
    CSI_EXP,
    GA,
    HP,
    MO,
    NFS,
    Obj,
    pv_spec,
    strategy_of,
    updated,
)

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


def test_each_problem_of_an_updated_volume_is_two_causes() -> None:
    """The strategy's ValidatePersistentVolume, then ValidatePersistentVolumeUpdate's:
    metadata and spec problems twice, the mount options and immutability rules once."""
    message, new, old = updated(
        "persistentvolumes",
        {"metadata": {"name": "twice"}, "spec": pv_spec(hostPath=HP)},
        lambda obj: obj["spec"].pop("accessModes"),
    )
    assert message == "spec.accessModes: Required value"
    errs = strategy_of("persistentvolumes").validate_update(new, old)
    assert [(e.type, e.field) for e in errs] == [("FieldValueRequired", "spec.accessModes")] * 2
