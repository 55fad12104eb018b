"""Defaults, the key validation rules of the workload kinds, cluster IPs, and tables."""

from __future__ import annotations

from datetime import UTC, datetime

import requests

from platform_api.codec import protobuf
from tests.e2e.answers import status as failure
from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.test_list import make_namespace

NEW_EVENTS = "events.platform.io/v1"

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def deployment(
    name: str,
    selector: dict | None = None,
    labels: dict | None = None,
    containers: list | None = None,
) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": selector if selector is not None else {"app": name}},
            "template": {
                "metadata": {"labels": labels if labels is not None else {"app": name}},
                "spec": {"containers": containers or [{"name": "main", "image": "nginx:1.25"}]},
            },
        },
    }


def test_deployment_defaults(server: Server, admin: requests.Session) -> None:
    base = (
        "/apis/apps/v1/namespaces/"
        + make_namespace(admin, server, "defaults").split("/")[4]
        + "/deployments"
    )
    r = admin.post(
        server.url + base,
        json=deployment(
            "d",
            containers=[{"name": "a", "image": "nginx:1.25"}, {"name": "b", "image": "busybox"}],
        ),
    )
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert (
        spec["replicas"] == 1
        and spec["revisionHistoryLimit"] == 10
        and spec["progressDeadlineSeconds"] == 600
    )
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    pod = spec["template"]["spec"]
    assert (pod["restartPolicy"], pod["dnsPolicy"], pod["terminationGracePeriodSeconds"]) == (
        "Always",
        "ClusterFirst",
        30,
    )
    a, b = pod["containers"]
    assert a["imagePullPolicy"] == "IfNotPresent" and b["imagePullPolicy"] == "Always"
    assert (
        a["terminationMessagePath"] == "/dev/termination-log"
        and a["terminationMessagePolicy"] == "File"
    )
    assert r.json()["metadata"]["generation"] == 1


def test_workload_rules(server: Server, admin: requests.Session) -> None:
    base = "/apis/apps/v1/namespaces/default/deployments"
    r = admin.post(
        server.url + base, json=deployment("mismatch", selector={"app": "x"}, labels={"app": "y"})
    )
    assert r.status_code == 422
    assert r.json()["message"] == (
        'Deployment.apps "mismatch" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"y"}: `selector` does not match template `labels`'
    )
    r = admin.post(
        server.url + base,
        json=deployment(
            "dup", containers=[{"name": "c", "image": "i"}, {"name": "c", "image": "i"}]
        ),
    )
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [
        {
            "reason": "FieldValueDuplicate",
            "message": 'Duplicate value: "c"',
            "field": "spec.template.spec.containers[1].name",
        }
    ]
    r = admin.post(server.url + base, json=deployment("noimage", containers=[{"name": "c"}]))
    assert (
        r.status_code == 422
        and r.json()["details"]["causes"][0]["field"] == "spec.template.spec.containers[0].image"
    )
    created = admin.post(server.url + base, json=deployment("fixed")).json()
    created["spec"]["selector"] = {"matchLabels": {"app": "fixed", "tier": "web"}}
    created["spec"]["template"]["metadata"]["labels"]["tier"] = "web"
    r = admin.put(server.url + base + "/fixed", json=created)
    assert r.status_code == 422
    assert r.json()["message"] == (
        'Deployment.apps "fixed" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"fixed","tier":"web"}}: field is immutable'
    )


