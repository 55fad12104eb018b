"""Fields Go writes when absent (null, {}, "") and an EndpointSlice's generation: the
requests kube-apiserver v1.36 answered (reference, 2026-11-29 and 2026-11-30), answered
alike."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server

MERGE = {"Content-Type": "application/merge-patch+json"}
RBAC = "/apis/rbac.authorization.platform.io/v1"
SLICES = "/apis/discovery.platform.io/v1/namespaces/default/endpointslices"
POD_SPEC = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}


def _fields(obj: dict[str, Any]) -> list[Any]:
    return [m["fieldsV1"] for m in obj["metadata"].get("managedFields") or []]


def test_roles_without_rules_have_null_rules_nobody_owns(
    server: Server, admin: requests.Session
) -> None:
    for path, kind in (
        (RBAC + "/namespaces/default/roles", "Role"),
        (RBAC + "/clusterroles", "ClusterRole"),
    ):
        body = {"apiVersion": RBAC[6:], "kind": kind, "metadata": {"name": "null-rules"}}
        made = admin.post(server.url + path, json=body).json()
        assert made["rules"] is None and _fields(made) == []
        got = admin.get(f"{server.url}{path}/null-rules").json()
        assert "rules" in got and got["rules"] is None
        admin.delete(f"{server.url}{path}/null-rules")


def test_an_empty_list_go_does_not_omit_is_answered_null(
    server: Server, admin: requests.Session
) -> None:
    """kube stores Protobuf, which decodes an empty list as a nil slice: a ClusterRole
    created with ``rules: []`` reads back ``"rules": null``, its manager still owning it."""
    path = RBAC + "/clusterroles"
    body = {"apiVersion": RBAC[6:], "kind": "ClusterRole", "metadata": {"name": "empty-rules"}}
    made = admin.post(server.url + path, json={**body, "rules": []})
    assert made.status_code == 201
    assert made.json()["rules"] is None and _fields(made.json()) == [{"f:rules": {}}]
    got = admin.get(f"{server.url}{path}/empty-rules").json()
    assert "rules" in got and got["rules"] is None
    admin.delete(f"{server.url}{path}/empty-rules")


def test_an_endpoint_slice_counts_changes_and_labels(
    server: Server, admin: requests.Session
) -> None:
    body = {
        "apiVersion": "discovery.platform.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "gen-slice"},
        "addressType": "IPv4",
    }
    made = admin.post(server.url + SLICES, json=body).json()
    assert (made["metadata"]["generation"], made["endpoints"], made["ports"]) == (1, None, None)
    assert _fields(made) == [{"f:addressType": {}}]
    url = f"{server.url}{SLICES}/gen-slice"
    steps = [
        ({"metadata": {"annotations": {"a": "b"}}}, 1),
        ({"metadata": {"labels": {"a": "b"}}}, 2),
        ({"endpoints": [{"addresses": ["10.1.1.1"]}]}, 3),
    ]
    for patch, generation in steps:
        assert (
            admin.patch(url, json=patch, headers=MERGE).json()["metadata"]["generation"]
            == generation
        )
    admin.delete(url)


def test_a_cronjob_has_the_structs_go_writes_and_owns_none_of_them(
    server: Server, admin: requests.Session
) -> None:
    url = server.url + "/apis/batch/v1/namespaces/default/cronjobs"
    body = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "go-structs"},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"spec": {"template": {"spec": POD_SPEC}}},
        },
    }
    made = admin.post(url, json=body)
    assert made.status_code == 201
    for answer in (made.json(), admin.get(f"{url}/go-structs").json()):
        assert answer["status"] == {}
        template = answer["spec"]["jobTemplate"]
        assert template["metadata"] == {} and template["spec"]["template"]["metadata"] == {}
        [owned] = _fields(answer)
        assert "f:status" not in owned and "f:metadata" not in owned["f:spec"]["f:jobTemplate"]
    admin.delete(f"{url}/go-structs")


def test_an_event_and_a_node_have_gos_zero_values(server: Server, admin: requests.Session) -> None:
    events = server.url + "/api/v1/namespaces/default/events"
    event = {
        "metadata": {"name": "go-zero"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "X",
        "message": "m",
    }
    made = admin.post(events, json=event).json()
    assert {k: made[k] for k in made if k not in (*event, "kind", "apiVersion")} == {
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "eventTime": None,
        "reportingComponent": "",
        "reportingInstance": "",
    }
    assert _fields(made) == [{"f:involvedObject": {}, "f:message": {}, "f:reason": {}}]
    node = admin.post(server.url + "/api/v1/nodes", json={"metadata": {"name": "go-zero"}}).json()
    info = dict.fromkeys(
        [
            "machineID",
            "systemUUID",
            "bootID",
            "kernelVersion",
            "osImage",
            "containerRuntimeVersion",
            "kubeletVersion",
            "kubeProxyVersion",
            "operatingSystem",
            "architecture",
        ],
        "",
    )
    assert node["status"] == {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": info}
    admin.delete(f"{events}/go-zero")
    admin.delete(server.url + "/api/v1/nodes/go-zero")


def test_a_put_without_the_zero_values_changes_nothing(
    server: Server, admin: requests.Session
) -> None:
    """kube compares Go structs, in which a left-out struct and an empty one are one: such
    a PUT neither bumps the generation nor writes a new revision."""
    url = server.url + "/apis/batch/v1/namespaces/default/cronjobs"
    spec = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": POD_SPEC}}}}
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "go-put"}}
    made = admin.post(url, json={**body, "spec": spec}).json()
    assert made["spec"]["jobTemplate"]["metadata"] == {}  # the stored spec has it, ours not
    meta = {"name": "go-put", "resourceVersion": made["metadata"]["resourceVersion"]}
    again = admin.put(f"{url}/go-put", json={**body, "metadata": meta, "spec": spec})
    assert again.status_code == 200
    assert again.json()["metadata"]["generation"] == 1
    assert again.json()["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
    admin.delete(f"{url}/go-put")


def test_an_empty_map_go_omits_is_not_answered(server: Server, admin: requests.Session) -> None:
    url = server.url + "/api/v1/namespaces/default/configmaps"
    made = admin.post(url, json={"metadata": {"name": "go-empty", "labels": {}}, "data": {}})
    assert made.status_code == 201
    got = admin.get(f"{url}/go-empty").json()
    for answer in (made.json(), got):  # kube v1.36: neither data nor labels
        assert "data" not in answer and "labels" not in answer["metadata"]
    # so a JSON patch adding under /data finds no /data, and kube's answer is this one
    patch = [{"op": "add", "path": "/data/k0", "value": "v"}]
    refused = admin.patch(
        f"{url}/go-empty", json=patch, headers={"Content-Type": "application/json-patch+json"}
    )
    assert (refused.status_code, refused.json()) == (
        422,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "the server rejected our request due to an error in our request",
            "reason": "Invalid",
            "details": {},
            "code": 422,
        },
    )
    admin.delete(f"{url}/go-empty")


def test_managed_fields_are_taken_from_the_write_as_go_decodes_it(
    server: Server, admin: requests.Session
) -> None:
    """kube records ownership of the decoded Go object: empty lists and maps Go omits,
    an atomic struct at its zero value (a NetworkPolicy's ``podSelector: {}``) and
    ``stringData`` (merged into ``data`` as a Secret is decoded) are nobody's.  The
    fields sets are those kube-apiserver v1.36 recorded for these writes (reference)."""
    ns = server.url + "/api/v1/namespaces/default"
    pod = {"containers": [{"name": "c", "image": "nginx", "env": []}], "volumes": []}
    template = {"metadata": {"labels": {"a": "b"}}, "spec": pod}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "go-owned"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template},
    }
    apps = server.url + "/apis/apps/v1/namespaces/default/deployments"
    made = admin.post(apps, json=deployment).json()
    spec = _fields(made)[0]["f:spec"]["f:template"]["f:spec"]
    container = ("image", "imagePullPolicy", "name", "resources", "terminationMessagePath")
    defaulted = ("dnsPolicy", "restartPolicy", "schedulerName", "securityContext")
    assert spec == {  # no f:env, no f:volumes
        "f:containers": {
            'k:{"name":"c"}': {
                ".": {},
                **{f"f:{name}": {} for name in container},
                "f:terminationMessagePolicy": {},
            }
        },
        **{f"f:{name}": {} for name in defaulted},
        "f:terminationGracePeriodSeconds": {},
    }
    policy = {
        "apiVersion": "networking.platform.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "go-owned"},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }
    path = "/apis/networking.platform.io/v1/namespaces/default/networkpolicies"
    made = admin.post(server.url + path, json=policy).json()
    assert made["spec"]["podSelector"] == {}
    assert _fields(made) == [{"f:spec": {"f:policyTypes": {}}}]
    secret = {"metadata": {"name": "go-owned"}, "stringData": {"a": "b"}, "data": {}}
    made = admin.post(ns + "/secrets", json=secret).json()
    assert made["data"] == {"a": "Yg=="} and "stringData" not in made
    assert _fields(made) == [{"f:data": {".": {}, "f:a": {}}, "f:type": {}}]
    hooks = {
        "apiVersion": "admissionregistration.platform.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "go-owned"},
        "webhooks": [],
    }
    path = "/apis/admissionregistration.platform.io/v1/validatingwebhookconfigurations"
    made = admin.post(server.url + path, json=hooks).json()
    assert "managedFields" not in made["metadata"]  # nothing owned: no entry
    for url in (f"{apps}/go-owned", f"{ns}/secrets/go-owned", f"{server.url}{path}/go-owned"):
        admin.delete(url)


def test_zero_values_are_as_absent_as_in_go(server: Server, admin: requests.Session) -> None:
    """Go cannot tell a zero value from an absent one: kube defaults ``type: ""`` as it
    defaults no type, and leaves an omitempty ``false`` out of the object and of the
    writer's fields; a non-omitempty list patched to null is its writer's (reference)."""
    url = server.url + "/api/v1/namespaces/default/services"
    spec = {"type": "", "sessionAffinity": "", "ports": [{"port": 80, "protocol": ""}]}
    made = admin.post(url, json={"metadata": {"name": "go-zero"}, "spec": spec})
    assert made.status_code == 201, made.text
    got = made.json()["spec"]
    assert (got["type"], got["sessionAffinity"], got["ports"][0]["protocol"]) == (
        "ClusterIP",
        "None",
        "TCP",
    )
    admin.delete(f"{url}/go-zero")

    apps = server.url + "/apis/apps/v1/namespaces/default/deployments"
    pod = {"containers": [{"name": "c", "image": "busybox"}]}
    template = {"metadata": {"labels": {"a": "b"}}, "spec": pod}
    selector = {"matchLabels": {"a": "b"}}
    body = {"metadata": {"name": "go-zero"}, "spec": {"selector": selector, "template": template}}
    assert admin.post(apps, json=body).status_code == 201
    change = {"spec": {"paused": False, "replicas": 2}}
    headers = {**MERGE, "User-Agent": "patcher"}
    patched = admin.patch(f"{apps}/go-zero", json=change, headers=headers).json()
    assert "paused" not in patched["spec"]
    owned = {m["manager"]: m["fieldsV1"] for m in patched["metadata"]["managedFields"]}
    assert owned["patcher"] == {"f:spec": {"f:replicas": {}}}
    admin.delete(f"{apps}/go-zero")

    path = server.url + RBAC + "/clusterroles"
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    role = {"apiVersion": RBAC[6:], "kind": "ClusterRole", "metadata": {"name": "go-zero"}}
    assert admin.post(path, json={**role, "rules": rules}).status_code == 201
    headers = {**MERGE, "User-Agent": "clearer"}
    cleared = admin.patch(f"{path}/go-zero", json={"rules": None}, headers=headers).json()
    assert cleared["rules"] is None
    owned = {m["manager"]: m["fieldsV1"] for m in cleared["metadata"]["managedFields"]}
    assert owned == {"clearer": {"f:rules": {}}}  # the creator's rules are gone
    admin.delete(f"{path}/go-zero")


def test_an_events_api_event_has_the_fields_go_writes(
    server: Server, admin: requests.Session
) -> None:
    """Read through events.platform.io, the stored core Event is written as Go writes
    that API's struct: null deprecated timestamps, an empty deprecated source (reference)."""
    url = server.url + "/apis/events.platform.io/v1/namespaces/default/events"
    body = {
        "metadata": {"name": "go-events"},
        "eventTime": "2026-11-30T10:00:00.000000Z",
        "reportingController": "example.com/c",
        "reportingInstance": "i",
        "action": "A",
        "reason": "R",
        "type": "Normal",
        "regarding": {"kind": "Pod", "name": "p"},
    }
    made = admin.post(url, json=body)
    assert made.status_code == 201, made.text
    for answer in (made.json(), admin.get(f"{url}/go-events").json()):
        assert answer["deprecatedSource"] == {}
        assert answer["deprecatedFirstTimestamp"] is None
        assert answer["deprecatedLastTimestamp"] is None
        assert "deprecatedCount" not in answer and "note" not in answer
    admin.delete(f"{url}/go-events")
