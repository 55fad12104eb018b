"""Connect subresources on a server without kubelets: each answer as kube-apiserver
v1.36 gave it at the same step (reference, same requests), and where kube would dial a
kubelet or a pod, this server's own 500/503 in kube's form."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server

SPDY = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}


def _answer(response: requests.Response) -> tuple[int, str, str]:
    body = response.json()
    return response.status_code, body.get("reason", ""), body["message"]


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    containers = [{"name": "c", "image": "i"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": containers, **spec},
    }


def test_streams_to_a_pod_fail_where_kube_fails_them(
    server: Server, admin: requests.Session
) -> None:
    base = server.url + "/api/v1/namespaces/default/pods"
    assert admin.post(base, json=_pod("pending")).status_code == 201
    assert admin.post(base, json=_pod("placed", nodeName="conn-node")).status_code == 201
    unassigned = (400, "BadRequest", "pod pending does not have a host assigned")
    for method, sub in (
        ("POST", "exec?command=ls&stdout=true"),
        ("GET", "exec"),
        ("POST", "attach"),
        ("GET", "attach"),
        ("POST", "portforward?ports=80"),
        ("GET", "portforward"),
    ):
        assert _answer(admin.request(method, f"{base}/pending/{sub}")) == unassigned, sub
    assert _answer(admin.put(f"{base}/pending/exec")) == (
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
    assert _answer(admin.post(f"{base}/nope/exec")) == (404, "NotFound", 'pods "nope" not found')
    assert admin.post(f"{base}/pending/exec/more").status_code == 404
    # a node that does not exist: kube words it as a pod of the node's name
    assert _answer(admin.post(f"{base}/placed/exec")) == (
        404,
        "NotFound",
        'pods "conn-node" not found',
    )
    assert _answer(admin.get(f"{base}/placed/log")) == (
        404,
        "NotFound",
        'pods "conn-node" not found',
    )
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "conn-node"}}
    assert admin.post(server.url + "/api/v1/nodes", json=node).status_code == 201
    try:
        # a node without an address kube's kubelet client may use: its error, a bare 500
        no_address = (500, "", "no preferred addresses found; known addresses: []")
        assert _answer(admin.post(f"{base}/placed/exec")) == no_address
        assert _answer(admin.get(f"{base}/placed/log?follow=true")) == no_address
        addresses = {"status": {"addresses": [{"type": "InternalIP", "address": "10.9.9.9"}]}}
        patched = admin.patch(
            server.url + "/api/v1/nodes/conn-node/status",
            json=addresses,
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert patched.status_code == 200
        assert _answer(admin.post(f"{base}/placed/exec")) == (
            400,
            "BadRequest",
            "Upgrade request required",
        )
        no_kubelets = (500, "", "error dialing backend: this server does not connect to kubelets")
        refused = admin.post(f"{base}/placed/attach?stdout=true", headers=SPDY)
        assert _answer(refused) == no_kubelets
        assert _answer(admin.get(f"{base}/placed/log")) == no_kubelets
    finally:
        admin.delete(server.url + "/api/v1/nodes/conn-node")
        for name in ("pending", "placed"):
            admin.delete(f"{base}/{name}")


def test_proxies_answer_as_kube_does_without_an_address(
    server: Server, admin: requests.Session
) -> None:
    api = server.url + "/api/v1"
    assert admin.post(api + "/namespaces/default/pods", json=_pod("proxied")).status_code == 201
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "loop-node"},
        "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]},
    }
    assert admin.post(api + "/nodes", json=node).status_code == 201
    bare = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bare-node"}}
    assert admin.post(api + "/nodes", json=bare).status_code == 201
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "lonely"},
        "spec": {"ports": [{"port": 80}]},
    }
    assert admin.post(api + "/namespaces/default/services", json=service).status_code == 201
    try:
        not_allowed = (400, "BadRequest", "address not allowed")
        for method in ("GET", "DELETE", "PUT"):
            assert (
                _answer(
                    admin.request(method, api + "/namespaces/default/pods/proxied/proxy/some/path")
                )
                == not_allowed
            )
        assert _answer(admin.get(api + "/nodes/loop-node/proxy/healthz")) == not_allowed
        no_address = admin.get(api + "/nodes/https:bare-node:10250/proxy/")
        assert (no_address.status_code, no_address.json()) == (
            500,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "no preferred addresses found; known addresses: []",
                "code": 500,
            },
        )
        assert _answer(admin.get(api + "/nodes/nope/proxy")) == (
            404,
            "NotFound",
            'nodes "nope" not found',
        )
        assert _answer(admin.get(api + "/namespaces/default/services/nope/proxy/x")) == (
            404,
            "NotFound",
            'services "nope" not found',
        )
        assert _answer(admin.get(api + "/namespaces/default/services/lonely/proxy/")) == (
            503,
            "ServiceUnavailable",
            'no endpoints available for service "lonely"',
        )
    finally:
        admin.delete(api + "/namespaces/default/pods/proxied")
        admin.delete(api + "/nodes/loop-node")
        admin.delete(api + "/nodes/bare-node")
        admin.delete(api + "/namespaces/default/services/lonely")


def test_a_proxy_names_scheme_name_and_port_as_kube_reads_them(
    server: Server, admin: requests.Session
) -> None:
    """``[scheme:]name[:port]``: the object is looked up by its name alone; more parts,
    an empty name or a scheme other than http/https is kube's 400 (recorded answers)."""
    missing = (404, "NotFound")
    refused = (400, "BadRequest")
    for path, answer in (
        ("namespaces/default/services/nope:80", (*missing, 'services "nope" not found')),
        ("namespaces/default/services/https:nope:443", (*missing, 'services "nope" not found')),
        ("namespaces/default/services/nope:http", (*missing, 'services "nope" not found')),
        ("namespaces/default/services/nope:", (*missing, 'services "nope" not found')),
        ("namespaces/default/pods/nope:8080", (*missing, 'pods "nope" not found')),
        ("nodes/nope:10250", (*missing, 'nodes "nope" not found')),
        ("namespaces/default/services/a:b:c:d", (*refused, 'invalid service request "a:b:c:d"')),
        ("namespaces/default/services/ftp:x:80", (*refused, 'invalid service request "ftp:x:80"')),
        ("namespaces/default/services/:80", (*refused, 'invalid service request ":80"')),
        (
            "namespaces/default/services/https::80",
            (*refused, 'invalid service request "https::80"'),
        ),
        ("namespaces/default/pods/ftp:x:1", (*refused, 'invalid pod request "ftp:x:1"')),
        ("nodes/a:b:c:d", (*refused, 'invalid node request "a:b:c:d"')),
    ):
        assert _answer(admin.get(f"{server.url}/api/v1/{path}/proxy/x")) == answer, path


