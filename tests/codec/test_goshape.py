"""goshape: a built-in object as kube's Go types write it, whatever the writer left out."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from platform_api.codec import protobuf
from platform_api.codec.goshape import (
    DECODED,
    RECEIVED,
    Kept,
    drop_empty,
    restore_empty,
    set_revision,
    shape,
)

META = {
    "name": "x",
    "namespace": "default",
    "uid": "u",
    "creationTimestamp": "2026-01-01T00:00:00Z",
}
POD_SPEC = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}

OBJECTS: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": META, "data": {"a": "b"}},
    {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": META,
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"spec": {"template": {"spec": POD_SPEC}}},
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": META,
        "involvedObject": {"kind": "Pod", "name": "p"},
        "reason": "X",
    },
    {"apiVersion": "v1", "kind": "Node", "metadata": META},
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": META,
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"spec": POD_SPEC}},
    },
    {
        "apiVersion": "apiextensions.platform.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": META,
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {"type": "object", "properties": {"a": {"type": "string"}}}
                            },
                        }
                    },
                }
            ],
        },
    },
    {
        "apiVersion": "discovery.platform.io/v1",
        "kind": "EndpointSlice",
        "metadata": META,
        "addressType": "IPv4",
    },
]


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: o["kind"])
def test_shaped_as_the_protobuf_round_trip_gives_it(obj: dict[str, Any]) -> None:
    """What an etcd replica decodes from Protobuf is what the writing replica (and LMDB)
    now keeps: both follow Go's JSON for absent fields."""
    shaped = copy.deepcopy(obj)
    shape(shaped)
    assert shaped == protobuf.decode(protobuf.encode(obj))


def test_a_cronjob_reads_back_as_kube_answers_it() -> None:
    cronjob = copy.deepcopy(OBJECTS[1])
    shape(cronjob)
    # kube v1.36's answer to this create (the reference server)
    assert cronjob["status"] == {}
    assert cronjob["spec"]["jobTemplate"]["metadata"] == {}
    assert cronjob["spec"]["jobTemplate"]["spec"]["template"]["metadata"] == {}


def test_an_event_gets_gos_zero_values() -> None:
    event = copy.deepcopy(OBJECTS[2])
    shape(event)
    assert {k: event[k] for k in event if k not in OBJECTS[2]} == {
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "eventTime": None,
        "reportingComponent": "",
        "reportingInstance": "",
    }


def test_a_nil_pointer_without_omitempty_is_written_null() -> None:
    """A PVC's ``dataSource.apiGroup`` (``*string``, no omitempty): kube v1.36 answers
    ``"apiGroup": null`` first, in its struct's place; a DRA capacity's ``requestPolicy``
    likewise writes its unset ``default`` as null."""
    spec = {"dataSource": {"kind": "PersistentVolumeClaim", "name": "src"}}
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {}, "spec": spec}
    shape(claim)
    assert list(claim["spec"]["dataSource"].items()) == [
        ("apiGroup", None),
        ("kind", "PersistentVolumeClaim"),
        ("name", "src"),
    ]


def test_what_the_writer_sent_is_kept() -> None:
    role = {
        "apiVersion": "rbac.authorization.platform.io/v1",
        "kind": "Role",
        "metadata": {"name": "r"},
        "rules": [{"verbs": ["get"]}],
    }
    shape(role)
    assert role["rules"] == [{"verbs": ["get"]}]  # not replaced; a rule's slices left out
    bare = {"apiVersion": "rbac.authorization.platform.io/v1", "kind": "Role", "metadata": {}}
    shape(bare)
    assert bare["rules"] is None  # no omitempty: Go writes a nil slice as null


def test_custom_resources_and_unknown_kinds_are_left_as_sent() -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    shape(widget)
    assert widget == {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}


def test_values_of_the_wrong_shape_are_left_to_validation() -> None:
    odd: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": "no"}
    shape(odd)
    assert odd["spec"] == "no" and odd["status"] == {}
    listed: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": 3}}
    shape(listed)
    assert listed["spec"]["containers"] == 3


def test_empty_lists_and_maps_go_writes_none_of_are_left_out() -> None:
    """``omitempty`` leaves an empty list or map out, as kube answers a ConfigMap created
    with ``data: {}`` (reference); a list without ``omitempty`` is null, as Protobuf
    decodes it (a ClusterRole created with ``rules: []``, reference)."""
    config_map: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {}, "finalizers": []},
        "data": {},
    }
    shape(config_map)
    assert config_map == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {"volumes": [], "containers": []},
    }
    shape(pod)
    assert "volumes" not in pod["spec"] and pod["spec"]["containers"] is None
    role: dict[str, Any] = {
        "apiVersion": "rbac.authorization.platform.io/v1",
        "kind": "Role",
        "metadata": {"name": "r"},
    }
    shaped = {**role, "rules": []}
    shape(shaped)
    assert shaped == {**role, "rules": None} == protobuf.decode(protobuf.encode(shaped))


