"""--serve-upstream-groups: kube's system namespaces and what kube keeps in them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import requests

from tests.e2e.certs import serving_certs
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import eventually

AUTH_CONFIGMAP = "extension-apiserver-authentication"
TOKENS = "t-lee,lee,1\nt-node,system:node:n1,2,system:nodes\nt-metrics,metrics,3\n"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("upstream-ns")
    (root / "tokens.csv").write_text(TOKENS)
    proxy = serving_certs(root / "proxy", ["front-proxy-client"])
    server = start_server(
        root / "data",
        "--serve-upstream-groups",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        "--token-auth-file",
        str(root / "tokens.csv"),
        "--requestheader-client-ca-file",
        proxy.ca_cert,
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        "--requestheader-allowed-names=front-proxy-client",
        "--controllers=*",
    )
    server.proxy_ca = Path(proxy.ca_cert).read_text()  # type: ignore[attr-defined]
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin(upstream: Server) -> requests.Session:
    return session_for(upstream, cert=upstream.admin_cert)


def test_kube_system_namespaces_exist_beside_the_branded_ones(
    upstream: Server, admin: requests.Session
) -> None:
    names = {
        ns["metadata"]["name"]
        for ns in admin.get(upstream.url + "/api/v1/namespaces").json()["items"]
    }
    assert names >= {
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "platform-system",
        "platform-public",
        "platform-node-lease",
    }


@pytest.mark.parametrize("name", ["kube-system", "kube-public"])
def test_kube_system_namespaces_may_not_be_deleted(
    upstream: Server, admin: requests.Session, name: str
) -> None:
    r = admin.delete(f"{upstream.url}/api/v1/namespaces/{name}")
    assert r.status_code == 403
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'namespaces "{name}" is forbidden: this namespace may not be deleted',
        "reason": "Forbidden",
        "details": {"name": name, "kind": "namespaces"},
        "code": 403,
    }
    assert admin.get(f"{upstream.url}/api/v1/namespaces/{name}").json()["status"] == {
        "phase": "Active"
    }


def test_extension_apiserver_authentication_is_published_where_stock_servers_read_it(
    upstream: Server, admin: requests.Session
) -> None:
    ca = Path(upstream.ca).read_text()
    for namespace in ("kube-system", "platform-system"):
        path = f"{upstream.url}/api/v1/namespaces/{namespace}/configmaps/{AUTH_CONFIGMAP}"
        data = admin.get(path).json()["data"]
        assert data == {
            "client-ca-file": ca,
            "requestheader-client-ca-file": upstream.proxy_ca,  # type: ignore[attr-defined]
            "requestheader-username-headers": '["X-Remote-User"]',
            "requestheader-group-headers": '["X-Remote-Group"]',
            "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
            "requestheader-allowed-names": '["front-proxy-client"]',
        }
    checks = admin.get(upstream.url + "/readyz?verbose").text
    assert "[+]poststarthook/start-cluster-authentication-info-controller ok\n" in checks


def test_an_aggregated_servers_account_reads_it_through_kubes_role(
    upstream: Server, admin: requests.Session
) -> None:
    """What metrics-server's manifest does: bind ``extension-apiserver-authentication-reader``
    in ``kube-system`` (the Role is one of kube's defaults there)."""
    base = f"{upstream.url}/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system"
    role = admin.get(f"{base}/roles/extension-apiserver-authentication-reader").json()
    assert role["rules"] == [
        {
            "verbs": ["get", "list", "watch"],
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": [AUTH_CONFIGMAP],
        }
    ]
    path = f"{upstream.url}/api/v1/namespaces/kube-system/configmaps/{AUTH_CONFIGMAP}"
    metrics = session_for(upstream, token="t-metrics")
    r = metrics.get(path)
    assert r.status_code == 403
    assert r.json()["message"] == (
        'configmaps "extension-apiserver-authentication" is forbidden: User "metrics" cannot '
        'get resource "configmaps" in API group "" in the namespace "kube-system"'
    )
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "metrics-server-auth-reader"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "extension-apiserver-authentication-reader",
        },
        "subjects": [{"kind": "User", "name": "metrics", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    assert admin.post(f"{base}/rolebindings", json=binding).status_code == 201
    assert eventually(lambda: metrics.get(path).status_code == 200)


def test_every_namespace_gets_kube_root_ca_projected_into_pods(
    upstream: Server, admin: requests.Session
) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    assert admin.post(upstream.url + "/api/v1/namespaces", json=body).status_code == 201
    base = upstream.url + "/api/v1/namespaces/team-a/configmaps"
    ca = Path(upstream.ca).read_text()
    assert eventually(lambda: admin.get(base + "/kube-root-ca.crt").status_code == 200)
    kube = admin.get(base + "/kube-root-ca.crt").json()
    assert kube["data"] == {"ca.crt": ca}
    assert set(kube["metadata"]["annotations"]) == {"kubernetes.io/description"}
    # kube's name only: stock tools listing a namespace's ConfigMaps leave out just it.
    assert [cm["metadata"]["name"] for cm in admin.get(base).json()["items"]] == [
        "kube-root-ca.crt"
    ]
    account = upstream.url + "/api/v1/namespaces/team-a/serviceaccounts/default"
    assert eventually(lambda: admin.get(account).status_code == 200)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    made = admin.post(upstream.url + "/api/v1/namespaces/team-a/pods", json=pod).json()
    sources = made["spec"]["volumes"][0]["projected"]["sources"]
    mount = made["spec"]["containers"][0]["volumeMounts"][0]
    assert mount["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"
    assert sources[1] == {
        "configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}
    }


def lease(name: str) -> dict:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40},
    }


def test_a_node_renews_its_lease_in_kube_node_lease(upstream: Server) -> None:
    """A stock kubelet (or kwok) keeps its Lease in ``kube-node-lease``."""
    node = session_for(upstream, token="t-node")
    leases = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
    r = node.post(upstream.url + leases.format(ns="kube-node-lease"), json=lease("n1"))
    assert r.status_code == 201, r.text
    assert r.json()["apiVersion"] == "coordination.k8s.io/v1"
    r = node.post(upstream.url + leases.format(ns="platform-node-lease"), json=lease("n1"))
    assert r.status_code == 201, r.text
    # Another node's Lease, or a Lease elsewhere: kube's refusals.
    r = node.post(upstream.url + leases.format(ns="kube-node-lease"), json=lease("n2"))
    assert r.status_code == 403
    assert orjson.loads(r.content)["message"] == (
        'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the '
        "same name as the requesting node"
    )
    r = node.post(upstream.url + leases.format(ns="kube-public"), json=lease("n1"))
    assert r.status_code == 403
    assert r.json()["reason"] == "Forbidden"
