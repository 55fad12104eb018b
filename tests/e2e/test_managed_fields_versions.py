"""Ownership across the versions of a kind: each manager's fields are compared in its own
apiVersion, as kube's field manager converts the objects into it (answers checked
against kube-apiserver v1.36)."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import requests

from platform_api.apiserver import pki
from tests.e2e.answers import status, unknown
from tests.e2e.conftest import Server
from tests.e2e.crds import (
    MERGE,
    SCHEMA,
    crd_manifest,
    create_crd,
    delete_crd,
    namespace,
    ns_path,
    version,
)
from tests.e2e.test_authz_webhook import stop_webhook
from tests.e2e.test_crd_versions import ca_bundle, renaming_webhook, webhook_crd

APPLY = {"Content-Type": "application/apply-patch+yaml"}
# v1: tags a set, and no ``extra``; v2: tags atomic, anything goes (its own fields too)
V1_SCHEMA = copy.deepcopy(SCHEMA)
V1_SCHEMA["properties"]["spec"]["properties"]["tags"] = {
    "type": "array",
    "items": {"type": "string"},
    "x-kubernetes-list-type": "set",
}
V2_SCHEMA = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _entries(obj: dict[str, Any]) -> list[tuple[str, str, str, dict]]:
    return [
        (e["manager"], e["operation"], e["apiVersion"].rpartition("/")[2], e["fieldsV1"])
        for e in obj["metadata"].get("managedFields", [])
    ]


def _conflict(manager: str, path: str) -> dict[str, Any]:
    cause = {"reason": "FieldManagerConflict", "message": f'conflict with "{manager}"'}
    message = f'Apply failed with 1 conflict: conflict with "{manager}": {path}'
    return status(409, "Conflict", message, {"causes": [{**cause, "field": path}]})


def _crontab(group: str, v: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/{v}",
        "kind": "CronTab",
        "metadata": {"name": "a"},
        "spec": spec,
    }


def test_custom_resource_managers_are_compared_in_their_versions(
    server: Server, admin: requests.Session
) -> None:
    group = "mf-versions.example.com"
    versions = [version("v1", schema=V1_SCHEMA), version("v2", storage=False, schema=V2_SCHEMA)]
    crd = create_crd(admin, server, crd_manifest(group, versions=versions))
    ns = namespace(admin, server, "mf-versions")
    url = {v: server.url + ns_path(group, ns, v=v) + "/a" for v in ("v1", "v2")}
    created = admin.patch(
        url["v1"] + "?fieldManager=one",
        json=_crontab(group, "v1", image="i", tags=["x"]),
        headers=APPLY,
    )
    assert created.status_code == 201, created.text
    # a field only v2 declares does not convert into v1, where "one" owns fields
    body = _crontab(group, "v2", extra=1)
    r = admin.patch(url["v2"] + "?fieldManager=two", json=body, headers=APPLY)
    message = "failed to convert new object: .spec.extra: field not declared in schema"
    assert (r.status_code, r.json()) == (500, unknown(message))
    # in v1 terms, changing v2's atomic tags changes the set's items one owns
    body = _crontab(group, "v2", tags=["z"])
    r = admin.patch(url["v2"] + "?fieldManager=two&force=true", json=body, headers=APPLY)
    assert r.status_code == 200, r.text
    assert _entries(r.json()) == [
        ("one", "Apply", "v1", {"f:spec": {"f:image": {}}}),
        ("two", "Apply", "v2", {"f:spec": {".": {}, "f:tags": {}}}),
    ]
    # and in v2 terms a new v1 set item changes the list two owns whole
    body = _crontab(group, "v1", tags=["z", "w"])
    r = admin.patch(url["v1"] + "?fieldManager=one", json=body, headers=APPLY)
    assert (r.status_code, r.json()) == (409, _conflict("two", ".spec.tags"))
    # an Update whose object will not convert for a manager leaves no managedFields
    r = admin.patch(url["v2"], json={"spec": {"extra": 2}}, headers=MERGE)
    assert r.status_code == 200 and "managedFields" not in r.json()["metadata"]
    delete_crd(admin, server, crd["metadata"]["name"])


def test_autoscaler_managers_of_v1_and_v2(server: Server, admin: requests.Session) -> None:
    """An HPA's v1 target percentage is its v2 metrics list: an applier of v1 conflicts
    with the v2 owner of ``metrics``, as kube's converted comparison finds."""
    ns = namespace(admin, server, "mf-hpa")
    base = f"{server.url}/apis/autoscaling/{{v}}/namespaces/{ns}/horizontalpodautoscalers/h"
    target = {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}
    metric = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}
    metric["resource"]["target"]["averageUtilization"] = 50  # type: ignore[index]
    v2 = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": target, "minReplicas": 1, "maxReplicas": 5, "metrics": [metric]},
    }
    r = admin.patch(base.format(v="v2") + "?fieldManager=a", json=v2, headers=APPLY)
    assert r.status_code == 201, r.text
    v1 = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": target, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60},
    }
    r = admin.patch(base.format(v="v1") + "?fieldManager=b", json=v1, headers=APPLY)
    assert (r.status_code, r.json()) == (409, _conflict("a", ".spec.metrics"))
    r = admin.patch(base.format(v="v1") + "?fieldManager=b&force=true", json=v1, headers=APPLY)
    ref = {"f:apiVersion": {}, "f:kind": {}, "f:name": {}}
    assert _entries(r.json()) == [
        (
            "a",
            "Apply",
            "v2",
            {"f:spec": {"f:maxReplicas": {}, "f:minReplicas": {}, "f:scaleTargetRef": ref}},
        ),
        (
            "b",
            "Apply",
            "v1",
            {
                "f:spec": {
                    "f:maxReplicas": {},
                    "f:scaleTargetRef": {},
                    "f:targetCPUUtilizationPercentage": {},
                }
            },
        ),
    ]


