"""PersistentVolumeClaims refused as kube-apiserver v1.36 refused each (reference:
dry-run creates, and dry-run updates of claims it held); "" where kube accepted."""

from __future__ import annotations

import copy

import pytest

from tests.registry.pvkit import (
    Obj,
    created,
    pvc,
    res,
    update_of_stored,
    updated,
)

CLAIM_CASES: list[tuple[str, Obj, str]] = [
    (
        "empty",
        pvc(base=False),
        (
            "[spec.accessModes: Required value: at least 1 access mode is required, "
            "spec.resources[storage]: Required value]"
        ),
    ),
    (
        "valid",
        pvc(),
        "",
    ),
    (
        "access-bad",
        pvc(accessModes=["Foo"]),
        (
            'spec.accessModes: Unsupported value: "Foo": supported values: "ReadOnlyMany", "ReadWriteMany", '
            '"ReadWriteOnce", "ReadWriteOncePod"'
        ),
    ),
    (
        "access-rwop-mixed",
        pvc(accessModes=["ReadWriteOncePod", "ReadWriteMany"]),
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
    ),
    (
        "requests-none",
        pvc(resources={}),
        "spec.resources[storage]: Required value",
    ),
    (
        "requests-cpu",
        pvc(resources={"requests": {"cpu": "1"}}),
        "spec.resources[storage]: Required value",
    ),
    (
        "requests-zero",
        pvc(resources={"requests": {"storage": "0"}}),
        'spec.resources[storage]: Invalid value: "0": must be greater than zero',
    ),
    (
        "requests-negative",
        pvc(resources={"requests": {"storage": "-1Gi"}}),
        'spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero',
    ),
    (
        "requests-fraction",
        pvc(resources={"requests": {"storage": "1500m"}}),
        "",
    ),
    (
        "limits-bad",
        pvc(resources=res(limits={"storage": "-1", "cpu": "1", "Bad Key": "1"})),
        "",
    ),
    (
        "limits-fraction",
        pvc(resources=res(limits={"storage": "500m"})),
        "",
    ),
    (
        "selector-bad",
        pvc(
            selector={
                "matchLabels": {"a": "b c"},
                "matchExpressions": [{"key": "k", "operator": "In"}],
            }
        ),
        (
            "[spec.selector.matchLabels: Invalid value: \"b c\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn']"
        ),
    ),
    (
        "class-bad",
        pvc(storageClassName="Bad_Class"),
        (
            "spec.storageClassName: Invalid value: \"Bad_Class\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ),
    ),
    (
        "class-empty",
        pvc(storageClassName=""),
        "",
    ),
    (
        "mode-bad",
        pvc(volumeMode="Raw"),
        'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
    ),
    (
        "ds-empty",
        pvc(dataSource={}),
        "",
    ),
    (
        "ds-other-kind",
        pvc(dataSource={"kind": "Foo", "name": "x"}),
        "",
    ),
    (
        "ds-pvc",
        pvc(dataSource={"kind": "PersistentVolumeClaim", "name": "src"}),
        "",
    ),
    (
        "ds-snapshot",
        pvc(
            dataSource={
                "apiGroup": "snapshot.storage.k8s.io",
                "kind": "VolumeSnapshot",
                "name": "snap",
            }
        ),
        "",
    ),
    (
        "ds-apigroup-empty",
        pvc(dataSource={"apiGroup": "", "kind": "PersistentVolumeClaim", "name": "x"}),
        "",
    ),
    (
        "dsref-empty",
        pvc(dataSourceRef={}),
        (
            "[spec.dataSource.name: Required value, spec.dataSource.kind: Required value, "
            "spec.dataSource: Invalid value: \"\": must be 'PersistentVolumeClaim' when referencing the default apiGroup, spec.dataSourceRef.name: Required value, spec.dataSourceRef.kind: Required value, spec.dataSourceRef: Invalid value: \"\": must be 'PersistentVolumeClaim' when referencing the default apiGroup]"
        ),
    ),
    (
        "dsref-other-kind",
        pvc(dataSourceRef={"kind": "Foo", "name": "x"}),
        (
            "[spec.dataSource: Invalid value: \"Foo\": must be 'PersistentVolumeClaim' when referencing the default apiGroup, spec.dataSourceRef: Invalid value: \"Foo\": must be 'PersistentVolumeClaim' when referencing the default apiGroup]"
        ),
    ),
    (
        "dsref-bad-group",
        pvc(dataSourceRef={"apiGroup": "Bad_Group", "kind": "Foo", "name": "x"}),
        (
            "[spec.dataSource.apiGroup: Invalid value: \"Bad_Group\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.dataSourceRef.apiGroup: Invalid value: \"Bad_Group\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]"
        ),
    ),
    (
        "dsref-ok",
        pvc(dataSourceRef={"apiGroup": "example.com", "kind": "Foo", "name": "x"}),
        "",
    ),
    (
        "dsref-namespace",
        pvc(
            dataSourceRef={
                "apiGroup": "example.com",
                "kind": "Foo",
                "name": "x",
                "namespace": "Bad_NS",
            }
        ),
        "",
    ),
    (
        "ds-mismatch",
        pvc(
            dataSource={"kind": "PersistentVolumeClaim", "name": "a"},
            dataSourceRef={"kind": "PersistentVolumeClaim", "name": "b"},
        ),
        "spec: Invalid value: {}: must match dataSourceRef",
    ),
    (
        "ds-both-bad",
        pvc(dataSource={"kind": "Foo", "name": "a"}, dataSourceRef={"kind": "Foo", "name": "a"}),
        (
            "[spec.dataSource: Invalid value: \"Foo\": must be 'PersistentVolumeClaim' when referencing the default apiGroup, spec.dataSourceRef: Invalid value: \"Foo\": must be 'PersistentVolumeClaim' when referencing the default apiGroup]"
        ),
    ),
    (
        "vac-empty",
        pvc(volumeAttributesClassName=""),
        "",
    ),
    (
        "vac-bad",
        pvc(volumeAttributesClassName="Gold!"),
        (
            "spec.volumeAttributesClassName: Invalid value: \"Gold!\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ),
    ),
    (
        "vac-ok",
        pvc(volumeAttributesClassName="gold"),
        "",
    ),
    (
        "volumename-bad",
        pvc(volumeName="Bad_Name"),
        "",
    ),
    (
        "name-bad",
        pvc(name="Bad_Name"),
        (
            "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ),
    ),
    (
        "beta-class-annotation",
        pvc(annotations={"volume.beta.platform.io/storage-class": "x"}),
        "",
    ),
]
CLAIM_STATUS: list[tuple[str, Obj, str]] = [
    (
        "capacity-negative",
        {"phase": "Bound", "capacity": {"storage": "-1Gi"}},
        "status.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity",
    ),
    (
        "capacity-negative-milli",
        {"capacity": {"cpu": "-500m"}},
        "status.capacity[cpu]: Invalid value: -1: must be a valid resource quantity",
    ),
    (
        "alloc-status-cpu",
        {"allocatedResourceStatuses": {"cpu": "ControllerResizeInProgress"}},
        'status.allocatedResourceStatuses: Unsupported value: "cpu": supported values: "storage"',
    ),
    (
        "alloc-status-bad-key",
        {"allocatedResourceStatuses": {"Bad Key": "NodeResizePending"}},
        (
            "status.allocatedResourceStatuses: Invalid value: \"Bad Key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ),
    ),
    (
        "alloc-status-bad-value",
        {"allocatedResourceStatuses": {"storage": "Weird"}},
        (
            'status.allocatedResourceStatuses: Unsupported value: "storage": supported values: "ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress", "NodeResizeInfeasible", "NodeResizePending"'
        ),
    ),
    (
        "alloc-status-foreign",
        {"allocatedResourceStatuses": {"example.com/foo": "NodeResizeInfeasible"}},
        "",
    ),
    (
        "alloc-status-ok",
        {"allocatedResourceStatuses": {"storage": "ControllerResizeInProgress"}},
        "",
    ),
    (
        "alloc-cpu",
        {"allocatedResources": {"cpu": "1"}},
        'status.allocatedResources: Unsupported value: "cpu": supported values: "storage"',
    ),
    (
        "alloc-bad-key",
        {"allocatedResources": {"Bad Key": "1"}},
        (
            "status.allocatedResources: Invalid value: \"Bad Key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ),
    ),
    (
        "alloc-negative",
        {"allocatedResources": {"storage": "-1Gi"}},
        (
            "status.allocatedResources[storage]: Invalid value: -1073741824: must be a valid resource quantity"
        ),
    ),
    (
        "alloc-native-prefix",
        {"allocatedResources": {"platform.io/baz": "1"}},
        (
            'status.allocatedResources: Unsupported value: "platform.io/baz": supported values: "storage"'
        ),
    ),
    (
        "alloc-foreign",
        {"allocatedResources": {"example.com/foo": "1500m"}},
        "",
    ),
    (
        "alloc-ok",
        {"allocatedResources": {"storage": "2Gi"}},
        "",
    ),
    (
        "unchecked",
        {
            "phase": "Foo",
            "conditions": [{"type": "", "status": "Weird"}],
            "accessModes": ["Foo"],
            "currentVolumeAttributesClassName": "Bad!",
            "modifyVolumeStatus": {"status": "Weird"},
        },
        "",
    ),
]


@pytest.mark.parametrize(("case", "obj", "message"), CLAIM_CASES, ids=[c[0] for c in CLAIM_CASES])
def test_claims_refused_as_kube_refused_them(case: str, obj: Obj, message: str) -> None:
    assert created("persistentvolumeclaims", obj)[0] == message


@pytest.mark.parametrize(
    ("case", "status", "message"), CLAIM_STATUS, ids=[c[0] for c in CLAIM_STATUS]
)
def test_claim_status_writes_as_kube(case: str, status: Obj, message: str) -> None:
    def change(obj: Obj) -> None:
        obj["status"] = copy.deepcopy(status)
        obj["spec"]["accessModes"] = ["ReadWriteMany"]  # a status write keeps the spec

    got, new, _ = updated("persistentvolumeclaims", pvc(), change, subresource="status")
    assert got == message
    assert new["spec"]["accessModes"] == ["ReadWriteOnce"]


@pytest.mark.parametrize(
    ("obj", "spec"),
    [
        # a dataSource of another kind, unbacked by a dataSourceRef, is dropped
        (pvc(dataSource={"kind": "Foo", "name": "x"}), {}),
        (
            pvc(dataSource={"kind": "PersistentVolumeClaim", "name": "src"}),
            {
                "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"},
                "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "src"},
            },
        ),
        (
            pvc(dataSourceRef={"apiGroup": "example.com", "kind": "Foo", "name": "x"}),
            {
                "dataSource": {"apiGroup": "example.com", "kind": "Foo", "name": "x"},
                "dataSourceRef": {"apiGroup": "example.com", "kind": "Foo", "name": "x"},
            },
        ),
        # CrossNamespaceVolumeDataSource is off: the reference goes
        (pvc(dataSourceRef={"kind": "Foo", "name": "x", "namespace": "other"}), {}),
    ],
)
def test_claim_data_sources_stored_as_kube_stored_them(obj: Obj, spec: Obj) -> None:
    message, claim = created("persistentvolumeclaims", obj)
    assert message == ""
    sources = {k: claim["spec"][k] for k in ("dataSource", "dataSourceRef") if k in claim["spec"]}
    assert sources == spec


def test_old_claims_keep_api_groups_and_selectors_kube_no_longer_takes() -> None:
    """kube's AllowInvalidAPIGroupInDataSourceOrRef and AllowInvalidLabelValueInSelector,
    set from the old claim (following its source, as above)."""
    ref = {"apiGroup": "Bad_Group", "kind": "Foo", "name": "x"}
    selector = {"matchExpressions": [{"key": "k", "operator": "In", "values": ["a b"]}]}
    claim = pvc(dataSource=dict(ref), dataSourceRef=dict(ref), selector=selector)

    def label(obj: Obj) -> None:
        obj["metadata"]["labels"] = {"a": "b"}

    assert update_of_stored("persistentvolumeclaims", claim, label) == ""
    assert created("persistentvolumeclaims", claim)[0].count("Invalid value") == 3
