"""The bodies audit events hold, end to end and as kube-apiserver v1.36 logged them for
the same requests: a write's requestObject as its handler decoded it, answers in any
encoding (kubectl's Protobuf), a policy's Audit action, kube's names under upstream groups."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.auditing import JSON_BODY, NS, Setup, completed, events, logged
from tests.e2e.conftest import VENV_BIN, session_for, start_server

pytestmark = pytest.mark.slow


@pytest.fixture
def admin(audited: Setup) -> requests.Session:
    """The audited server's admin (in place of the shared server's)."""
    assert audited.server is not None
    return session_for(audited.server, cert=audited.server.admin_cert)


def test_request_level_logs_the_body_without_managed_fields(
    audited: Setup, admin: requests.Session
) -> None:
    assert audited.server is not None
    body = {
        "metadata": {"name": "cm1", "managedFields": [{"manager": "x", "operation": "Apply"}]},
        "data": {"k": "v"},
    }
    reply = admin.post(audited.server.url + f"{NS}/configmaps", json=body)
    assert reply.status_code == 201, reply.text
    complete = events(audited.log, reply.headers["Audit-Id"], 2)[-1]
    assert complete["level"] == "Request"
    as_decoded = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "cm1"}}
    assert complete["requestObject"] == {**as_decoded, "data": {"k": "v"}}
    assert "responseObject" not in complete


def test_the_request_object_is_the_body_as_kube_decodes_it(
    audited: Setup, admin: requests.Session
) -> None:
    """kube logs a create's or update's body decoded and defaulted, before admission
    (each expected object below is kube-apiserver v1.36's event for the same request),
    nothing of a body that does not decode, a patch as sent, and a delete's options as
    decoded to the internal version."""
    assert audited.server is not None
    url = audited.server.url + f"{NS}/pods"
    container = {"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1000m"}}}
    pod = {"metadata": {"name": "p-decoded"}, "spec": {"containers": [container]}}
    reply = admin.post(url, json=pod)
    assert reply.status_code == 201, reply.text
    (complete,) = events(audited.log, reply.headers["Audit-Id"], 1)
    assert list(complete["requestObject"])[:2] == ["kind", "apiVersion"]
    assert complete["requestObject"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "p-decoded"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx",
                    "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "Always",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "enableServiceLinks": True,
        },
        "status": {},
    }
    maps = audited.server.url + f"{NS}/configmaps"
    raw = b'{"metadata": {"name": "cm-unknown"}, "data": {"k": "v"}, "unknownField": 1}'
    reply = admin.post(maps, data=raw, headers={"Content-Type": "application/json"})
    assert reply.status_code == 201
    complete = events(audited.log, reply.headers["Audit-Id"], 2)[-1]
    assert complete["requestObject"] == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "cm-unknown"},
        "data": {"k": "v"},
    }
    invalid = admin.post(maps, json={"metadata": {"name": "Bad_Name"}})
    assert invalid.status_code == 422
    complete = events(audited.log, invalid.headers["Audit-Id"], 2)[-1]
    assert complete["requestObject"] == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "Bad_Name"},
    }
    # YAML's "y" is true to kube's decoder: no string, no object, no requestObject
    yaml = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n"
    undecodable = admin.post(maps, data=yaml, headers={"Content-Type": "application/yaml"})
    assert undecodable.status_code == 400
    complete = events(audited.log, undecodable.headers["Audit-Id"], 2)[-1]
    assert "requestObject" not in complete
    merge = {"Content-Type": "application/merge-patch+json"}
    patched = admin.patch(f"{maps}/cm-unknown", data=b'{"data":{"k":"x"}}', headers=merge)
    assert patched.status_code == 200
    complete = events(audited.log, patched.headers["Audit-Id"], 2)[-1]
    assert complete["requestObject"] == {"data": {"k": "x"}}
    deleted = admin.delete(f"{maps}/cm-unknown", json={"gracePeriodSeconds": 0})
    assert deleted.status_code == 200
    complete = events(audited.log, deleted.headers["Audit-Id"], 2)[-1]
    assert complete["requestObject"] == {
        "kind": "DeleteOptions",
        "apiVersion": "meta.platform.io/__internal",
        "gracePeriodSeconds": 0,
    }
    # options that do not decode are logged as nothing, as kube's handlers log them
    for body in (b'{"gracePeriodSeconds": "abc"}', b"[1]", b"{bad"):
        refused = admin.delete(f"{maps}/cm-gone", data=body, headers=JSON_BODY)
        assert refused.status_code == 400 and refused.json()["reason"] == "BadRequest"
        complete = events(audited.log, refused.headers["Audit-Id"], 2)[-1]
        assert "requestObject" not in complete


def test_request_response_level_and_omitted_stage(audited: Setup, admin: requests.Session) -> None:
    assert audited.server is not None
    pod = {"metadata": {"name": "p1"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    reply = admin.post(audited.server.url + f"{NS}/pods", json=pod)
    assert reply.status_code == 201
    found = events(audited.log, reply.headers["Audit-Id"], 1)
    assert [e["stage"] for e in found] == ["ResponseComplete"]  # RequestReceived omitted
    complete = found[0]
    assert complete["requestObject"]["metadata"] == {"name": "p1"}
    assert complete["responseObject"]["metadata"]["uid"] == reply.json()["metadata"]["uid"]
    assert complete["responseObject"]["kind"] == "Pod"


AUDIT_ONLY = """apiVersion: admissionregistration.platform.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: audit-only}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}
  validations:
  - expression: "true"
  - expression: "object.metadata.name.startsWith('ok')"
    message: "name must start with ok"
  - expression: "has(object.data)"
    messageExpression: "'no data in ' + object.metadata.name"
