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
    CLASS_ANNOTATION,
    CREATED,
    HP,
    MO,
    NFS,
    Obj,
    affinity,
    created,
    pv,
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


@pytest.mark.parametrize(("case", "obj", "message"), PV_CASES, ids=[c[0] for c in PV_CASES])
def test_volumes_refused_as_kube_refused_them(case: str, obj: Obj, message: str) -> None:
    assert created("persistentvolumes", obj)[0] == message


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
