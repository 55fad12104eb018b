"""PersistentVolumeClaim updates: kube-apiserver v1.36's immutability rules (bound claims'
resizes, volume attributes classes) and their messages, case by case."""

from __future__ import annotations

import copy

import pytest

from tests.registry.pvkit import (
    BOUND,
    CLASS_ANNOTATION,
    Obj,
    claim_spec,
    pvc,
    req,
    updated,
)

CLAIM_UPDATES: list[tuple[str, Obj, Obj, Obj, str]] = [
    (
        "access",
        claim_spec(),
        claim_spec(accessModes=["ReadWriteMany"]),
        {},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -1,6 +1,6 @@\n"
            " {\n"
            '  "AccessModes": [\n'
            '-  "ReadWriteOnce"\n'
            '+  "ReadWriteMany"\n'
            "  ],\n"
            '  "Selector": null,\n'
            '  "Resources": {\n'
        ),
    ),
    (
        "grow-pending",
        claim_spec(),
        claim_spec(resources=req("2Gi")),
        {},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -6,7 +6,7 @@\n"
            '  "Resources": {\n'
            '   "Limits": null,\n'
            '   "Requests": {\n'
            '-   "storage": "1Gi"\n'
            '+   "storage": "2Gi"\n'
            "   }\n"
            "  },\n"
            '  "VolumeName": "",\n'
        ),
    ),
    (
        "shrink-bound-below-capacity",
        claim_spec(resources=req("2Gi")),
        claim_spec(resources=req("1Gi")),
        {"status": BOUND},
        "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity",
    ),
    (
        "shrink-bound-above-capacity",
        claim_spec(resources=req("3Gi")),
        claim_spec(resources=req("2Gi")),
        {"status": BOUND},
        "",
    ),
    (
        "shrink-pending",
        claim_spec(resources=req("2Gi")),
        claim_spec(resources=req("1Gi")),
        {},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -6,7 +6,7 @@\n"
            '  "Resources": {\n'
            '   "Limits": null,\n'
            '   "Requests": {\n'
            '-   "storage": "2Gi"\n'
            '+   "storage": "1Gi"\n'
            "   }\n"
            "  },\n"
            '  "VolumeName": "",\n'
        ),
    ),
    (
        "limits-bound",
        claim_spec(),
        claim_spec(resources=req("1Gi", limits={"storage": "5Gi"})),
        {"status": BOUND},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -4,7 +4,9 @@\n"
            "  ],\n"
            '  "Selector": null,\n'
            '  "Resources": {\n'
            '-  "Limits": null,\n'
            '+  "Limits": {\n'
            '+   "storage": "5Gi"\n'
            "+  },\n"
            '   "Requests": {\n'
            '    "storage": "1Gi"\n'
            "   }\n"
        ),
    ),
    (
        "volumename-set",
        claim_spec(),
        claim_spec(volumeName="pv1"),
        {},
        "",
    ),
    (
        "volumename-change",
        claim_spec(volumeName="pv1"),
        claim_spec(volumeName="pv2"),
        {},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -9,7 +9,7 @@\n"
            '    "storage": "1Gi"\n'
            "   }\n"
            "  },\n"
            '- "VolumeName": "pv1",\n'
            '+ "VolumeName": "pv2",\n'
            '  "StorageClassName": null,\n'
            '  "VolumeMode": "Filesystem",\n'
            '  "DataSource": null,\n'
        ),
    ),
    (
        "class-from-nil",
        claim_spec(),
        claim_spec(storageClassName="fast"),
        {},
        "",
    ),
    (
        "class-change",
        claim_spec(storageClassName="fast"),
        claim_spec(storageClassName="slow"),
        {},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -10,7 +10,7 @@\n"
            "   }\n"
            "  },\n"
            '  "VolumeName": "",\n'
            '- "StorageClassName": "fast",\n'
            '+ "StorageClassName": "slow",\n'
            '  "VolumeMode": "Filesystem",\n'
            '  "DataSource": null,\n'
            '  "DataSourceRef": null,\n'
        ),
    ),
    (
        "class-to-nil",
        claim_spec(storageClassName="fast"),
        claim_spec(),
        {},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -10,7 +10,7 @@\n"
            "   }\n"
            "  },\n"
            '  "VolumeName": "",\n'
            '- "StorageClassName": "fast",\n'
            '+ "StorageClassName": null,\n'
            '  "VolumeMode": "Filesystem",\n'
            '  "DataSource": null,\n'
            '  "DataSourceRef": null,\n'
        ),
    ),
    (
        "class-from-annotation",
        claim_spec(),
        claim_spec(storageClassName="gold"),
        {"annotations": {CLASS_ANNOTATION: "gold"}},
        "",
    ),
    (
        "class-from-annotation-other",
        claim_spec(),
        claim_spec(storageClassName="silver"),
        {"annotations": {CLASS_ANNOTATION: "gold"}},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -10,7 +10,7 @@\n"
            "   }\n"
            "  },\n"
            '  "VolumeName": "",\n'
            '- "StorageClassName": null,\n'
            '+ "StorageClassName": "silver",\n'
            '  "VolumeMode": "Filesystem",\n'
            '  "DataSource": null,\n'
            '  "DataSourceRef": null,\n'
        ),
    ),
    (
        "annotation-change",
        claim_spec(),
        claim_spec(),
        {
            "annotations": {CLASS_ANNOTATION: "gold"},
            "new_annotations": {CLASS_ANNOTATION: "silver"},
        },
        (
            'metadata.annotations.volume.beta.platform.io/storage-class: Invalid value: "silver": field is immutable'
        ),
    ),
    (
        "annotation-remove",
        claim_spec(storageClassName="gold"),
        claim_spec(storageClassName="gold"),
        {"annotations": {CLASS_ANNOTATION: "gold"}, "new_annotations": {}},
        (
            'metadata.annotations.volume.beta.platform.io/storage-class: Invalid value: "": field is immutable'
        ),
    ),
    (
        "mode",
        claim_spec(),
        claim_spec(volumeMode="Block"),
        {},
        (
            "[spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -11,7 +11,7 @@\n"
            "  },\n"
            '  "VolumeName": "",\n'
            '  "StorageClassName": null,\n'
            '- "VolumeMode": "Filesystem",\n'
            '+ "VolumeMode": "Block",\n'
            '  "DataSource": null,\n'
            '  "DataSourceRef": null,\n'
            '  "VolumeAttributesClassName": null\n'
            ', volumeMode: Invalid value: "Block": field is immutable]'
        ),
    ),
    (
        "vac-pending",
        claim_spec(),
        claim_spec(volumeAttributesClassName="gold"),
        {},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -14,5 +14,5 @@\n"
            '  "VolumeMode": "Filesystem",\n'
            '  "DataSource": null,\n'
            '  "DataSourceRef": null,\n'
            '- "VolumeAttributesClassName": null\n'
            '+ "VolumeAttributesClassName": "gold"\n'
            " }\n"
        ),
    ),
    (
        "vac-bound",
        claim_spec(),
        claim_spec(volumeAttributesClassName="gold"),
        {"status": BOUND},
        "",
    ),
    (
        "vac-nil-current",
        claim_spec(volumeAttributesClassName="gold"),
        claim_spec(),
        {"status": {**BOUND, "currentVolumeAttributesClassName": "gold"}},
        (
            "spec.volumeAttributesClassName: Forbidden: update to nil is forbidden when status.currentVolumeAttributesClassName is not nil"
        ),
    ),
    (
        "vac-empty-current",
        claim_spec(volumeAttributesClassName="gold"),
        claim_spec(volumeAttributesClassName=""),
        {"status": {**BOUND, "currentVolumeAttributesClassName": "gold"}},
        (
            "spec.volumeAttributesClassName: Forbidden: update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil"
        ),
    ),
    (
        "vac-nil-bound",
        claim_spec(volumeAttributesClassName="gold"),
        claim_spec(),
        {"status": BOUND},
        "",
    ),
    (
        "selector",
        claim_spec(),
        claim_spec(selector={"matchLabels": {"a": "b"}}),
        {},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -2,7 +2,11 @@\n"
            '  "AccessModes": [\n'
            '   "ReadWriteOnce"\n'
            "  ],\n"
            '- "Selector": null,\n'
            '+ "Selector": {\n'
            '+  "matchLabels": {\n'
            '+   "a": "b"\n'
            "+  }\n"
            "+ },\n"
            '  "Resources": {\n'
            '   "Limits": null,\n'
            '   "Requests": {\n'
        ),
    ),
    (
        "datasource",
        claim_spec(),
        claim_spec(dataSource={"kind": "PersistentVolumeClaim", "name": "src"}),
        {},
        (
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -12,7 +12,16 @@\n"
            '  "VolumeName": "",\n'
            '  "StorageClassName": null,\n'
            '  "VolumeMode": "Filesystem",\n'
            '- "DataSource": null,\n'
            '- "DataSourceRef": null,\n'
            '+ "DataSource": {\n'
            '+  "APIGroup": null,\n'
            '+  "Kind": "PersistentVolumeClaim",\n'
            '+  "Name": "src"\n'
            "+ },\n"
            '+ "DataSourceRef": {\n'
            '+  "APIGroup": null,\n'
            '+  "Kind": "PersistentVolumeClaim",\n'
            '+  "Name": "src",\n'
            '+  "Namespace": null\n'
            "+ },\n"
            '  "VolumeAttributesClassName": null\n'
            " }\n"
        ),
    ),
    (
        "invalid-new",
        claim_spec(),
        claim_spec(accessModes=[]),
        {},
        (
            "[spec.accessModes: Required value: at least 1 access mode is required, "
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -1,7 +1,5 @@\n"
            " {\n"
            '- "AccessModes": [\n'
            '-  "ReadWriteOnce"\n'
            "- ],\n"
            '+ "AccessModes": [],\n'
            '  "Selector": null,\n'
            '  "Resources": {\n'
            '   "Limits": null,\n'
            "]"
        ),
    ),
    (
        "bound-many",
        claim_spec(),
        claim_spec(accessModes=["ReadOnlyMany"], resources=req("500Mi"), volumeMode="Block"),
        {"status": BOUND},
        (
            "[spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
            "@@ -1,6 +1,6 @@\n"
            " {\n"
            '  "AccessModes": [\n'
            '-  "ReadWriteOnce"\n'
            '+  "ReadOnlyMany"\n'
            "  ],\n"
            '  "Selector": null,\n'
            '  "Resources": {\n'
            "@@ -11,7 +11,7 @@\n"
            "  },\n"
            '  "VolumeName": "",\n'
            '  "StorageClassName": null,\n'
            '- "VolumeMode": "Filesystem",\n'
            '+ "VolumeMode": "Block",\n'
            '  "DataSource": null,\n'
            '  "DataSourceRef": null,\n'
            '  "VolumeAttributesClassName": null\n'
            ", spec.resources.requests.storage: Forbidden: field can not be less than status.capacity, "
            'volumeMode: Invalid value: "Block": field is immutable]'
        ),
    ),
    (
        "grow-bound-with-class",
        claim_spec(storageClassName="expandable"),
        claim_spec(
            storageClassName="expandable", resources=req("1536Mi"), volumeAttributesClassName="gold"
        ),
        {"status": BOUND},
        "",
    ),
]


@pytest.mark.parametrize(
    ("case", "old", "new", "extra", "message"), CLAIM_UPDATES, ids=[c[0] for c in CLAIM_UPDATES]
)
def test_claim_updates_as_kube(case: str, old: Obj, new: Obj, extra: Obj, message: str) -> None:
    claim = pvc(name=f"pvchelper-{case}", annotations=extra.get("annotations"))
    claim["spec"] = old

    def change(obj: Obj) -> None:
        obj["spec"] = copy.deepcopy(new)
        if "new_annotations" in extra:
            obj["metadata"]["annotations"] = extra["new_annotations"]

    got = updated("persistentvolumeclaims", claim, change, old_status=extra.get("status"))
    assert got[0] == message