def test_an_event_written_through_the_other_group_drops_those_entries(
    server: Server, admin: requests.Session
) -> None:
    """kube's field manager cannot convert between core and events.k8s.io Events, so a
    write through one group drops the entries of the other."""
    ns = namespace(admin, server, "mf-events")
    events = f"{server.url}/apis/events.platform.io/v1/namespaces/{ns}/events"
    created = admin.post(
        events,
        json={
            "apiVersion": "events.platform.io/v1",
            "kind": "Event",
            "metadata": {"name": "e"},
            "eventTime": "2026-12-07T12:00:00.000000Z",
            "reportingController": "a/b",
            "reportingInstance": "i",
            "action": "Act",
            "reason": "R",
            "type": "Normal",
            "regarding": {"kind": "Pod", "name": "p", "namespace": ns},
        },
    )
    assert created.status_code == 201, created.text
    core = f"{server.url}/api/v1/namespaces/{ns}/events/e?fieldManager=core"
    r = admin.patch(core, json={"message": "m", "count": 5}, headers=MERGE)
    assert _entries(r.json()) == [("core", "Update", "v1", {"f:count": {}, "f:message": {}})]
    r = admin.patch(
        events + "/e?fieldManager=ev", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE
    )
    labels = {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}}
    assert _entries(r.json()) == [("ev", "Update", "v1", labels)]


def test_an_unserved_version_is_compared_in_its_own_schema(
    server: Server, admin: requests.Session
) -> None:
    """kube types every version of the CRD, served or not: an entry of an unserved
    version whose list is atomic conflicts with a v1 apply that adds a set item."""
    group = "mf-unserved.example.com"
    atomic = copy.deepcopy(V1_SCHEMA)
    atomic["properties"]["spec"]["properties"]["tags"]["x-kubernetes-list-type"] = "atomic"
    versions = [
        version("v1", schema=V1_SCHEMA),
        version("v1beta1", storage=False, served=False, schema=atomic),
    ]
    crd = create_crd(admin, server, crd_manifest(group, versions=versions))
    ns = namespace(admin, server, "mf-unserved")
    url = server.url + ns_path(group, ns) + "/a"
    made = admin.post(server.url + ns_path(group, ns), json=_crontab(group, "v1", tags=["x"]))
    assert made.status_code == 201, made.text
    old = {"manager": "old", "operation": "Apply", "apiVersion": f"{group}/v1beta1"}
    old |= {"fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:tags": {}}}}
    body = made.json()
    body["metadata"]["managedFields"] = [old]
    assert admin.put(url, json=body).status_code == 200
    r = admin.patch(
        url + "?fieldManager=new", json=_crontab(group, "v1", tags=["y"]), headers=APPLY
    )
    assert (r.status_code, r.json()) == (409, _conflict("old", ".spec.tags"))
    delete_crd(admin, server, crd["metadata"]["name"])


