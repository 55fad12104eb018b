"""The Node authorizer and NodeRestriction in a running server, seen by two kubelets."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import VENV_BIN, Server, session_for, start_server

NODES = "/api/v1/nodes"
DEFAULT = "/api/v1/namespaces/default"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("nodeauthz")
    tokens = root / "tokens.csv"
    tokens.write_text(
        't-n1,system:node:n1,uid-n1,"system:nodes"\nt-n2,system:node:n2,uid-n2,"system:nodes"\n'
    )
    server = start_server(
        root / "data",
        "--authorization-mode",
        "Node",
        "--enable-admission-plugins",
        "NodeRestriction",
        "--token-auth-file",
        str(tokens),
    )
    admin = session_for(server, cert=server.admin_cert)
    for name in ("n1", "n2"):
        create(admin, server.url + NODES, {"kind": "Node", "metadata": {"name": name}})
    for name in ("s1", "s2"):
        create(
            admin, server.url + DEFAULT + "/secrets", {"kind": "Secret", "metadata": {"name": name}}
        )
    for name, node, secret in (("p1", "n1", "s1"), ("p2", "n2", "s2")):
        create(admin, server.url + DEFAULT + "/pods", pod(name, node, secret))
    yield server
    server.stop()


def create(session: requests.Session, url: str, obj: dict[str, Any]) -> None:
    r = session.post(url, json={"apiVersion": "v1", **obj})
    assert r.status_code == 201, r.text


def pod(name: str, node: str, secret: str) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "busybox"}],
            "volumes": [
                {"name": "s", "secret": {"secretName": secret}},
                {"name": "c", "configMap": {"name": f"cm-{name}"}},
            ],
        },
    }


def eventually(check: Callable[[], requests.Response], code: int) -> requests.Response:
    """The graph follows the watch hub: poll (within a deadline) for the expected answer."""
    deadline = time.monotonic() + 30
    while True:
        r = check()
        if r.status_code == code or time.monotonic() > deadline:
            return r
        time.sleep(0.05)


def kubelet(server: Server, name: str) -> requests.Session:
    return session_for(server, token=f"t-{name}")


def test_secrets_of_bound_pods_only(cluster: Server) -> None:
    n1 = kubelet(cluster, "n1")
    r = eventually(lambda: n1.get(cluster.url + DEFAULT + "/secrets/s1"), 200)
    assert r.status_code == 200, r.text
    r = n1.get(cluster.url + DEFAULT + "/secrets/s2")
    assert r.status_code == 403
    assert r.json()["message"] == (
        'secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API '
        'group "" in the namespace "default": no relationship found between node \'n1\' and this '
        "object"
    )
    # A config map the pod names is readable even before it exists: 404, not 403.
    assert n1.get(cluster.url + DEFAULT + "/configmaps/cm-p1").status_code == 404
    assert n1.get(cluster.url + DEFAULT + "/configmaps/cm-p2").status_code == 403
    n2 = kubelet(cluster, "n2")
    assert n2.get(cluster.url + DEFAULT + "/secrets/s2").status_code == 200


def test_access_follows_the_pod(cluster: Server) -> None:
    admin = session_for(cluster, cert=cluster.admin_cert)
    create(
        admin, cluster.url + DEFAULT + "/secrets", {"kind": "Secret", "metadata": {"name": "s3"}}
    )
    create(admin, cluster.url + DEFAULT + "/pods", pod("p3", "n1", "s3"))
    n1 = kubelet(cluster, "n1")
    url = cluster.url + DEFAULT + "/secrets/s3"
    assert eventually(lambda: n1.get(url), 200).status_code == 200
    r = admin.delete(cluster.url + DEFAULT + "/pods/p3", json={"gracePeriodSeconds": 0})
    assert r.status_code == 200, r.text
    assert eventually(lambda: n1.get(url), 403).status_code == 403


def test_pods_and_nodes_need_selectors(cluster: Server) -> None:
    n1 = kubelet(cluster, "n1")
    r = n1.get(cluster.url + "/api/v1/pods", params={"fieldSelector": "spec.nodeName=n1"})
    assert r.status_code == 200, r.text
    assert [p["metadata"]["name"] for p in r.json()["items"]] == ["p1"]
    r = n1.get(cluster.url + "/api/v1/pods")
    assert r.status_code == 403
    assert r.json()["message"] == (
        'pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at '
        "the cluster scope: can only list/watch pods with spec.nodeName field selector"
    )
    assert n1.get(cluster.url + DEFAULT + "/pods/p1").status_code == 200
    assert n1.get(cluster.url + DEFAULT + "/pods/p2").status_code == 403
    r = n1.get(cluster.url + NODES, params={"fieldSelector": "metadata.name=n1"})
    assert r.status_code == 200, r.text
    assert n1.get(cluster.url + NODES).status_code == 403
    assert (
        n1.get(cluster.url + NODES + "/n2")
        .json()["message"]
        .endswith("node 'n1' cannot read 'n2', only its own Node object")
    )


def test_node_restriction(cluster: Server) -> None:
    n1 = kubelet(cluster, "n1")
    merge = {"Content-Type": "application/merge-patch+json"}
    label = {"metadata": {"labels": {"example.com/rack": "r1"}}}
    r = n1.patch(cluster.url + NODES + "/n2", json=label, headers=merge)
    assert r.status_code == 403
    assert (
        r.json()["message"]
        == 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'
    )
    r = n1.patch(cluster.url + NODES + "/n1", json=label, headers=merge)
    assert r.status_code == 200, r.text
    restricted = {"metadata": {"labels": {"node-restriction.platform.io/pool": "a"}}}
    r = n1.patch(cluster.url + NODES + "/n1", json=restricted, headers=merge)
    assert (r.status_code, r.json()["message"]) == (
        403,
        'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.platform.io/pool',
    )
    r = n1.post(cluster.url + DEFAULT + "/pods", json={"apiVersion": "v1", **pod("px", "n1", "s1")})
    assert r.status_code == 403
    assert r.json()["message"] == (
        'pods "px" is forbidden: pod does not have "platform.io/config.mirror" annotation, node '
        '"n1" can only create mirror pods'
    )
    r = n1.delete(cluster.url + DEFAULT + "/pods/p2")
    assert r.status_code == 403
    assert r.json()["message"] == (
        'pods "p2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'
    )
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p2"}}
    r = n1.post(cluster.url + DEFAULT + "/pods/p2/eviction", json=eviction)
    assert (r.status_code, r.json()["message"]) == (
        403,
        'pods "p2" is forbidden: node n1 can only evict pods with spec.nodeName set to itself',
    )
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p2"}}
    r = n1.post(
        cluster.url + DEFAULT + "/pods/p2/binding", json={**binding, "target": {"name": "n1"}}
    )
    assert r.status_code == 403


def test_unknown_admission_plugin_stops_the_start(tmp_path: Path) -> None:
    cmd = [str(VENV_BIN / "twistd"), "--pidfile=", "-n", "platform-apiserver"]
    args = ["--data-dir", str(tmp_path), "--enable-admission-plugins", "NodeRestriction,Foo"]
    result = subprocess.run(cmd + args, check=False, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert result.stderr == 'Error: enable-admission-plugins plugin "Foo" is unknown\n'


def test_kubelets_publish_their_own_resource_slices(cluster: Server) -> None:
    """A kubelet's DRA plugin writes the ResourceSlices of its node: create and delete
    its own (NodeRestriction refuses another node's), reach one by the graph's edge, list
    with its node's field selector only; answers as kube v1.36's."""
    url = cluster.url + "/apis/resource.platform.io/v1/resourceslices"
    n1 = kubelet(cluster, "n1")

    def body(name: str, node: str) -> dict[str, Any]:
        pool = {"name": node, "generation": 1, "resourceSliceCount": 1}
        spec = {"driver": "gpu.example.com", "nodeName": node, "pool": pool}
        return {"metadata": {"name": name}, "spec": {**spec, "devices": [{"name": "d0"}]}}

    assert n1.post(url, json=body("n1-gpu", "n1")).status_code == 201
    other = n1.post(url, json=body("n2-gpu", "n2"))
    assert (other.status_code, other.json()["message"]) == (
        403,
        'resourceslices.resource.platform.io "n2-gpu" is forbidden: can only create '
        "ResourceSlice with the same NodeName as the requesting node",
    )
    assert eventually(lambda: n1.get(url + "/n1-gpu"), 200).status_code == 200
    assert (
        n1.get(url + "?fieldSelector=spec.nodeName%3Dn1").json()["items"][0]["metadata"]["name"]
        == "n1-gpu"
    )
    everything = n1.get(url)
    assert (everything.status_code, everything.json()["message"]) == (
        403,
        'resourceslices.resource.platform.io is forbidden: User "system:node:n1" cannot list '
        'resource "resourceslices" in API group "resource.platform.io" at the cluster scope: '
        "can only list/watch/deletecollection resourceslices with nodeName field selector",
    )
    gone = n1.delete(url + "/n1-gpu")
    assert (gone.status_code, gone.json()["kind"]) == (200, "ResourceSlice")