def test_services_get_cluster_ips(server: Server, admin: requests.Session) -> None:
    base = "/api/v1/namespaces/" + make_namespace(admin, server, "svc").split("/")[4] + "/services"

    def service(name: str, ip: str | None = None) -> dict:
        spec: dict = {"ports": [{"port": 80}]}
        if ip:
            spec["clusterIP"] = ip
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}

    first = admin.post(server.url + base, json=service("one")).json()["spec"]
    assert first["type"] == "ClusterIP" and first["sessionAffinity"] == "None"
    assert first["clusterIP"].startswith("10.0.0.") and first["clusterIPs"] == [first["clusterIP"]]
    assert first["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    second = admin.post(server.url + base, json=service("two")).json()["spec"]
    assert second["clusterIP"] != first["clusterIP"]
    r = admin.post(server.url + base, json=service("taken", first["clusterIP"]))
    assert r.status_code == 422 and "provided IP is already allocated" in r.json()["message"]
    r = admin.post(server.url + base, json=service("outside", "192.168.9.9"))
    assert r.status_code == 422 and "does not match the current range" in r.json()["message"]
    headless = admin.post(server.url + base, json=service("headless", "None")).json()["spec"]
    assert headless["clusterIP"] == "None"


def test_services_get_node_ports(server: Server, admin: requests.Session) -> None:
    """As kube-apiserver v1.36 answered the same requests (its ports are random too)."""
    base = server.url + "/api/v1/namespaces/default/services"
    merge = {"Content-Type": "application/merge-patch+json"}

    def service(name: str, kind: str, *ports: dict, **spec: object) -> dict:
        body = {"type": kind, "selector": {"a": "b"}, "ports": list(ports), **spec}
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body}

    def node_ports(spec: dict) -> list:
        return [p.get("nodePort") for p in spec["ports"]]

    auto = admin.post(
        base, json=service("np-a", "NodePort", {"name": "a", "port": 80}, {"name": "b", "port": 81})
    ).json()["spec"]
    assert all(30000 <= p <= 32767 for p in node_ports(auto)) and len(set(node_ports(auto))) == 2
    fixed = admin.post(base, json=service("np-f", "NodePort", {"port": 80, "nodePort": 30080}))
    assert node_ports(fixed.json()["spec"]) == [30080]
    for name, ports, at in (
        ("np-dup", [{"port": 80, "nodePort": 30080}], 0),
        (
            "np-twice",
            [
                # in the static band, which random ports leave alone (as kube's)
                {"name": "a", "port": 80, "nodePort": 30081},
                {"name": "b", "port": 81, "nodePort": 30081},
            ],
            1,
        ),
    ):
        refused = admin.post(base, json=service(name, "NodePort", *ports))
        assert (refused.status_code, refused.json()["message"]) == (
            422,
            (
                f'Service "{name}" is invalid: spec.ports[{at}].nodePort: Invalid value: '
                f"{ports[at]['nodePort']}: provided port is already allocated"
            ),
        )
    dry = admin.post(
        base + "?dryRun=All", json=service("np-d", "NodePort", {"port": 80, "nodePort": 30080})
    )
    assert dry.status_code == 422
    balancer = admin.post(
        base, json=service("lb", "LoadBalancer", {"port": 80}, externalTrafficPolicy="Local")
    ).json()["spec"]
    assert node_ports(balancer)[0] and 30000 <= balancer["healthCheckNodePort"] <= 32767
    none = admin.post(
        base,
        json=service("lb-n", "LoadBalancer", {"port": 80}, allocateLoadBalancerNodePorts=False),
    ).json()["spec"]
    assert node_ports(none) == [None] and "healthCheckNodePort" not in none

    # One port number, two protocols (DNS): one node port, the one either asks for.
    dns = [{"name": "t", "port": 53}, {"name": "u", "port": 53, "protocol": "UDP"}]
    shared = admin.post(base, json=service("np-dns", "NodePort", *dns)).json()["spec"]
    assert len(set(node_ports(shared))) == 1
    dns[1]["nodePort"] = 30053
    asked = admin.post(base, json=service("np-dns2", "NodePort", *dns)).json()["spec"]
    assert node_ports(asked) == [30053, 30053]
    # A LoadBalancer that allocates none still holds the node ports it asks for.
    kept = service("lb-k", "LoadBalancer", {"port": 80, "nodePort": 30082})
    kept["spec"]["allocateLoadBalancerNodePorts"] = False
    assert node_ports(admin.post(base, json=kept).json()["spec"]) == [30082]
    kept["metadata"]["name"] = "lb-k2"
    assert (
        admin.post(base, json=kept)
        .json()["message"]
        .endswith("Invalid value: 30082: provided port is already allocated")
    )

    # Ports the body leaves out keep theirs; a new port gets one.
    ports = [{"name": "a", "port": 80}, {"name": "b", "port": 81}, {"name": "c", "port": 82}]
    grown = admin.patch(base + "/np-a", json={"spec": {"ports": ports}}, headers=merge).json()
    assert node_ports(grown["spec"])[:2] == node_ports(auto) and node_ports(grown["spec"])[2]
    # Turned into a ClusterIP Service, it drops the node ports it did not change.
    plain = admin.patch(base + "/np-f", json={"spec": {"type": "ClusterIP"}}, headers=merge)
    assert (plain.status_code, node_ports(plain.json()["spec"])) == (200, [None])
    again = admin.post(base, json=service("np-r", "NodePort", {"port": 80, "nodePort": 30080}))
    assert again.status_code == 201
    assert admin.delete(base + "/np-r").status_code == 200
    reused = admin.post(base, json=service("np-s", "NodePort", {"port": 80, "nodePort": 30080}))
    assert reused.status_code == 201
    for name in ("np-a", "np-f", "lb", "lb-n", "np-s"):
        admin.delete(base + "/" + name)