def test_an_entry_kube_cannot_parse_the_version_of_clears_an_update(
    server: Server, admin: requests.Session
) -> None:
    ns = namespace(admin, server, "mf-unparsed")
    url = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
    made = admin.post(url, json={"metadata": {"name": "c"}, "data": {"a": "1"}}).json()
    odd = {"manager": "odd", "operation": "Update", "apiVersion": "a/b/c"}
    made["metadata"]["managedFields"].append({**odd, "fieldsType": "FieldsV1", "fieldsV1": {}})
    r = admin.put(url + "/c", json=made)
    assert r.status_code == 200 and "managedFields" not in r.json()["metadata"]


def test_a_webhook_converted_kind_is_compared_through_its_webhook(
    tmp_path: Path, server: Server, admin: requests.Session
) -> None:
    """As the reference answered with the sample webhook (v2's schedule is v1's
    cronSpec): each entry is compared in its version through the webhook; with the
    webhook down an apply fails with the converter's error and an update clears them."""
    certs, hook, port = renaming_webhook(tmp_path)
    try:
        _compared_through(server, admin, certs, hook, port)
    finally:
        stop_webhook(hook)


def _compared_through(
    server: Server,
    admin: requests.Session,
    certs: pki.Paths,
    hook: subprocess.Popen[bytes],
    port: int,
) -> None:
    group = "mf-hook.example.com"
    config = {"url": f"https://127.0.0.1:{port}/", "caBundle": ca_bundle(certs.ca_cert)}
    crd = create_crd(admin, server, webhook_crd(group, config))
    ns = namespace(admin, server, "mf-hook")
    url = {v: server.url + ns_path(group, ns, v=v) + "/a" for v in ("v1", "v2")}
    body = _crontab(group, "v1", cronSpec="1 * * * *", image="x")
    assert admin.patch(url["v1"] + "?fieldManager=a", json=body, headers=APPLY).status_code == 201
    body = _crontab(group, "v2", schedule="2 * * * *")
    r = admin.patch(url["v2"] + "?fieldManager=b", json=body, headers=APPLY)
    assert (r.status_code, r.json()) == (409, _conflict("a", ".spec.cronSpec"))
    r = admin.patch(url["v2"] + "?fieldManager=c", json={"spec": {"schedule": "3"}}, headers=MERGE)
    assert _entries(r.json()) == [
        ("a", "Apply", "v1", {"f:spec": {"f:image": {}}}),
        ("c", "Update", "v2", {"f:spec": {"f:schedule": {}}}),
    ]
    body = _crontab(group, "v1", cronSpec="1 * * * *", image="x")
    r = admin.patch(url["v1"] + "?fieldManager=a", json=body, headers=APPLY)
    conflict = _conflict("c", ".spec.schedule")
    conflict["message"] = conflict["message"].replace('"c"', f'"c" using {group}/v2')
    conflict["details"]["causes"][0]["message"] += f" using {group}/v2"
    assert (r.status_code, r.json()) == (409, conflict)
    stop_webhook(hook)
    r = admin.patch(url["v1"] + "?fieldManager=a", json=body, headers=APPLY)
    message = (
        f"conversion webhook for {group}/v1, Kind=CronTab failed: "
        f'Post "https://127.0.0.1:{port}/?timeout=30s": '
        f"dial tcp 127.0.0.1:{port}: connect: connection refused"
    )
    assert (r.status_code, r.json()) == (500, unknown(message))
    r = admin.patch(url["v1"] + "?fieldManager=f", json={"spec": {"replicas": 5}}, headers=MERGE)
    assert r.status_code == 200 and "managedFields" not in r.json()["metadata"]
    delete_crd(admin, server, crd["metadata"]["name"])
