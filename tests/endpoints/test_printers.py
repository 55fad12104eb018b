"""The printers' rules, case by case, as kube's printers.go has them (test_printers_kube.py
holds kube's own Tables of the same kinds): the columns ``kubectl get`` shows, then the
cells of the cases kube's answers do not cover."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.endpoints import printers
from platform_api.endpoints.printers import format_selector, label_selector
from platform_api.endpoints.tables import COLUMNS
from platform_api.registry.defaults import apply_defaults

Obj = dict[str, Any]
NET, FLOW = "networking.platform.io", "flowcontrol.apiserver.platform.io"
NOW = "2026-01-01T00:00:00Z"


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(printers, "clock", lambda: printers.timestamp(NOW) + 90)


def columns(group: str, plural: str) -> list[tuple[str, str, int]]:
    return [(c.name, c.type, c.priority) for c in COLUMNS[(group, plural)].columns]


def cells(group: str, plural: str, obj: Obj) -> list[Any]:
    printer = COLUMNS[(group, plural)]
    out = printer.cells({"metadata": {"name": "x", "creationTimestamp": NOW}, **obj})
    assert len(out) == len(printer.columns)
    return out


# Each column as ``name[:type][*]``: the type when not a string, ``*`` when wide-only.
KUBE_COLUMNS = {
    ("", "persistentvolumeclaims"): "Name|Status|Volume|Capacity|Access Modes|StorageClass|"
    "VolumeAttributesClass|Age|VolumeMode*",
    ("", "persistentvolumes"): "Name|Capacity|Access Modes|Reclaim Policy|Status|Claim|"
    "StorageClass|VolumeAttributesClass|Reason|Age|VolumeMode*",
    ("", "resourcequotas"): "Name|Request|Limit|Age",
    ("policy", "poddisruptionbudgets"): "Name|Min Available|Max Unavailable|"
    "Allowed Disruptions:integer|Age",
    (NET, "ingresses"): "Name|Class|Hosts|Address|Ports|Age",
    (NET, "ingressclasses"): "Name|Controller|Parameters|Age",
    (NET, "networkpolicies"): "Name|Pod-Selector|Age",
    ("scheduling.platform.io", "priorityclasses"): "Name|Value:integer|Global-Default:boolean|"
    "Age|PreemptionPolicy",
    ("apps", "daemonsets"): "Name|Desired:integer|Current:integer|Ready:integer|"
    "Up-to-date:integer|Available:integer|Node Selector|Age|Containers*|Images*|Selector*",
    ("apps", "statefulsets"): "Name|Ready|Age|Containers*|Images*",
    ("apps", "controllerrevisions"): "Name|Controller|Revision|Age",
    ("apps", "deployments"): "Name|Ready|Up-to-date|Available|Age|Containers*|Images*|Selector*",
    ("", "serviceaccounts"): "Name|Age",
    ("batch", "cronjobs"): "Name|Schedule|Timezone|Suspend:boolean|Active:integer|Last Schedule|"
    "Age|Containers*|Images*|Selector*",
    (FLOW, "flowschemas"): "Name|PriorityLevel|MatchingPrecedence|DistinguisherMethod|Age|"
    "MissingPL",
    (FLOW, "prioritylevelconfigurations"): "Name|Type|NominalConcurrencyShares|Queues|HandSize|"
    "QueueLengthLimit|Age",
}


@pytest.mark.parametrize("key", KUBE_COLUMNS, ids=[k[1] for k in KUBE_COLUMNS])
def test_columns_as_kube_defines_them(key: tuple[str, str]) -> None:
    expected = []
    for spec in KUBE_COLUMNS[key].split("|"):
        name, _, kind = spec.rstrip("*").partition(":")
        expected.append((name, kind or "string", int(spec.endswith("*"))))
    assert columns(*key) == expected
    printer = COLUMNS[key]
    assert printer.columns[0].format == "name"
    assert all(c.description for c in printer.columns)


def test_column_descriptions_are_the_field_docs() -> None:
    pvc = COLUMNS[("", "persistentvolumeclaims")].columns
    assert pvc[1].description == "phase represents the current phase of PersistentVolumeClaim."
    assert pvc[5].description == "StorageClass of the pvc"
    assert pvc[0].description.endswith("working-with-objects/names#names")
    assert pvc[7].description.startswith("CreationTimestamp is a timestamp representing")
    quota = COLUMNS[("", "resourcequotas")].columns
    assert quota[1].description == (
        "Request represents a minimum amount of cpu/memory that a container may consume."
    )


def test_claims_and_volumes() -> None:
    claim = {
        "spec": {"volumeName": "v", "accessModes": ["ReadWriteOnce"]},
        "status": {"phase": "Bound"},
    }
    # bound, but no capacity in the status: the zero quantity; the modes are the status's
    assert cells("", "persistentvolumeclaims", claim)[1:8] == [
        "Bound",
        "v",
        "0",
        "",
        "",
        "<unset>",
        "90s",
    ]
    branded = {
        "annotations": {"volume.beta.platform.io/storage-class": "old"},
        "deletionTimestamp": NOW,
    }
    claim = {
        "metadata": {"name": "c", "creationTimestamp": NOW, **branded},
        "spec": {"storageClassName": "new"},
    }
    assert cells("", "persistentvolumeclaims", claim)[1:6] == ["Terminating", "", "", "", "old"]
    volume = {
        "spec": {"accessModes": ["ReadWriteOncePod", "ReadOnlyMany"], "claimRef": {"name": "c"}},
        "status": {"phase": "Released"},
    }
    assert cells("", "persistentvolumes", volume)[1:10] == [
        "0",
        "ROX,RWOP",
        "",
        "Released",
        "/c",
        "",
        "<unset>",
        "",
        "90s",
    ]


def test_volume_defaults() -> None:
    volume: Obj = {"spec": {"persistentVolumeReclaimPolicy": ""}}
    apply_defaults("", "PersistentVolume", volume)
    assert volume["spec"] == {"persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"}


def test_quota_budgets_priority_classes() -> None:
    quota = {
        "status": {
            "hard": {"limits.cpu": "1", "requests.memory": "1Gi", "limits": "3"},
            "used": {"limits.cpu": "500m"},
        }
    }
    assert cells("", "resourcequotas", quota)[1:3] == [
        "limits: 0/3, requests.memory: 0/1Gi",
        "limits.cpu: 500m/1",
    ]
    budget = {"spec": {"maxUnavailable": 1}}
    assert cells("policy", "poddisruptionbudgets", budget)[1:4] == ["N/A", "1", 0]
    assert cells("scheduling.platform.io", "priorityclasses", {"value": 7})[1:] == [
        7,
        False,
        "90s",
        "",
    ]


@pytest.mark.parametrize(
    ("hosts", "shown"),
    [
        ([], "*"),
        ([""], "*"),
        (["a", "", "b"], "a,b"),
        (["a", "b", "c"], "a,b,c"),
        (["a", "b", "c", ""], "a,b,c + 1 more..."),
        (["", "a", "b", "c", "d"], "a,b,c + 2 more..."),
    ],
)
def test_ingress_hosts(hosts: list[str], shown: str) -> None:
    rules = [{"host": h} if h else {} for h in hosts]
    assert cells(NET, "ingresses", {"spec": {"rules": rules}})[2] == shown


def test_ingresses_and_classes() -> None:
    ingress = {
        "spec": {"tls": [{}]},
        "status": {"loadBalancer": {"ingress": [{"hostname": "b"}, {"ip": "a", "hostname": "z"}]}},
    }
    assert cells(NET, "ingresses", ingress)[1:5] == ["<none>", "*", "a,b", "80, 443"]
    default = {"annotations": {"ingressclass.platform.io/is-default-class": "true"}}
    klass = {
        "metadata": {"name": "c", **default},
        "spec": {"parameters": {"apiGroup": "", "kind": "K", "name": "p"}},
    }
    assert cells(NET, "ingressclasses", klass)[:3] == ["c (default)", "", "K./p"]
    assert cells(NET, "networkpolicies", {"spec": {"podSelector": {}}})[1] == "<none>"


def test_selectors() -> None:
    assert label_selector(None) == "" and format_selector({}) == "<none>"
    exprs = [
        {"key": "b", "operator": "In", "values": ["y", "x"]},
        {"key": "a", "operator": "DoesNotExist"},
    ]
    assert (
        format_selector({"matchLabels": {"c": "1"}, "matchExpressions": exprs})
        == "!a,b in (x,y),c=1"
    )
    assert format_selector({"matchExpressions": [{"key": "a", "operator": "In"}]}) == "<error>"
    bad = {"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Is"}]}}}
    assert cells("apps", "deployments", bad)[-1] == "<invalid>"


def test_workloads() -> None:
    template = {"spec": {"containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "j"}]}}
    daemons = {"spec": {"template": template, "selector": {"matchLabels": {"k": "v"}}}}
    assert cells("apps", "daemonsets", daemons)[1:] == [
        0,
        0,
        0,
        0,
        0,
        "<none>",
        "90s",
        "a,b",
        "i,j",
        "k=v",
    ]
    sets = {"spec": {"replicas": 3, "template": template}, "status": {"readyReplicas": 1}}
    assert cells("apps", "statefulsets", sets)[1:] == ["1/3", "90s", "a,b", "i,j"]
    owners = [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d"},
        {"apiVersion": "example.com/v1", "kind": "Thing", "name": "t", "controller": True},
    ]
    revision = {"metadata": {"name": "r", "ownerReferences": owners}, "revision": 2}
    assert cells("apps", "controllerrevisions", revision)[1:3] == ["thing.example.com/t", 2]
    controllers = {"spec": {"selector": {"app": "a"}}}
    assert cells("", "replicationcontrollers", controllers)[-1] == "app=a"


@pytest.mark.parametrize(
    ("meta", "spec", "status", "shown"),
    [
        ({}, {"completions": 2}, {"succeeded": 1}, ["Running", "1/2"]),
        ({}, {"parallelism": 3}, {}, ["Running", "0/1 of 3"]),
        ({}, {}, {"conditions": [{"type": "Complete", "status": "True"}]}, ["Complete", "0/1"]),
        (
            {"deletionTimestamp": NOW},
            {},
            {"conditions": [{"type": "Suspended", "status": "True"}]},
            ["Terminating", "0/1"],
        ),
        ({}, {}, {"conditions": [{"type": "Suspended", "status": "True"}]}, ["Suspended", "0/1"]),
        (
            {},
            {},
            {"conditions": [{"type": "FailureTarget", "status": "True"}]},
            ["FailureTarget", "0/1"],
        ),
    ],
)
def test_job_state(meta: Obj, spec: Obj, status: Obj, shown: list[str]) -> None:
    job = {
        "metadata": {"name": "j", "creationTimestamp": NOW, **meta},
        "spec": spec,
        "status": status,
    }
    assert cells("batch", "jobs", job)[1:3] == shown


def test_job_duration_and_cron_jobs() -> None:
    status = {"startTime": NOW, "completionTime": "2026-01-01T00:00:42Z"}
    assert cells("batch", "jobs", {"status": status})[3] == "42s"
    assert cells("batch", "jobs", {"status": {"startTime": NOW}})[3] == "90s"
    cron = {"spec": {"schedule": "@daily", "jobTemplate": {}}, "status": {"lastScheduleTime": NOW}}
    assert cells("batch", "cronjobs", cron)[1:] == [
        "@daily",
        "<none>",
        "<unset>",
        0,
        "90s",
        "90s",
        "",
        "",
        "<none>",
    ]


def test_flow_control_order_and_cells() -> None:
    def schema(name: str, precedence: int, **spec: Any) -> Obj:
        return {
            "metadata": {"name": name, "creationTimestamp": NOW},
            "spec": {"matchingPrecedence": precedence, **spec},
        }

    printer = COLUMNS[(FLOW, "flowschemas")]
    assert printer.sort_key is not None
    listed = sorted([schema("b", 10), schema("c", 5), schema("a", 10)], key=printer.sort_key)
    assert [s["metadata"]["name"] for s in listed] == ["c", "a", "b"]
    assert printer.cells(schema("a", 1, distinguisherMethod={"type": "ByUser"}))[3:] == [
        "ByUser",
        "90s",
        "?",
    ]
    level = {
        "spec": {
            "type": "Limited",
            "limited": {"nominalConcurrencyShares": 5, "limitResponse": {"type": "Reject"}},
        }
    }
    assert cells(FLOW, "prioritylevelconfigurations", level)[1:6] == [
        "Limited",
        5,
        "<none>",
        "<none>",
        "<none>",
    ]


def test_nodes_and_events() -> None:
    labels = {
        "node-role.platform.io/": "",
        "node-role.platform.io/edge": "",
        "platform.io/role": "",
    }
    node = {
        "metadata": {"name": "n", "creationTimestamp": NOW, "labels": labels},
        "status": {"nodeInfo": {"architecture": "arm64"}},
    }
    assert cells("", "nodes", node)[1:3] == ["Unknown", "edge"]
    assert cells("", "nodes", node)[-2] == "<unknown> (arm64)"
    event = {
        "regarding": {"kind": "Pod", "name": "p", "fieldPath": "spec"},
        "note": " hi ",
        "reason": "R",
        "deprecatedSource": {"component": "kubelet"},
        "deprecatedFirstTimestamp": NOW,
        "deprecatedCount": 2,
        "reportingInstance": "node-1",
    }
    row = COLUMNS[("events.platform.io", "events")].cells({"metadata": {"name": "e"}, **event})
    assert row == ["90s", "", "R", "pod/p", "spec", "kubelet, node-1", "hi", "90s", 2, "e"]


@pytest.mark.parametrize(
    ("meta", "status", "reason"),
    [
        ({"deletionTimestamp": NOW}, {"phase": "Running"}, "Terminating"),
        ({"deletionTimestamp": NOW}, {"phase": "Succeeded"}, "Succeeded"),
        ({"deletionTimestamp": NOW}, {"phase": "Running", "reason": "NodeLost"}, "Unknown"),
        (
            {},
            {"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {}}]},
            "Init:0/1",
        ),
        ({}, {"phase": "Failed", "reason": "Evicted"}, "Evicted"),
    ],
)
def test_pod_status(meta: Obj, status: Obj, reason: str) -> None:
    pod = {
        "metadata": {"name": "p", "creationTimestamp": NOW, **meta},
        "spec": {"initContainers": [{"name": "i"}]},
        "status": status,
    }
    assert cells("", "pods", pod)[2] == reason