def test_tables(server: Server, admin: requests.Session) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "tp"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    assert admin.post(server.url + "/api/v1/namespaces/default/pods", json=pod).status_code == 201
    r = admin.get(server.url + "/api/v1/namespaces/default/pods", headers={"Accept": TABLE})
    assert r.headers["Content-Type"] == "application/json"  # as kube answers Tables
    table = r.json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
        "IP",
        "Node",
        "Nominated Node",
        "Readiness Gates",
    ]
    row = next(r for r in table["rows"] if r["cells"][0] == "tp")
    assert row["cells"][1:4] == ["0/1", "Pending", "0"]  # kube prints restarts as text
    assert (
        row["object"]["kind"] == "PartialObjectMetadata"
        and row["object"]["metadata"]["name"] == "tp"
    )
    one = admin.get(
        server.url + "/api/v1/namespaces/default/configmaps?includeObject=None",
        headers={"Accept": TABLE},
    ).json()
    assert [c["name"] for c in one["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert all(row["object"] is None for row in one["rows"])  # kube's empty RawExtension
    roles = admin.get(
        server.url + "/apis/rbac.authorization.platform.io/v1/roles", headers={"Accept": TABLE}
    ).json()
    assert [c["name"] for c in roles["columnDefinitions"]] == ["Name", "Created At"]


def test_kubectl_get_columns(server: Server, admin: requests.Session) -> None:
    namespace = make_namespace(admin, server, "columns").split("/")[4]
    made = admin.post(
        f"{server.url}/apis/apps/v1/namespaces/{namespace}/deployments",
        json=deployment("d", containers=[{"name": "a", "image": "nginx"}]),
    )
    assert made.status_code == 201, made.text
    out = server.kubectl("get", "deployments", "-A").stdout.splitlines()
    assert out[0].split() == ["NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]


def test_pod_binding_and_eviction(server: Server, admin: requests.Session) -> None:
    base = "/api/v1/namespaces/" + make_namespace(admin, server, "pods").split("/")[4]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    admin.post(server.url + base + "/pods", json=pod)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web"},
        "target": {"kind": "Node", "name": "node-1"},
    }
    for kind, nameless in (("Binding", {**binding, "metadata": {}}), ("Eviction", {})):
        sub = kind.lower()
        refused = admin.post(server.url + base + f"/pods/web/{sub}", json=nameless)
        assert refused.json() == failure(
            400, "BadRequest", f"name in URL does not match name in {kind} object"
        )
    r = admin.post(server.url + base + "/pods/web/binding", json=binding)
    assert r.status_code == 201 and r.json()["status"] == "Success"
    assert admin.get(server.url + base + "/pods/web").json()["spec"]["nodeName"] == "node-1"
    r = admin.post(server.url + base + "/pods/web/binding", json=binding)
    assert r.status_code == 409
    assert (
        r.json()["message"]
        == 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"'
    )
    # The disruption controller keeps the budget's status; eviction spends it.
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    ready = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
    }
    assert (
        admin.post(
            server.url + base + "/pods",
            json={**pod, "metadata": {"name": "web2", "labels": {"app": "web"}}},
        ).status_code
        == 201
    )
    for name in ("web", "web2"):
        current = admin.get(server.url + base + f"/pods/{name}").json()
        current["status"] = {"phase": "Running"}
        assert (
            admin.put(server.url + base + f"/pods/{name}/status", json=current).status_code == 200
        )
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    pdb_url = server.url + "/apis/policy/v1/namespaces/pods/poddisruptionbudgets"
    assert admin.post(pdb_url, json=pdb).status_code == 201
    eventually(
        lambda: admin.get(pdb_url + "/keep").json().get("status", {}).get("expectedPods") == 2
    )
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}}
    r = admin.post(server.url + base + "/pods/web/eviction", json=eviction)
    assert r.status_code == 429  # Running, not Ready: no pod is healthy
    assert (
        r.json()["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    )
    assert r.json()["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget keep needs 1 healthy pods and has 0 currently",
        }
    ]
    for name in ("web", "web2"):
        current = admin.get(server.url + base + f"/pods/{name}").json()
        current["status"] = ready
        assert (
            admin.put(server.url + base + f"/pods/{name}/status", json=current).status_code == 200
        )
    eventually(lambda: admin.get(pdb_url + "/keep").json()["status"]["disruptionsAllowed"] == 1)
    status = admin.get(pdb_url + "/keep").json()["status"]
    assert (status["currentHealthy"], status["desiredHealthy"], status["expectedPods"]) == (2, 1, 2)
    (condition,) = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionAllowed",
        "True",
        "SufficientPods",
    )
    r = admin.post(server.url + base + "/pods/web/eviction", json=eviction)
    assert r.status_code == 201
    # Bound to a node: terminating for its grace period, until its kubelet deletes it.
    meta = admin.get(server.url + base + "/pods/web").json()["metadata"]
    assert (meta["deletionGracePeriodSeconds"], meta["generation"]) == (30, 2)
    r = admin.delete(server.url + base + "/pods/web", params={"gracePeriodSeconds": "0"})
    assert r.status_code == 200 and r.json()["metadata"]["deletionGracePeriodSeconds"] == 0
    assert admin.get(server.url + base + "/pods/web").status_code == 404
    status = admin.get(pdb_url + "/keep").json()["status"]
    assert status["disruptionsAllowed"] == 0
    r = admin.post(
        server.url + base + "/pods/web2/eviction", json={**eviction, "metadata": {"name": "web2"}}
    )
    assert r.status_code == 429
    assert (
        r.json()["details"]["causes"][0]["message"]
        == "The disruption budget keep needs 1 healthy pods and has 1 currently"
    )


