"""--serve-upstream-groups: every *.platform.io group also answers as its *.k8s.io name."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import eventually

ROLES = "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles"
BRANDED_ROLES = "/apis/rbac.authorization.platform.io/v1/namespaces/{ns}/roles"
DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("upstream")
    tokens = root / "tokens.csv"
    tokens.write_text("t-lee,lee,1\n")
    server = start_server(
        root / "data",
        "--serve-upstream-groups",
        "--authorization-mode",
        "RBAC",
        "--token-auth-file",
        str(tokens),
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def root_session(upstream: Server) -> requests.Session:
    return session_for(upstream, cert=upstream.admin_cert)


def namespace(session: requests.Session, server: Server, name: str) -> str:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    r = session.post(server.url + "/api/v1/namespaces", json=body)
    assert r.status_code == 201, r.text
    return name


def role(name: str, group: str, rules: list[dict]) -> dict:
    return {"apiVersion": f"{group}/v1", "kind": "Role", "metadata": {"name": name}, "rules": rules}


def test_discovery_lists_both_names(upstream: Server, root_session: requests.Session) -> None:
    groups = [g["name"] for g in root_session.get(upstream.url + "/apis").json()["groups"]]
    for branded in ("rbac.authorization.platform.io", "coordination.platform.io"):
        alias = branded.replace(".platform.io", ".k8s.io")
        assert groups.index(branded) == groups.index(alias) + 1  # kube's name first
    doc = root_session.get(upstream.url + "/apis/rbac.authorization.k8s.io/v1").json()
    assert doc["groupVersion"] == "rbac.authorization.k8s.io/v1"
    assert "roles" in {r["name"] for r in doc["resources"]}
    r = root_session.get(upstream.url + "/apis", headers={"Accept": DISCOVERY})
    assert r.headers["Content-Type"] == DISCOVERY
    body = r.json()
    assert body["apiVersion"] == "apidiscovery.k8s.io/v2"
    names = {item["metadata"]["name"] for item in body["items"]}
    assert {"authorization.k8s.io", "authorization.platform.io"} <= names
    # Short names and categories go with kube's name, which kubectl resolves first; not
    # with both: kubectl would warn that each short name matches two resources.
    crds = {
        item["metadata"]["name"]: item["versions"][0]["resources"][0]
        for item in body["items"]
        if item["metadata"]["name"].startswith("apiextensions.")
    }
    assert crds["apiextensions.k8s.io"]["shortNames"] == ["crd", "crds"]
    assert crds["apiextensions.k8s.io"]["categories"] == ["api-extensions"]
    assert "shortNames" not in crds["apiextensions.platform.io"]
    assert "categories" not in crds["apiextensions.platform.io"]
    doc = root_session.get(upstream.url + "/apis/apiextensions.platform.io/v1").json()
    assert "shortNames" not in doc["resources"][0]
    doc = root_session.get(upstream.url + "/apis/apiextensions.k8s.io/v1").json()
    assert doc["resources"][0]["shortNames"] == ["crd", "crds"]
    index = root_session.get(upstream.url + "/openapi/v3").json()["paths"]
    doc = root_session.get(
        upstream.url + index["apis/rbac.authorization.k8s.io/v1"]["serverRelativeURL"]
    ).json()
    kinds = doc["components"]["schemas"]["io.platform.api.rbac.v1.Role"][
        "x-kubernetes-group-version-kind"
    ]
    assert kinds == [{"group": "rbac.authorization.k8s.io", "kind": "Role", "version": "v1"}]


def test_one_object_two_names(upstream: Server, root_session: requests.Session) -> None:
    ns = namespace(root_session, upstream, "two-names")
    assert root_session.get(f"{upstream.url}/api/v1/namespaces/{ns}").json()["metadata"][
        "labels"
    ] == {"platform.io/metadata.name": ns, "kubernetes.io/metadata.name": ns}
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    r = root_session.post(
        upstream.url + ROLES.format(ns=ns), json=role("r", "rbac.authorization.k8s.io", rules)
    )
    assert r.status_code == 201, r.text
    assert r.json()["apiVersion"] == "rbac.authorization.k8s.io/v1"
    branded = root_session.get(upstream.url + BRANDED_ROLES.format(ns=ns) + "/r").json()
    assert branded["apiVersion"] == "rbac.authorization.platform.io/v1"
    listed = root_session.get(upstream.url + ROLES.format(ns=ns)).json()
    assert listed["apiVersion"] == "rbac.authorization.k8s.io/v1"
    # kube's items of built-in lists name no type; the list names the group asked.
    assert [sorted(i) for i in listed["items"]] == [["metadata", "rules"]]
    r = root_session.get(
        upstream.url + ROLES.format(ns=ns) + "/missing", headers={"Accept": "application/json"}
    )
    assert r.status_code == 404


def test_ownership_is_told_in_the_group_asked(
    upstream: Server, root_session: requests.Session
) -> None:
    ns = namespace(root_session, upstream, "owners-named")
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    made = root_session.post(
        upstream.url + ROLES.format(ns=ns) + "?fieldManager=maker",
        json=role("r", "rbac.authorization.k8s.io", rules),
    ).json()

    def owners(obj: dict) -> list[tuple[str, str]]:
        return [(e["manager"], e["apiVersion"]) for e in obj["metadata"]["managedFields"]]

    assert owners(made) == [("maker", "rbac.authorization.k8s.io/v1")]
    listed = root_session.get(upstream.url + ROLES.format(ns=ns)).json()["items"]
    assert owners(listed[0]) == [("maker", "rbac.authorization.k8s.io/v1")]
    branded_url = upstream.url + BRANDED_ROLES.format(ns=ns) + "/r"
    assert owners(root_session.get(branded_url).json()) == [
        ("maker", "rbac.authorization.platform.io/v1")
    ]
    # A client that writes back what it read keeps one entry per manager, not two names.
    made["rules"][0]["verbs"] = ["get", "list"]
    put = root_session.put(upstream.url + ROLES.format(ns=ns) + "/r?fieldManager=maker", json=made)
    assert put.status_code == 200, put.text
    assert owners(root_session.get(branded_url).json()) == [
        ("maker", "rbac.authorization.platform.io/v1")
    ]


def test_watch_through_the_upstream_name(upstream: Server, root_session: requests.Session) -> None:
    ns = namespace(root_session, upstream, "watch-names")
    events: list[dict] = []

    def watch() -> None:
        url = upstream.url + ROLES.format(ns=ns) + "?watch=1"
        with root_session.get(url, stream=True, timeout=20) as reply:
            for line in reply.iter_lines():
                if line:
                    events.append(json.loads(line))
                    return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    time.sleep(0.3)
    body = role("w", "rbac.authorization.platform.io", [])
    assert root_session.post(upstream.url + BRANDED_ROLES.format(ns=ns), json=body).ok
    eventually(lambda: events)
    assert events[0]["type"] == "ADDED"
    assert events[0]["object"]["apiVersion"] == "rbac.authorization.k8s.io/v1"


def test_rules_naming_either_group_grant_both(
    upstream: Server, root_session: requests.Session
) -> None:
    ns = namespace(root_session, upstream, "rule-names")
    rules = [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]}]
    assert root_session.post(
        upstream.url + ROLES.format(ns=ns), json=role("leases", "rbac.authorization.k8s.io", rules)
    ).ok
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "lee-leases"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "leases"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "lee"}],
    }
    r = root_session.post(
        f"{upstream.url}/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
        json=binding,
    )
    assert r.status_code == 201, r.text
    lee = session_for(upstream, token="t-lee")
    for group in ("coordination.k8s.io", "coordination.platform.io"):
        url = f"{upstream.url}/apis/{group}/v1/namespaces/{ns}/leases"
        eventually(lambda url=url: lee.get(url).status_code == 200)
    assert lee.get(f"{upstream.url}/api/v1/namespaces/{ns}/pods").status_code == 403


def test_reviews_answer_in_the_group_asked(
    upstream: Server, root_session: requests.Session
) -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "list", "resource": "pods"}},
    }
    r = root_session.post(
        upstream.url + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review
    )
    assert r.status_code == 201, r.text
    assert r.json()["apiVersion"] == "authorization.k8s.io/v1"
    assert r.json()["status"]["allowed"] is True
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}
    assert root_session.post(
        upstream.url + "/api/v1/namespaces/default/serviceaccounts", json=account
    ).ok
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    r = root_session.post(
        upstream.url + "/api/v1/namespaces/default/serviceaccounts/robot/token", json=request
    )
    assert r.status_code == 201, r.text
    assert r.json()["apiVersion"] == "authentication.k8s.io/v1"
    assert r.json()["status"]["token"]


LEADER = textwrap.dedent(
    """
    import os, sys, time
    from kubernetes import config
    from kubernetes.leaderelection import electionconfig, leaderelection
    from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

    config.load_kube_config(config_file=sys.argv[1])
    lock = LeaseLock("demo-lock", "default", sys.argv[2])

    def lead():
        print("LEADING", sys.argv[2], time.time(), flush=True)
        time.sleep(float(sys.argv[3]))
        os._exit(0)  # stop renewing at once: the lease runs out, another takes over

    cfg = electionconfig.Config(lock, 4, 3, 1, lead, lambda: None)
    leaderelection.LeaderElection(cfg).run()
    """
)


def test_leader_election_on_an_upstream_lease(upstream: Server, tmp_path: Path) -> None:
    """Two kubernetes-client processes contend for a coordination.k8s.io Lease: one leads,
    the other waits, and takes over once the first stops renewing."""
    script = tmp_path / "leader.py"
    script.write_text(LEADER)
    run = [sys.executable, str(script), str(upstream.kubeconfig)]
    first = subprocess.Popen([*run, "one", "2"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    second = subprocess.Popen([*run, "two", "0"], stdout=subprocess.PIPE, text=True)
    try:
        out_first, _ = first.communicate(timeout=30)
        first_done = time.time()
        out_second, _ = second.communicate(timeout=30)
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.kill()
    assert out_first.startswith("LEADING one")
    assert out_second.startswith("LEADING two")
    assert float(out_second.split()[2]) >= first_done - 0.5  # not while one led
    lease = session_for(upstream, cert=upstream.admin_cert).get(
        upstream.url + "/apis/coordination.k8s.io/v1/namespaces/default/leases/demo-lock"
    )
    assert lease.json()["apiVersion"] == "coordination.k8s.io/v1"
    assert lease.json()["spec"]["holderIdentity"] == "two"


def test_without_the_flag_nothing_changes(server: Server, admin: requests.Session) -> None:
    assert admin.get(server.url + "/apis/rbac.authorization.k8s.io").status_code == 404
    r = admin.get(server.url + "/apis/rbac.authorization.k8s.io/v1/roles")
    assert r.status_code == 404
    groups = [g["name"] for g in admin.get(server.url + "/apis").json()["groups"]]
    assert not [g for g in groups if g.endswith(".k8s.io")]


def test_delete_options_in_the_clients_own_group(
    upstream: Server, root_session: requests.Session
) -> None:
    """A typed client-go client sends DeleteOptions in its own group version; kube reads
    them in any group version (every one has the kind), but no other kind."""
    ns = namespace(root_session, upstream, "delete-opts")
    url = upstream.url + ROLES.format(ns=ns)
    assert root_session.post(url, json=role("gone", "rbac.authorization.k8s.io", [])).ok
    options = {
        "kind": "DeleteOptions",
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "propagationPolicy": "Background",
    }
    r = root_session.delete(url + "/gone", json=options)
    assert (r.status_code, r.json()["status"]) == (200, "Success")
    assert root_session.post(url, json=role("gone", "rbac.authorization.k8s.io", [])).ok
    r = root_session.delete(url + "/gone", json={"apiVersion": "apps/v1", "kind": "Foo"})
    assert (r.status_code, r.json()["message"]) == (
        400,
        'no kind "Foo" is registered for version "apps/v1" in scheme '
        '"pkg/apis/meta/internalversion/scheme/register.go:27"',
    )
    r = root_session.delete(url + "/gone", json={"apiVersion": "example.com/v9"})
    assert (r.status_code, r.json()["status"]) == (200, "Success")


def test_errors_name_the_group_asked(upstream: Server, root_session: requests.Session) -> None:
    """As kube-apiserver v1.36 answered the same requests."""
    ns = namespace(root_session, upstream, "up-errors")
    for group in ("rbac.authorization.k8s.io", "rbac.authorization.platform.io"):
        r = root_session.get(f"{upstream.url}/apis/{group}/v1/namespaces/{ns}/roles/nope")
        assert (r.status_code, r.json()) == (
            404,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f'roles.{group} "nope" not found',
                "reason": "NotFound",
                "details": {"name": "nope", "group": group, "kind": "roles"},
                "code": 404,
            },
        )
    bad = role("x", "rbac.authorization.k8s.io", [{"verbs": []}])
    r = root_session.post(
        f"{upstream.url}/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", json=bad
    )
    assert r.status_code == 422
    assert r.json()["message"].startswith('Role.rbac.authorization.k8s.io "x" is invalid: ')
    assert r.json()["details"]["group"] == "rbac.authorization.k8s.io"


def test_priority_and_fairness_headers_carry_kubes_names(
    upstream: Server, root_session: requests.Session
) -> None:
    """Upstream's e2e APF case matches the answer's X-Kubernetes-PF-* headers against the
    FlowSchema and PriorityLevelConfiguration that classified it."""
    r = root_session.get(upstream.url + "/api/v1/namespaces/default")
    levels = upstream.url + "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations"
    schemas = upstream.url + "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas"
    level_uid = r.headers["X-Kubernetes-PF-PriorityLevel-UID"]
    schema_uid = r.headers["X-Kubernetes-PF-FlowSchema-UID"]
    assert "X-Platform-PF-FlowSchema-UID" not in r.headers
    assert level_uid in {i["metadata"]["uid"] for i in root_session.get(levels).json()["items"]}
    assert schema_uid in {i["metadata"]["uid"] for i in root_session.get(schemas).json()["items"]}


def test_kubes_secret_types_are_held_to_their_rules(
    upstream: Server, root_session: requests.Session
) -> None:
    """cert-manager, Helm charts and docs write ``kubernetes.io/tls`` and its kin."""
    url = upstream.url + f"/api/v1/namespaces/{namespace(root_session, upstream, 'types')}/secrets"
    for kind, data, message in (
        ("kubernetes.io/tls", {}, "[data[tls.crt]: Required value, data[tls.key]: Required value]"),
        (
            "kubernetes.io/service-account-token",
            None,
            "metadata.annotations[kubernetes.io/service-account.name]: Required value",
        ),
        ("kubernetes.io/ssh-auth", {}, "data[ssh-privatekey]: Required value"),
    ):
        body = {
            "metadata": {"name": "s"},
            "type": kind,
            **({"data": data} if data is not None else {}),
        }
        r = root_session.post(url, json=body)
        assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
            422,
            "Invalid",
            f'Secret "s" is invalid: {message}',
        )
    assert root_session.get(url + "/s").status_code == 404
    tls = {"tls.crt": "", "tls.key": ""}
    made = root_session.post(
        url, json={"metadata": {"name": "s"}, "type": "kubernetes.io/tls", "data": tls}
    )
    assert made.status_code == 201 and made.json()["type"] == "kubernetes.io/tls"


def test_a_long_lived_token_in_kubes_names(
    upstream: Server, root_session: requests.Session
) -> None:
    """kube's docs: a Secret of kube's token type, annotated with the account's name."""
    ns = namespace(root_session, upstream, "long-lived")
    base = upstream.url + f"/api/v1/namespaces/{ns}"
    account = {"metadata": {"name": "robot"}}
    assert root_session.post(base + "/serviceaccounts", json=account).status_code == 201
    secret = {
        "metadata": {
            "name": "robot-token",
            "annotations": {"kubernetes.io/service-account.name": "robot"},
        },
        "type": "kubernetes.io/service-account-token",
    }
    assert root_session.post(base + "/secrets", json=secret).status_code == 201

    def filled() -> dict | None:
        found = root_session.get(base + "/secrets/robot-token").json()
        return found if (found.get("data") or {}).get("token") else None

    found = eventually(filled)
    uid = root_session.get(base + "/serviceaccounts/robot").json()["metadata"]["uid"]
    assert found["metadata"]["annotations"] == {
        "kubernetes.io/service-account.name": "robot",
        "kubernetes.io/service-account.uid": uid,
    }
    token = base64.b64decode(found["data"]["token"]).decode()
    review = session_for(upstream, token=token).post(
        upstream.url + "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    assert review.status_code == 201
    assert review.json()["status"]["userInfo"]["username"] == f"system:serviceaccount:{ns}:robot"
    # Its use is tracked in kube's label, as kube tracks it.
    labels = eventually(
        lambda: root_session.get(base + "/secrets/robot-token").json()["metadata"].get("labels")
    )
    assert list(labels) == ["kubernetes.io/legacy-token-last-used"]
    # The account deleted: its token goes with it.
    assert root_session.delete(base + "/serviceaccounts/robot").status_code == 200
    eventually(lambda: root_session.get(base + "/secrets/robot-token").status_code == 404)


def test_the_control_planes_taints_and_tolerations_are_kubes(
    upstream: Server, root_session: requests.Session
) -> None:
    """Stock components and charts tolerate kube's taint keys by name: with kube's
    group names the server taints and tolerates under ``node.kubernetes.io/``."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "upstream-node"}}
    made = root_session.post(f"{upstream.url}/api/v1/nodes", json=node)
    assert made.status_code == 201, made.text
    taint = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
    assert made.json()["spec"]["taints"] == [taint]
    status = {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    merge = {"Content-Type": "application/merge-patch+json"}
    url = f"{upstream.url}/api/v1/nodes/upstream-node"
    reported = root_session.patch(f"{url}/status", json=status, headers=merge)
    assert reported.status_code == 200, reported.text

    def tainted() -> list[tuple[str, str]]:
        spec = root_session.get(url).json()["spec"]
        return [(t["key"], t["effect"]) for t in spec.get("taints") or []]

    eventually(
        lambda: (
            tainted()
            == [
                ("node.kubernetes.io/not-ready", "NoSchedule"),
                ("node.kubernetes.io/not-ready", "NoExecute"),
            ]
        )
    )
    ns = namespace(root_session, upstream, "upstream-tolerations")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    created = root_session.post(f"{upstream.url}/api/v1/namespaces/{ns}/pods", json=pod)
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["tolerations"] == [
        {
            "key": f"node.kubernetes.io/{name}",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        }
        for name in ("not-ready", "unreachable")
    ]
    assert root_session.delete(url).status_code == 200