---
apiVersion: admissionregistration.platform.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: audit-only-binding}
spec:
  policyName: audit-only
  validationActions: [Audit, Warn]
"""


def test_a_policys_audit_action_and_kubectls_protobuf_body(audited: Setup) -> None:
    """A policy bound with Audit records kube's JSON list of the request's first failure
    (what kube-apiserver v1.36 wrote for the same policy and request); kubectl's create
    comes as Protobuf, and the event still names the object and holds it as decoded."""
    assert audited.server is not None
    kubectl = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(audited.server.kubeconfig)]
    subprocess.run([*kubectl, "apply", "-f", "-"], input=AUDIT_ONLY, text=True, check=True)
    created = subprocess.run(
        [*kubectl, "create", "configmap", "bad-one", "-n", "default", "-v=6"],
        capture_output=True,
        text=True,
        check=True,
    )
    # both failures warned, as kube warns them
    assert created.stderr.count("Validation failed for ValidatingAdmissionPolicy") == 2
    audit_ids = [
        event["auditID"]
        for event in logged(audited.log)
        if event["verb"] == "create" and event["objectRef"].get("name") == "bad-one"
    ]
    assert audit_ids, "the create's event names the object it created"
    complete = events(audited.log, audit_ids[0], 2)[-1]
    assert complete["objectRef"]["name"] == "bad-one"
    assert complete["requestObject"] == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "bad-one", "namespace": "default"},
    }
    failure = '[{"message":"name must start with ok","policy":"audit-only",'
    failure += '"binding":"audit-only-binding","expressionIndex":1,'
    failure += '"validationActions":["Audit","Warn"]}]'
    key = "validation.policy.admission.platform.io/validation_failure"
    assert complete["annotations"][key] == failure
    subprocess.run([*kubectl, "delete", "-f", "-"], input=AUDIT_ONLY, text=True, check=True)


def _kubectl_events(audited: Setup, *args: str) -> list[dict[str, Any]]:
    """The ResponseComplete events of one kubectl command (Protobuf on the wire), found
    by the audit IDs its -v=8 log names."""
    assert audited.server is not None
    kubectl = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(audited.server.kubeconfig)]
    # a get of what is not there fails: its events are what is wanted
    run = subprocess.run(
        [*kubectl, *args, "-v=8"], check=False, capture_output=True, text=True, timeout=30
    )
    ids = re.findall(r"Audit-Id: ([0-9a-f-]{36})", run.stderr)
    assert ids, run.stderr[-2000:]
    return [completed(audited.log, i) for i in dict.fromkeys(ids)]


def test_kubectls_protobuf_answers_are_logged_as_kube_logs_them(audited: Setup) -> None:
    """kubectl reads Protobuf; kube logs the object or the failure's Status its handler
    answered, whatever the encoding (compared with kube-apiserver v1.36's log for the
    same commands): the reason and message of a failure at every level."""
    made = _kubectl_events(audited, "run", "pb-pod", "--image=busybox", "--restart=Never")
    created = [e for e in made if e["verb"] == "create"]
    assert created[0]["responseObject"]["kind"] == "Pod"
    assert created[0]["responseObject"]["metadata"]["name"] == "pb-pod"
    missing = _kubectl_events(audited, "get", "pod", "pb-nope")[-1]
    status = {"metadata": {}, "status": "Failure", "message": 'pods "pb-nope" not found'}
    status |= {"reason": "NotFound", "details": {"name": "pb-nope", "kind": "pods"}, "code": 404}
    assert missing["responseStatus"] == status
    assert missing["responseObject"] == {"kind": "Status", "apiVersion": "v1", **status}
    secret = _kubectl_events(audited, "get", "secret", "pb-nope")[-1]
    assert secret["responseStatus"]["reason"] == "NotFound"
    assert "responseObject" not in secret  # Metadata level
    assert audited.server is not None
    admin = session_for(audited.server, cert=audited.server.admin_cert)
    protobuf = {"Accept": "application/vnd.kubernetes.protobuf"}
    listed = admin.get(f"{audited.server.url}{NS}/pods", headers=protobuf)
    assert listed.headers["Content-Type"] == "application/vnd.kubernetes.protobuf"
    pods = completed(audited.log, listed.headers["Audit-Id"])["responseObject"]
    assert (pods["kind"], pods["apiVersion"]) == ("PodList", "v1")
    assert "pb-pod" in [p["metadata"]["name"] for p in pods["items"]]


KUBE_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  resources:
  - {group: rbac.authorization.k8s.io, resources: [roles]}
  - {group: "", resources: [serviceaccounts/token]}
"""