def test_discovery_lists_the_connect_subresources_as_kube_does(
    server: Server, admin: requests.Session
) -> None:
    """Names, kinds and verbs in kube's order; a built-in subresource's kind names no
    group or version when they are the resource's own."""
    accept = "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
    core = admin.get(server.url + "/api", headers={"Accept": accept}).json()
    resources = {r["resource"]: r for r in core["items"][0]["versions"][0]["resources"]}
    pods = [
        (s["subresource"], s["responseKind"]["kind"], s["responseKind"]["version"], s["verbs"])
        for s in resources["pods"]["subresources"]
    ]
    connect, proxy = ["create", "get"], ["create", "delete", "get", "patch", "update"]
    assert pods == [
        ("attach", "PodAttachOptions", "", connect),
        ("binding", "Binding", "", ["create"]),
        ("ephemeralcontainers", "Pod", "", ["get", "patch", "update"]),
        ("eviction", "Eviction", "v1", ["create"]),
        ("exec", "PodExecOptions", "", connect),
        ("log", "Pod", "", ["get"]),
        ("portforward", "PodPortForwardOptions", "", connect),
        ("proxy", "PodProxyOptions", "", proxy),
        ("resize", "Pod", "", ["get", "patch", "update"]),
        ("status", "Pod", "", ["get", "patch", "update"]),
    ]
    for name, kind in (("services", "ServiceProxyOptions"), ("nodes", "NodeProxyOptions")):
        first = resources[name]["subresources"][0]
        assert (first["subresource"], first["responseKind"]["kind"], first["verbs"]) == (
            "proxy",
            kind,
            proxy,
        )