def test_event_rules(server: Server, admin: requests.Session) -> None:
    url = server.url + "/apis/events.platform.io/v1/namespaces/default/events"
    good = {
        "apiVersion": "events.platform.io/v1",
        "kind": "Event",
        "metadata": {"name": "e1"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "type": "Normal",
        "reason": "Started",
        "action": "Start",
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "regarding": {"kind": "Pod", "name": "p"},
    }
    r = admin.post(url, json=good)
    assert r.status_code == 201, r.text
    bad = {**good, "metadata": {"name": "e2"}, "type": "Info", "deprecatedCount": 3}
    del bad["action"]
    r = admin.post(url, json=bad)
    assert r.status_code == 422
    body = r.json()
    # kube validates its internal (core) Event: core paths, no group in the kind
    assert (body["reason"], body["message"]) == (
        "Invalid",
        'Event "e2" is invalid: [action: Required value, type: Invalid value: "": has '
        'invalid value: Info, count: Invalid value: "": needs to be unset]',
    )
    assert [c["field"] for c in body["details"]["causes"]] == ["action", "type", "count"]
    assert admin.get(url + "/e2").status_code == 404
    immutable = admin.get(url + "/e1").json()
    immutable["note"] = "changed"
    r = admin.put(url + "/e1", json=immutable)
    assert (r.status_code, r.json()["message"]) == (
        422,
        'Event "e1" is invalid: message: Invalid value: "changed": field is immutable',
    )
    assert "note" not in admin.get(url + "/e1").json()


def test_both_event_apis_are_one_storage(server: Server, admin: requests.Session) -> None:
    """kube keeps one kind of Event: written through events.platform.io it is listed by
    core v1 (``kubectl get events``, ``describe``), with kube's field names and its
    ``source`` field selector falling back to the reporting controller; a core Event reads
    through events.platform.io; a deletion through either is seen by both."""
    base = make_namespace(admin, server, "two-event-apis").replace("/configmaps", "/events")
    new_url = server.url + base.replace("/api/v1", f"/apis/{NEW_EVENTS}")
    core_url = server.url + base
    new = {
        "apiVersion": "events.platform.io/v1",
        "kind": "Event",
        "metadata": {"name": "n1", "labels": {"e": "1"}},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "type": "Normal",
        "reason": "Started",
        "action": "Start",
        "note": "hello",
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "two-event-apis"},
    }
    assert admin.post(new_url, json=new).status_code == 201
    listed = admin.get(core_url, params={"fieldSelector": "source=example.com/ctl"}).json()
    (core,) = listed["items"]
    assert {k: v for k, v in core.items() if k != "metadata"} == {
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "two-event-apis"},
        "message": "hello",
        "reportingComponent": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "action": "Start",
        "reason": "Started",
        "type": "Normal",
    }
    old = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "o1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "two-event-apis"},
        "reason": "Pulled",
        "message": "pulled",
        "source": {"component": "kubelet"},
        "count": 2,
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:01:00Z",
        "type": "Normal",
    }
    assert admin.post(core_url, json=old).status_code == 201
    seen = admin.get(new_url + "/o1").json()
    assert seen["apiVersion"] == "events.platform.io/v1" and seen["eventTime"] is None
    assert (seen["note"], seen["deprecatedCount"], seen["deprecatedSource"]) == (
        "pulled",
        2,
        {"component": "kubelet"},
    )
    names = [e["metadata"]["name"] for e in admin.get(new_url).json()["items"]]
    assert sorted(names) == ["n1", "o1"]
    assert admin.delete(core_url + "/n1").status_code == 200
    assert admin.get(new_url + "/n1").status_code == 404
    by_selector = admin.get(new_url, params={"fieldSelector": "reportingController=kubelet"})
    assert by_selector.json()["items"] == []
    # Both views of one stored revision in Protobuf: each its own message.
    pb = {"Accept": "application/vnd.platform.protobuf"}
    for url, api_version, note in ((core_url, "v1", "message"), (new_url, NEW_EVENTS, "note")):
        for _ in range(2):  # the second answer comes from the message cache
            listed = protobuf.decode(admin.get(url, headers=pb).content)
            assert listed["apiVersion"] == api_version
            assert [e[note] for e in listed["items"]] == ["pulled"]


