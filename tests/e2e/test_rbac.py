"""RBAC end to end: grants, scopes, resourceNames, validation and escalation prevention."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import VENV_BIN, Server, session_for, start_server

RBAC = "/apis/rbac.authorization.platform.io/v1"
GROUP = "rbac.authorization.platform.io"


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("rbac")
    tokens = root / "tokens.csv"
    tokens.write_text('t-carol,carol,1\nt-dave,dave,2,"devs"\nt-erin,erin,3\n')
    server = start_server(
        root / "data", "--authorization-mode", "RBAC", "--token-auth-file", str(tokens)
    )
    admin = session_for(server, cert=server.admin_cert)
    for ns in ("team-a", "team-b", "esc"):
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        assert admin.post(server.url + "/api/v1/namespaces", json=body).status_code == 201
    yield server
    server.stop()


def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def role(kind: str, name: str, rules: list[dict], namespace: str = "") -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": meta, "rules": rules}


def binding(kind: str, name: str, ref: tuple[str, str], subjects: list[dict], ns: str = "") -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": GROUP, "kind": ref[0], "name": ref[1]},
        "subjects": subjects,
    }


def user(name: str) -> dict:
    return {"kind": "User", "apiGroup": GROUP, "name": name}


def post(session: requests.Session, server: Server, path: str, body: dict) -> requests.Response:
    return session.post(server.url + path, json=body)


READ_CM = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}


def test_grants_follow_bindings_and_their_scope(rbac_server: Server) -> None:
    server, admin = rbac_server, session_for(rbac_server, cert=rbac_server.admin_cert)
    carol = session_for(server, token="t-carol")
    url = server.url + "/api/v1/namespaces/team-a/configmaps"
    r = carol.get(url)
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        403,
        "Forbidden",
        'configmaps is forbidden: User "carol" cannot list resource "configmaps" in API group "" '
        'in the namespace "team-a"',
    )
    assert r.json()["details"] == {"kind": "configmaps"}
    r = post(admin, server, RBAC + "/clusterroles", role("ClusterRole", "cm-reader", [READ_CM]))
    assert r.status_code == 201, r.text
    rb = binding("RoleBinding", "carol-cm", ("ClusterRole", "cm-reader"), [user("carol")], "team-a")
    r = post(admin, server, RBAC + "/namespaces/team-a/rolebindings", rb)
    assert r.status_code == 201, r.text
    assert r.json()["subjects"] == [user("carol")]
    eventually(lambda: carol.get(url).status_code == 200)
    assert carol.get(server.url + "/api/v1/namespaces/team-b/configmaps").status_code == 403
    assert carol.get(server.url + "/api/v1/configmaps").status_code == 403
    r = carol.post(url, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    assert r.status_code == 403
    # A group subject grants every member.
    dave = session_for(server, token="t-dave")
    crb = binding(
        "ClusterRoleBinding",
        "devs-cm",
        ("ClusterRole", "cm-reader"),
        [{"kind": "Group", "name": "devs"}],
    )
    assert post(admin, server, RBAC + "/clusterrolebindings", crb).status_code == 201
    eventually(lambda: dave.get(server.url + "/api/v1/configmaps").status_code == 200)
    # Deleting the binding takes the grant away again.
    r = admin.delete(server.url + RBAC + "/clusterrolebindings/devs-cm")
    assert r.status_code == 200
    eventually(lambda: dave.get(server.url + "/api/v1/configmaps").status_code == 403)


def test_resource_names_limit_get_and_list(rbac_server: Server) -> None:
    server, admin = rbac_server, session_for(rbac_server, cert=rbac_server.admin_cert)
    rules = [{**READ_CM, "verbs": ["get", "list", "watch"], "resourceNames": ["only"]}]
    assert (
        post(
            admin, server, RBAC + "/namespaces/team-b/roles", role("Role", "only", rules, "team-b")
        ).status_code
        == 201
    )
    rb = binding("RoleBinding", "only", ("Role", "only"), [user("carol")], "team-b")
    assert post(admin, server, RBAC + "/namespaces/team-b/rolebindings", rb).status_code == 201
    base = server.url + "/api/v1/namespaces/team-b/configmaps"
    for name in ("only", "other"):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        assert admin.post(base, json=body).status_code == 201
    carol = session_for(server, token="t-carol")
    eventually(lambda: carol.get(base + "/only").status_code == 200)
    r = carol.get(base + "/other")
    assert (r.status_code, r.json()["message"]) == (
        403,
        'configmaps "other" is forbidden: User "carol" cannot get resource "configmaps" in API '
        'group "" in the namespace "team-b"',
    )
    assert carol.get(base).status_code == 403
    r = carol.get(base, params={"fieldSelector": "metadata.name=only"})
    assert r.status_code == 200
    assert [i["metadata"]["name"] for i in r.json()["items"]] == ["only"]
    assert carol.get(base, params={"fieldSelector": "metadata.name=other"}).status_code == 403


def test_validation_and_immutable_role_ref(rbac_server: Server) -> None:
    server, admin = rbac_server, session_for(rbac_server, cert=rbac_server.admin_cert)
    bad = role(
        "ClusterRole",
        "bad",
        [
            {"apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]},
        ],
    )
    r = post(admin, server, RBAC + "/clusterroles", bad)
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        422,
        "Invalid",
        f'ClusterRole.{GROUP} "bad" is invalid: [rules[0].verbs: Required value: verbs must '
        'contain at least one value, rules[1].nonResourceURLs: Invalid value: ["/x"]: rules cannot '
        "apply to both regular resources and non-resource URLs]",
    )
    r = post(
        admin,
        server,
        RBAC + "/namespaces/team-a/roles",
        role("Role", "urls", [{"verbs": ["get"], "nonResourceURLs": ["/x"]}], "team-a"),
    )
    assert r.status_code == 422
    assert r.json()["message"].endswith(
        'rules[0].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to '
        "non-resource URLs"
    )
    rb = binding("RoleBinding", "bad", ("Secret", "x"), [{"kind": "Robot", "name": "r"}], "team-a")
    r = post(admin, server, RBAC + "/namespaces/team-a/rolebindings", rb)
    assert r.status_code == 422
    assert r.json()["message"] == (
        f'RoleBinding.{GROUP} "bad" is invalid: [roleRef.kind: Unsupported value: "Secret": '
        'supported values: "Role", "ClusterRole", subjects[0].kind: Unsupported value: "Robot": '
        'supported values: "ServiceAccount", "User", "Group"]'
    )
    no_ref = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "x"}}
    r = post(admin, server, RBAC + "/clusterrolebindings", no_ref)
    assert (r.status_code, r.json()["message"]) == (
        422,
        f'ClusterRoleBinding.{GROUP} "x" is invalid: [roleRef.kind: Unsupported value: "": '
        'supported values: "ClusterRole", roleRef.name: Required value]',
    )
    url = server.url + RBAC + "/namespaces/team-a/rolebindings/carol-cm"
    current = admin.get(url).json()
    current["roleRef"]["name"] = "view"
    r = admin.put(url, json=current)
    assert (r.status_code, r.json()["message"]) == (
        422,
        f'RoleBinding.{GROUP} "carol-cm" is invalid: roleRef: Invalid value: '
        f'{{"APIGroup":"{GROUP}","Kind":"ClusterRole","Name":"view"}}: cannot change roleRef',
    )
    r = admin.patch(
        url,
        json={"subjects": [user("carol"), user("dave")]},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    # an aggregation selector kube cannot convert is named twice, the second time null
    selector = {"matchExpressions": [{"key": "x", "operator": "Bogus"}]}
    aggregated = {
        **role("ClusterRole", "agg", []),
        "aggregationRule": {"clusterRoleSelectors": [selector]},
    }
    r = post(admin, server, RBAC + "/clusterroles", aggregated)
    at = "aggregationRule.clusterRoleSelectors[0]"
    assert (r.status_code, r.json()["message"]) == (
        422,
        f'ClusterRole.{GROUP} "agg" is invalid: [{at}.matchExpressions[0].operator: Invalid '
        f'value: "Bogus": not a valid selector operator, {at}: Invalid value: null: invalid '
        "label selector.]",
    )


def test_escalation_is_refused(rbac_server: Server) -> None:
    server, admin = rbac_server, session_for(rbac_server, cert=rbac_server.admin_cert)
    writer = [
        READ_CM,
        {
            "apiGroups": [GROUP],
            "resources": ["roles", "rolebindings"],
            "verbs": ["create", "update"],
        },
    ]
    assert (
        post(
            admin, server, RBAC + "/namespaces/esc/roles", role("Role", "writer", writer, "esc")
        ).status_code
        == 201
    )
    rb = binding("RoleBinding", "writer", ("Role", "writer"), [user("carol")], "esc")
    assert post(admin, server, RBAC + "/namespaces/esc/rolebindings", rb).status_code == 201
    secrets = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}
    assert (
        post(
            admin, server, RBAC + "/clusterroles", role("ClusterRole", "secret-reader", [secrets])
        ).status_code
        == 201
    )
    carol = session_for(server, token="t-carol")
    roles, bindings = RBAC + "/namespaces/esc/roles", RBAC + "/namespaces/esc/rolebindings"
    eventually(
        lambda: carol.get(server.url + "/api/v1/namespaces/esc/configmaps").status_code == 200
    )
    # Granting what she holds is fine; granting more is not.
    assert post(carol, server, roles, role("Role", "same", [READ_CM], "esc")).status_code == 201
    r = post(carol, server, roles, role("Role", "leaky", [READ_CM, secrets], "esc"))
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        403,
        "Forbidden",
        f'roles.{GROUP} "leaky" is forbidden: user "carol" (groups=["system:authenticated"]) is '
        "attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    )
    assert r.json()["details"] == {"name": "leaky", "group": GROUP, "kind": "roles"}
    # An update that widens her own role is an escalation too.
    current = admin.get(server.url + roles + "/same").json()
    current["rules"].append(secrets)
    assert carol.put(server.url + roles + "/same", json=current).status_code == 403
    rb = binding("RoleBinding", "sneaky", ("ClusterRole", "secret-reader"), [user("carol")], "esc")
    r = post(carol, server, bindings, rb)
    assert (r.status_code, r.json()["message"]) == (
        403,
        f'rolebindings.{GROUP} "sneaky" is forbidden: user "carol" (groups=["system:authenticated"]) '
        "is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    )
    # A role that does not exist: kube's role getter's NotFound, naming the request's
    # resource and the role (as the reference answered).
    missing = binding("RoleBinding", "b-ghost", ("Role", "ghost"), [user("carol")], "esc")
    r = post(carol, server, bindings, missing)
    assert (r.status_code, r.json()) == (
        404,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f'rolebindings.{GROUP} "ghost" not found',
            "reason": "NotFound",
            "details": {"name": "ghost", "group": GROUP, "kind": "rolebindings"},
            "code": 404,
        },
    )
    assert admin.get(server.url + bindings + "/sneaky").status_code == 404  # nothing written
    # `bind` on that one role lets her bind it; `escalate` lets her write any role.
    bind = [
        {
            "apiGroups": [GROUP],
            "resources": ["clusterroles"],
            "verbs": ["bind"],
            "resourceNames": ["secret-reader"],
        }
    ]
    assert (
        post(admin, server, RBAC + "/clusterroles", role("ClusterRole", "binder", bind)).status_code
        == 201
    )
    grant = binding("RoleBinding", "binder", ("ClusterRole", "binder"), [user("carol")], "esc")
    assert post(admin, server, bindings, grant).status_code == 201
    eventually(lambda: post(carol, server, bindings, rb).status_code == 201)
    escalate = [{"apiGroups": [GROUP], "resources": ["roles"], "verbs": ["escalate"]}]
    assert (
        post(
            admin, server, RBAC + "/clusterroles", role("ClusterRole", "escalator", escalate)
        ).status_code
        == 201
    )
    grant = binding(
        "RoleBinding", "escalator", ("ClusterRole", "escalator"), [user("carol")], "esc"
    )
    assert post(admin, server, bindings, grant).status_code == 201
    big = role("Role", "big", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}], "esc")
    eventually(lambda: post(carol, server, roles, big).status_code == 201)


def test_non_resource_urls(rbac_server: Server) -> None:
    server, admin = rbac_server, session_for(rbac_server, cert=rbac_server.admin_cert)
    dave = session_for(server, token="t-dave")
    r = dave.get(server.url + "/metrics")
    assert (r.status_code, r.json()["message"]) == (
        403,
        'forbidden: User "dave" cannot get path "/metrics"',
    )
    urls = [{"nonResourceURLs": ["/metrics*"], "verbs": ["get"]}]
    assert (
        post(admin, server, RBAC + "/clusterroles", role("ClusterRole", "ver", urls)).status_code
        == 201
    )
    crb = binding("ClusterRoleBinding", "ver", ("ClusterRole", "ver"), [user("dave")])
    assert post(admin, server, RBAC + "/clusterrolebindings", crb).status_code == 201
    eventually(lambda: dave.get(server.url + "/metrics").status_code == 200)


def test_self_subject_rules_review(rbac_server: Server) -> None:
    server = rbac_server
    carol = session_for(server, token="t-carol")
    path = "/apis/authorization.platform.io/v1/selfsubjectrulesreviews"
    body = {"apiVersion": "authorization.platform.io/v1", "kind": "SelfSubjectRulesReview"}
    r = post(carol, server, path, {**body, "spec": {}})
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        400,
        "BadRequest",
        "no namespace on request",
    )
    eventually(lambda: carol.get(server.url + "/api/v1/namespaces/team-a/configmaps").ok)
    r = post(carol, server, path, {**body, "spec": {"namespace": "team-a"}})
    assert r.status_code == 201, r.text
    review = r.json()
    assert review["kind"] == "SelfSubjectRulesReview"
    assert review["spec"] == {}
    status = review["status"]
    assert status["incomplete"] is False
    assert "evaluationError" not in status
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]} in (
        status["resourceRules"]
    )
    r = post(carol, server, path, {**body, "spec": {"namespace": "team-b"}})
    resource_rules = r.json()["status"]["resourceRules"]
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]} not in (
        resource_rules
    )
    only = {
        "verbs": ["get", "list", "watch"],
        "apiGroups": [""],
        "resources": ["configmaps"],
        "resourceNames": ["only"],
    }
    assert only in resource_rules


def test_self_subject_rules_review_under_always_allow(
    server: Server, admin: requests.Session
) -> None:
    path = "/apis/authorization.platform.io/v1/selfsubjectrulesreviews"
    body = {
        "apiVersion": "authorization.platform.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"},
    }
    r = admin.post(server.url + path, json=body)
    assert r.status_code == 201
    assert r.json() == {
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.platform.io/v1",
        "metadata": {},  # a zero creationTimestamp is omitted (omitzero)
        "spec": {},
        "status": {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        },
    }


def token_kubeconfig(server: Server, token: str) -> Path:
    path = server.data_dir.parent / f"{token}.kubeconfig"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "c", "cluster": {"server": server.url, "certificate-authority": server.ca}}
        ],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_text(json.dumps(config))
    return path


def kubectl(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(config), *args]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60)


def test_kubectl_as_a_limited_user(rbac_server: Server) -> None:
    server, admin = rbac_server, session_for(rbac_server, cert=rbac_server.admin_cert)
    rb = binding("RoleBinding", "dave-view", ("ClusterRole", "view"), [user("dave")], "team-b")
    assert post(admin, server, RBAC + "/namespaces/team-b/rolebindings", rb).status_code == 201
    for name in ("only", "other"):  # made by test_resource_names_limit_get_and_list too
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        made = admin.post(server.url + "/api/v1/namespaces/team-b/configmaps", json=body)
        assert made.status_code in (201, 409), made.text
    dave = token_kubeconfig(server, "t-dave")
    eventually(lambda: kubectl(dave, "get", "configmaps", "-n", "team-b").returncode == 0)
    out = kubectl(dave, "get", "configmaps", "-n", "team-b", "-o", "name").stdout.split()
    assert out == ["configmap/only", "configmap/other"]
    assert kubectl(dave, "get", "pods", "-n", "team-b").returncode == 0
    denied = kubectl(dave, "get", "secrets", "-n", "team-b")  # view never shows secrets
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        'Error from server (Forbidden): secrets is forbidden: User "dave" cannot list resource '
        '"secrets" in API group "" in the namespace "team-b"'
    )
    cm = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mine","namespace":"team-b"}}'
    result = subprocess.run(
        [str(VENV_BIN / "kubectl"), "--kubeconfig", str(dave), "create", "-f", "-"],
        input=cm, check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert "cannot create resource" in result.stderr


def test_impersonation_needs_the_impersonate_verb(rbac_server: Server) -> None:
    server, admin = rbac_server, session_for(rbac_server, cert=rbac_server.admin_cert)
    carol = session_for(server, token="t-carol")
    url = server.url + "/apis/authentication.platform.io/v1/selfsubjectreviews"
    review = {"apiVersion": "authentication.platform.io/v1", "kind": "SelfSubjectReview"}

    def as_user(name: str) -> requests.Response:
        return carol.post(url, json=review, headers={"Impersonate-User": name})

    r = as_user("dave")
    assert (r.status_code, r.json()["message"]) == (
        403,
        'users "dave" is forbidden: User "carol" cannot impersonate resource "users" in API '
        'group "" at the cluster scope',
    )
    rule = {
        "apiGroups": [""],
        "resources": ["users"],
        "verbs": ["impersonate"],
        "resourceNames": ["dave"],
    }
    r = post(admin, server, RBAC + "/clusterroles", role("ClusterRole", "be-dave", [rule]))
    assert r.status_code == 201
    crb = binding(
        "ClusterRoleBinding", "carol-be-dave", ("ClusterRole", "be-dave"), [user("carol")]
    )
    assert post(admin, server, RBAC + "/clusterrolebindings", crb).status_code == 201
    eventually(lambda: as_user("dave").status_code == 201)
    assert as_user("dave").json()["status"]["userInfo"]["username"] == "dave"
    assert as_user("erin").status_code == 403


def test_the_filters_refusals_carry_nosniff_and_the_handlers_errors_do_not(
    rbac_server: Server,
) -> None:
    """kube's authorization and impersonation filters answer through
    responsewriters.RespondWithError, which sets ``X-Content-Type-Options: nosniff``; a
    handler's error (a 404) does not (the reference's headers)."""
    server = rbac_server
    carol = session_for(server, token="t-carol")
    denied = carol.get(server.url + "/api/v1/namespaces")
    assert (denied.status_code, denied.headers.get("X-Content-Type-Options")) == (403, "nosniff")
    bad = carol.get(server.url + "/api/v1/namespaces", headers={"Impersonate-Group": "g"})
    assert (bad.status_code, bad.json()["reason"]) == (400, "BadRequest")
    assert bad.headers.get("X-Content-Type-Options") == "nosniff"
    admin = session_for(server, cert=server.admin_cert)
    missing = admin.get(server.url + "/api/v1/namespaces/nope")
    assert missing.status_code == 404 and "X-Content-Type-Options" not in missing.headers


ADMISSION = "/apis/admissionregistration.platform.io/v1"


def test_admission_policies_need_their_writer_to_read_the_parameters(rbac_server: Server) -> None:
    """kube's policy storage: a policy's paramKind needs ``get`` on all its objects, a
    binding's paramRef ``get`` on the one it names; answers as kube-apiserver's."""
    server, admin = rbac_server, session_for(rbac_server, cert=rbac_server.admin_cert)
    writer = {
        "apiGroups": ["admissionregistration.platform.io"],
        "resources": ["validatingadmissionpolicies", "validatingadmissionpolicybindings"],
        "verbs": ["create", "update", "patch", "get"],
    }
    assert (
        post(
            admin, server, RBAC + "/clusterroles", role("ClusterRole", "vap-writer", [writer])
        ).status_code
        == 201
    )
    rb = binding("ClusterRoleBinding", "erin-vap", ("ClusterRole", "vap-writer"), [user("erin")])
    assert post(admin, server, RBAC + "/clusterrolebindings", rb).status_code == 201
    erin = session_for(server, token="t-erin")
    rules = [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["secrets"],
        }
    ]
    policy = {
        "apiVersion": "admissionregistration.platform.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "erin-params"},
        "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": rules},
            "validations": [{"expression": "true"}],
        },
    }
    who = "&{erin 3 [system:authenticated] map[]}"
    eventually(
        lambda: (
            post(erin, server, ADMISSION + "/validatingadmissionpolicies", policy).status_code
            == 422
        )
    )
    refused = post(erin, server, ADMISSION + "/validatingadmissionpolicies", policy).json()
    why = (
        f'Forbidden: user {who} must have "get" permission on all objects of the referenced '
        "paramKind (kind=ConfigMap, apiVersion=v1)"
    )
    assert refused == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "ValidatingAdmissionPolicy.admissionregistration.platform.io "
        f'"erin-params" is invalid: spec.paramKind: {why}',
        "reason": "Invalid",
        "details": {
            "name": "erin-params",
            "group": "admissionregistration.platform.io",
            "kind": "ValidatingAdmissionPolicy",
            "causes": [
                {"reason": "FieldValueForbidden", "message": why, "field": "spec.paramKind"}
            ],
        },
        "code": 422,
    }
    assert (
        post(admin, server, ADMISSION + "/validatingadmissionpolicies", policy).status_code == 201
    )
    vapb = {
        "apiVersion": "admissionregistration.platform.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "erin-params"},
        "spec": {
            "policyName": "erin-params",
            "paramRef": {"name": "cfg", "namespace": "team-a", "parameterNotFoundAction": "Deny"},
            "validationActions": ["Deny"],
        },
    }
    r = post(erin, server, ADMISSION + "/validatingadmissionpolicybindings", vapb)
    assert r.status_code == 422, r.text
    assert r.json()["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": f'Forbidden: user {who} does not have "get" permission on the object '
            "referenced by paramRef",
            "field": "spec.paramRef",
        }
    ]
    grant = role("Role", "erin-cm", [READ_CM], "team-a")
    assert post(admin, server, RBAC + "/namespaces/team-a/roles", grant).status_code == 201
    rb = binding("RoleBinding", "erin-cm", ("Role", "erin-cm"), [user("erin")], "team-a")
    assert post(admin, server, RBAC + "/namespaces/team-a/rolebindings", rb).status_code == 201
    eventually(
        lambda: (
            post(erin, server, ADMISSION + "/validatingadmissionpolicybindings", vapb).status_code
            == 201
        )
    )
    # One namespace's ConfigMaps are not all of them: the policy is still refused.
    policy["metadata"]["name"] = "erin-params-2"
    assert post(erin, server, ADMISSION + "/validatingadmissionpolicies", policy).status_code == 422