def test_a_kube_policy_and_kubes_names_under_upstream_groups(tmp_path: Path) -> None:
    """A kube audit policy naming kube's groups matches as written, and the events name
    what the client named: objectRef's apiGroup and requestObject's apiVersion in the
    upstream group; a TokenRequest as its Go type decodes it (kube-apiserver v1.36 logged
    the same for the same kubectl commands)."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(KUBE_POLICY)
    log = tmp_path / "audit.log"
    server = start_server(
        tmp_path / "data",
        "--serve-upstream-groups",
        f"--audit-policy-file={policy}",
        f"--audit-log-path={log}",
    )
    try:
        kubectl = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(server.kubeconfig)]
        for args in (["create", "role", "r", "--verb=get", "--resource=pods"],
                     ["create", "serviceaccount", "sa"], ["create", "token", "sa"]):  # fmt: skip
            subprocess.run([*kubectl, *args], capture_output=True, check=True, timeout=30)
        written: list[dict[str, Any]] = []
        deadline = time.monotonic() + 10
        while len(written) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            written = logged(log)
        role, token = (e for e in written if e["verb"] == "create")
        assert role["objectRef"] == {
            "resource": "roles",
            "namespace": "default",
            "name": "r",
            "apiGroup": "rbac.authorization.k8s.io",
            "apiVersion": "v1",
        }
        assert role["requestObject"] == {
            "kind": "Role",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "r"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
        }
        assert token["requestObject"] == {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {},
            "spec": {"audiences": None, "expirationSeconds": 3600, "boundObjectRef": None},
            "status": {"token": "", "expirationTimestamp": None},
        }
        assert list(token["requestObject"]["spec"]) == [
            "audiences", "expirationSeconds", "boundObjectRef"
        ]  # fmt: skip
    finally:
        server.stop()