def test_zero_values_are_as_absent_when_a_write_is_received() -> None:
    """Decoded into Go, ``""``, ``0`` and ``false`` are no different from absent (so
    defaulting fills them); written back, Go writes those without omitempty and leaves
    the others out.  A pointer's zero is a value: ``replicas: 0`` stays."""

    def deployment() -> dict[str, Any]:
        spec = {"replicas": 0, "paused": False, "minReadySeconds": 0, "template": {}}
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {}, "spec": spec}

    received = deployment()
    shape(received, RECEIVED)
    assert received["spec"] == {"replicas": 0, "template": {}}
    service = {"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 0}]}}
    shape(service, RECEIVED)
    assert service["spec"] == {"ports": [{}]}  # port has no omitempty: absent when received
    shape(service, DECODED)
    assert service["spec"]["ports"] == [{"port": 0, "targetPort": 0}]  # ...and written back
    decoded = deployment()
    shape(decoded, DECODED)
    assert "paused" not in decoded["spec"] and "minReadySeconds" not in decoded["spec"]
    assert decoded["spec"]["replicas"] == 0


def test_stored_keys_follow_the_go_structs() -> None:
    """TypeMeta first, struct fields in declaration order (the embedded VolumeSource's
    where it is embedded), map keys sorted; unknown keys keep their places after."""
    pod = {
        "spec": {
            "volumes": [{"configMap": {"name": "c"}, "name": "v"}],
            "nodeSelector": {"z": "1", "a": "2"},
            "containers": [{"image": "i", "name": "c"}],
        },
        "metadata": {"labels": {"b": "1", "a": "2"}, "uid": "u", "name": "p", "extra": 1},
        "apiVersion": "v1",
        "kind": "Pod",
    }
    shape(pod)
    assert list(pod) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(pod["metadata"]) == ["name", "uid", "labels", "extra"]
    assert list(pod["metadata"]["labels"]) == ["a", "b"]
    assert list(pod["spec"])[:2] == ["volumes", "containers"]
    assert list(pod["spec"]["volumes"][0]) == ["name", "configMap"]
    assert list(pod["spec"]["nodeSelector"]) == ["a", "z"]
    assert list(pod["spec"]["containers"][0])[:2] == ["name", "image"]


@pytest.mark.parametrize(
    ("obj", "keys"),
    [
        (
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "a",
                    "uid": "u",
                    "creationTimestamp": "t",
                    "managedFields": [],
                },
            },
            ["name", "uid", "resourceVersion", "creationTimestamp", "managedFields"],
        ),
        (  # a custom resource: a Go map, sorted
            {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"creationTimestamp": "t", "name": "a", "uid": "u"},
            },
            ["creationTimestamp", "name", "resourceVersion", "uid"],
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}},
            ["name", "resourceVersion"],
        ),
    ],
)
def test_the_revision_goes_where_kube_writes_it(obj: dict[str, Any], keys: list[str]) -> None:
    set_revision(obj, "")
    set_revision(obj, "7")  # filled in in place
    assert list(obj["metadata"]) == keys
    assert obj["metadata"]["resourceVersion"] == "7"


def test_claim_templates_keep_their_typemeta_first_as_kube_writes_them() -> None:
    """A nested message without kind/apiVersion fields has them only as inline TypeMeta,
    first in Go's struct; an ObjectReference's own fields keep their places."""
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "s"},
        "spec": {
            "volumeClaimTemplates": [
                {"metadata": {"name": "d"}, "kind": "PersistentVolumeClaim", "apiVersion": "v1"}
            ]
        },
    }
    shape(sts)
    assert list(sts["spec"]["volumeClaimTemplates"][0])[:3] == ["kind", "apiVersion", "metadata"]
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "involvedObject": {"apiVersion": "v1", "name": "p", "kind": "Pod"},
    }
    shape(event)
    assert list(event["involvedObject"]) == ["kind", "name", "apiVersion"]


def test_explicitly_empty_lists_are_kept_for_defaulting_and_validation() -> None:
    """Go decodes ``[]`` as a non-nil slice: its defaulting (``== nil``) keeps it and its
    validation sees it, though its JSON (``omitempty``) writes neither.  RECEIVED keeps
    it; DECODED leaves it out and records where; restoring puts back only what nothing
    has replaced, and dropping takes out only what is still empty."""
    rules: dict[str, Any] = {"policies": [], "selectPolicy": "Min"}
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "spec": {"behavior": {"scaleUp": rules}, "metrics": []},
    }
    shape(hpa, RECEIVED)
    assert rules == {"policies": [], "selectPolicy": "Min"}
    assert hpa["spec"]["metrics"] == []
    kept: Kept = []
    shape(hpa, DECODED, kept)
    assert "policies" not in rules and "metrics" not in hpa["spec"]
    assert {name for _, name, _ in kept} == {"policies", "metrics"}
    hpa["spec"]["metrics"] = [{"type": "Resource"}]  # admission filled one in
    restore_empty(kept)
    assert rules["policies"] == [] and hpa["spec"]["metrics"] == [{"type": "Resource"}]
    rules["policies"].append({"type": "Pods"})  # the kind filled the restored one in
    drop_empty(kept)
    assert rules["policies"] == [{"type": "Pods"}]
    rules["policies"].clear()
    drop_empty(kept)
    assert "policies" not in rules