def test_year_one_times_keep_four_digits(server: Server, admin: requests.Session) -> None:
    """Go writes the zero year as 0001 (strftime wrote 1, which Protobuf then refused)."""
    url = server.url + "/apis/coordination.platform.io/v1/namespaces/default/leases"
    lease = {
        "apiVersion": "coordination.platform.io/v1",
        "kind": "Lease",
        "metadata": {"name": "year-one"},
        "spec": {"acquireTime": "0001-01-01T00:00:02.000000Z", "holderIdentity": "x"},
    }
    r = admin.post(url, json=lease)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["acquireTime"] == "0001-01-01T00:00:02.000000Z"
    got = admin.get(url + "/year-one", headers={"Accept": "application/vnd.platform.protobuf"})
    assert protobuf.decode(got.content)["spec"]["acquireTime"] == "0001-01-01T00:00:02.000000Z"


def test_status_writes_keep_metadata_changes_as_kube_does(
    server: Server, admin: requests.Session
) -> None:
    """kube's built-in status strategies reset only the spec (a Deployment's also its
    labels); upstream's 'apply changes to a namespace status' case relies on it."""
    base = make_namespace(admin, server, "status-meta").replace("/configmaps", "")
    merge = {"Content-Type": "application/merge-patch+json"}
    url = server.url + base.replace("/api/v1", "/apis/apps/v1") + "/deployments"
    assert admin.post(url, json=deployment("d")).status_code == 201
    patch = {
        "metadata": {"labels": {"l": "x"}, "annotations": {"a": "y"}},
        "spec": {"replicas": 9},
        "status": {"replicas": 5},
    }
    got = admin.patch(url + "/d/status", json=patch, headers=merge).json()
    assert got["metadata"].get("labels", {}).get("l") is None  # a Deployment's labels stay
    annotations = dict(got["metadata"]["annotations"])
    assert annotations.pop("a") == "y"
    # The deployment controller's own, when its first sync came before the patch.
    assert set(annotations) <= {"deployment.kubernetes.io/revision"}
    assert (got["spec"]["replicas"], got["status"]["replicas"]) == (1, 5)
    assert got["metadata"]["generation"] == 1
    ns = server.url + base + "/status"
    patch = {"metadata": {"annotations": {"e2e": "yes"}, "finalizers": ["example.com/f"]}}
    patch["status"] = {"conditions": [{"type": "X", "status": "True", "reason": "E2E"}]}
    got = admin.patch(ns, json=patch, headers=merge).json()
    assert (got["metadata"]["annotations"], got["metadata"]["finalizers"]) == (
        {"e2e": "yes"},
        ["example.com/f"],
    )
    assert got["status"]["conditions"][-1]["reason"] == "E2E"
    unset = [{"op": "remove", "path": "/metadata/finalizers"}]
    headers = {"Content-Type": "application/json-patch+json"}
    assert "finalizers" not in admin.patch(ns, json=unset, headers=headers).json()["metadata"]


def test_a_selector_that_does_not_convert_is_invalid_not_unmatched(
    server: Server, admin: requests.Session
) -> None:
    """A selector kube cannot turn into a matcher (a value longer than a label's) is
    'invalid label selector' (a StatefulSet's: no reason), and the template is not
    matched against it; ours said the template did not match (recorded from kube)."""
    base = make_namespace(admin, server, "bad-selector").replace("/api/v1/", "/apis/apps/v1/")
    value = "v" * 70
    long = f'{value}": must be no more than 63 bytes'
    for kind, why in (("Deployment", ": invalid label selector"), ("StatefulSet", "")):
        body = deployment("bad", selector={"a": value}, labels={"a": "b"})
        body["kind"] = kind
        r = admin.post(server.url + base.replace("configmaps", kind.lower() + "s"), json=body)
        assert r.status_code == 422
        selector = '{"matchLabels":{"a":"' + value + '"}}'
        message = (
            f'{kind}.apps "bad" is invalid: [spec.selector.matchLabels: Invalid value: '
            f'"{long}, spec.selector: Invalid value: {selector}{why}]'
        )
        assert r.json()["message"] == message
