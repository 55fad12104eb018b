"""CertificateSigningRequests and RuntimeClasses on a real server, through kubectl and
HTTP: create, approve (and its refusal), the printed columns, a pod's overhead."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import eventually
from tests.registry.test_certificates import pem_request

CSRS = "/apis/certificates.platform.io/v1/certificatesigningrequests"
SIGNER = "platform.io/kube-apiserver-client"


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("certificates")
    tokens = root / "tokens.csv"
    tokens.write_text("t-carol,carol,2\n")
    server = start_server(
        root / "data", "--authorization-mode", "RBAC", "--token-auth-file", str(tokens)
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin(rbac_server: Server) -> requests.Session:
    return session_for(rbac_server, cert=rbac_server.admin_cert)


def create_csr(server: Server, name: str) -> None:
    manifest = {
        "apiVersion": "certificates.platform.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": pem_request("alice", ("dev",)),
            "signerName": SIGNER,
            "expirationSeconds": 86400,
            "usages": ["client auth"],
            "username": "someone-else",
        },
    }
    server.kubectl("create", "-f", "-", stdin=json.dumps(manifest))


def approval_body(server: Server, name: str) -> str:
    """What ``kubectl certificate approve`` sends: the object with its Approved condition."""
    csr = json.loads(server.kubectl("get", "csr", name, "-o", "json").stdout)
    csr["status"] = {
        "conditions": [
            {
                "type": "Approved",
                "status": "True",
                "reason": "KubectlApprove",
                "message": "This CSR was approved by kubectl certificate approve.",
            }
        ]
    }
    return json.dumps(csr)


def test_create_approve_and_columns(rbac_server: Server) -> None:
    create_csr(rbac_server, "csr-a")
    csr = json.loads(rbac_server.kubectl("get", "csr", "csr-a", "-o", "json").stdout)
    assert csr["spec"]["username"] == "platform-admin"  # the requester, not the body's
    assert csr["status"] == {}
    listed = rbac_server.kubectl("get", "csr", "csr-a").stdout.splitlines()
    assert listed[0].split() == [
        "NAME",
        "AGE",
        "SIGNERNAME",
        "REQUESTOR",
        "REQUESTEDDURATION",
        "CONDITION",
    ]
    assert listed[1].split()[2:] == [SIGNER, "platform-admin", "24h", "Pending"]
    path = f"{CSRS}/csr-a/approval"
    body = approval_body(rbac_server, "csr-a")
    rbac_server.kubectl("replace", "--raw", path, "-f", "-", stdin=body)
    approved = json.loads(rbac_server.kubectl("get", "csr", "csr-a", "-o", "json").stdout)
    (condition,) = approved["status"]["conditions"]
    assert (condition["type"], condition["status"]) == ("Approved", "True")
    assert condition["lastUpdateTime"] and condition["lastTransitionTime"]
    # The signing controller issues it moments later (tests/e2e/test_csr_signing.py).
    eventually(
        lambda: rbac_server.kubectl("get", "csr", "csr-a").stdout.split()[-1] == "Approved,Issued"
    )


def test_kubectl_certificate_approve_wants_the_upstream_group(rbac_server: Server) -> None:
    """kubectl's approve command checks the object's group itself, client-side."""
    create_csr(rbac_server, "csr-k")
    run = rbac_server.kubectl("certificate", "approve", "csr-k", check=False)
    assert run.returncode == 1
    assert run.stderr.strip() == (
        "error: can only handle CertificateSigningRequest.certificates.k8s.io objects, "
        "got CertificateSigningRequest.certificates.platform.io"
    )


def test_approve_refused_without_the_approve_verb(
    rbac_server: Server, admin: requests.Session
) -> None:
    create_csr(rbac_server, "csr-b")
    rbac = rbac_server.url + "/apis/rbac.authorization.platform.io/v1"
    role = {
        "metadata": {"name": "csr-editor"},
        "rules": [
            {
                "apiGroups": ["certificates.platform.io"],
                "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
                "verbs": ["*"],
            }
        ],
    }
    assert admin.post(rbac + "/clusterroles", json=role).status_code == 201
    binding = {
        "metadata": {"name": "csr-editor"},
        "roleRef": {
            "apiGroup": "rbac.authorization.platform.io",
            "kind": "ClusterRole",
            "name": "csr-editor",
        },
        "subjects": [
            {"kind": "User", "name": "carol", "apiGroup": "rbac.authorization.platform.io"}
        ],
    }
    assert admin.post(rbac + "/clusterrolebindings", json=binding).status_code == 201
    carol = session_for(rbac_server, token="t-carol")
    body = json.loads(approval_body(rbac_server, "csr-b"))
    r = carol.put(f"{rbac_server.url}{CSRS}/csr-b/approval", json=body)
    assert r.status_code == 403
    status = r.json()
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        'certificatesigningrequests.certificates.platform.io "csr-b" is forbidden: user not '
        f'permitted to approve requests with signerName "{SIGNER}"'
    )
    signers = {
        "metadata": {"name": "approver"},
        "rules": [
            {
                "apiGroups": ["certificates.platform.io"],
                "resources": ["signers"],
                "resourceNames": ["platform.io/*"],
                "verbs": ["approve"],
            }
        ],
    }
    assert admin.post(rbac + "/clusterroles", json=signers).status_code == 201
    binding["metadata"]["name"] = binding["roleRef"]["name"] = "approver"
    assert admin.post(rbac + "/clusterrolebindings", json=binding).status_code == 201
    eventually(
        lambda: carol.put(f"{rbac_server.url}{CSRS}/csr-b/approval", json=body).status_code == 200
    )


def test_runtime_class_gives_pods_its_overhead(rbac_server: Server, tmp_path: Path) -> None:
    manifest = {
        "apiVersion": "node.platform.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "kata"},
        "handler": "kata",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {"nodeSelector": {"runtime": "kata"}},
    }
    rbac_server.kubectl("create", "-f", "-", stdin=json.dumps(manifest))
    listed = rbac_server.kubectl("get", "runtimeclass").stdout.splitlines()
    assert listed[0].split() == ["NAME", "HANDLER", "AGE"]
    assert listed[1].split()[:2] == ["kata", "kata"]
    overrides = json.dumps({"spec": {"runtimeClassName": "kata"}})
    rbac_server.kubectl("run", "p", "--image=i", f"--overrides={overrides}")
    pod = json.loads(rbac_server.kubectl("get", "pod", "p", "-o", "json").stdout)
    assert pod["spec"]["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert pod["spec"]["nodeSelector"] == {"runtime": "kata"}
    overrides = json.dumps({"spec": {"runtimeClassName": "missing"}})
    run = rbac_server.kubectl("run", "q", "--image=i", f"--overrides={overrides}", check=False)
    assert run.stderr.strip() == (
        'Error from server (Forbidden): pods "q" is forbidden: pod rejected: RuntimeClass '
        '"missing" not found'
    )
