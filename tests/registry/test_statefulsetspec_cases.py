"""StatefulSet specs validated case by case as kube-apiserver v1.36 answered (reference)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from platform_api import errors
from platform_api.codec.goshape import DECODED, shape
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.statefulsetspec import statefulset_changes, validate_statefulset_spec
from tests.registry.test_workloadspec import SELECT, S, T, template


def test_statefulset_ordinals_start_is_not_negative() -> None:
    spec = {
        "podManagementPolicy": "OrderedReady",
        "updateStrategy": {"type": "RollingUpdate"},
        "selector": SELECT,
        "template": template({"a": "b"}),
        "ordinals": {"start": -1},
    }
    assert [str(e) for e in validate_statefulset_spec(spec)] == [
        "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0"
    ]


# Dry-run creates of StatefulSets and the reference's answers: kube's order (retention
# policy and claim templates before the counts, the service name, then the template,
# which validates with a claim volume per claim template and without hostname and
# subdomain), and its internal rolling-update struct in messages.
STATEFULSETS: list[tuple[str, dict[str, Any], str]] = [
    (
        "s1",
        {
            "serviceName": "Bad_Svc",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"},
            },
            "replicas": -1,
            "minReadySeconds": -1,
            "podManagementPolicy": "Bogus",
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Bogus", "whenScaled": "X"},
            "ordinals": {"start": -1},
            "volumeClaimTemplates": [{"metadata": {"name": "Bad_T"}, "spec": {"accessModes": []}}],
        },
        'StatefulSet.apps "s1" is invalid: [spec.podManagementPolicy: Invalid value: "Bogus": must be \'OrderedReady\' or \'Parallel\', spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Bogus": supported values: "Retain", "Delete", spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: "X": supported values: "Retain", "Delete", spec.volumeClaimTemplates[0].spec.accessModes: Required value: at least 1 access mode is required, spec.volumeClaimTemplates[0].spec.resources[storage]: Required value, spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0, spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0, spec.serviceName: Invalid value: "Bad_Svc": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\'), spec.template.spec.volumes[0].name: Invalid value: "Bad_T": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\'), spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"]',
    ),
    (
        "s2",
        {
            "serviceName": "svc",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "i",
                            "volumeMounts": [{"name": "data", "mountPath": "/d"}],
                        }
                    ],
                    "hostname": "Bad_Host",
                    "subdomain": "Bad_Sub",
                    "volumes": [{"name": "data", "emptyDir": {}}],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
        "",
    ),
    (
        "s3",
        {
            "serviceName": "svc",
            "selector": {"matchLabels": {}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}], "activeDeadlineSeconds": 5},
            },
        },
        'StatefulSet.apps "s3" is invalid: [spec.selector: Invalid value: {}: empty selector is invalid for statefulset, spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported]',
    ),
    (
        "s4",
        {
            "serviceName": "svc",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
            "updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}},
        },
        'StatefulSet.apps "s4" is invalid: spec.updateStrategy.rollingUpdate: Invalid value: {"Partition":1,"MaxUnavailable":null}: only allowed for updateStrategy \'RollingUpdate\'',
    ),
    (
        "s5",
        {
            "serviceName": "svc",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
            "updateStrategy": {"type": "Bogus"},
        },
        'StatefulSet.apps "s5" is invalid: spec.updateStrategy: Invalid value: {"Type":"Bogus","RollingUpdate":null}: must be \'RollingUpdate\' or \'OnDelete\'',
    ),
    (
        "s6",
        {
            "serviceName": "svc",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"partition": -1, "maxUnavailable": 0},
            },
        },
        'StatefulSet.apps "s6" is invalid: spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0',
    ),
    (
        "s7",
        {
            "serviceName": "",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
        "",
    ),
]


@pytest.mark.parametrize(
    ("name", "spec", "message"), STATEFULSETS, ids=[c[0] for c in STATEFULSETS]
)
def test_statefulsets_as_kube_answered(name: str, spec: dict[str, Any], message: str) -> None:
    obj = {"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": copy.deepcopy(spec)}
    apply_defaults("apps", "StatefulSet", obj)
    shape(obj, DECODED)  # as the store holds a write: empty maps gone
    errs = validate_statefulset_spec(obj["spec"])
    assert (errors.invalid("StatefulSet", "apps", name, errs).message if errs else "") == message


def test_a_statefulset_update_may_change_only_kubes_list() -> None:
    """As the reference refused a change of serviceName (and of the selector, which kube
    reports only through this rule for a StatefulSet)."""
    old = {"serviceName": "s", "replicas": 1, "selector": S, "template": T}
    assert statefulset_changes({**old, "replicas": 3, "minReadySeconds": 5}, old) == []
    (error,) = statefulset_changes({**old, "serviceName": "t"}, old)
    assert str(error) == (
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
        "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    assert statefulset_changes({**old, "selector": {"matchLabels": {"a": "c"}}}, old) == [error]
