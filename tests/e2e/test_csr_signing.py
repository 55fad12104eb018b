"""Certificates from CertificateSigningRequests on a real server: asked for, approved,
signed by the server's CA, and used to log in, with kubectl and the kubernetes client."""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Iterator
from pathlib import Path

import kubernetes
import pytest
import requests
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import eventually
from tests.e2e.test_authn import bootstrap_secret

BRANDED = "/apis/certificates.platform.io/v1/certificatesigningrequests"
SIGNER, KUBE_SIGNER = "platform.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client"


def key_and_request(cn: str, orgs: tuple[str, ...] = ()) -> tuple[bytes, str]:
    """A private key (PEM) and a CSR for it (base64 of the PEM, as spec.request holds it)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    names = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    names += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names))
    pem = csr.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    return key_pem, base64.b64encode(pem).decode()


def kubeconfig_for(server: Server, cert_b64: str, key_pem: bytes, where: Path) -> Path:
    """The admin kubeconfig with its user swapped for the issued certificate."""
    config = yaml.safe_load(server.kubeconfig.read_text())
    config["users"][0]["user"] = {
        "client-certificate-data": cert_b64,
        "client-key-data": base64.b64encode(key_pem).decode(),
    }
    where.write_text(yaml.safe_dump(config))
    return where


def manifest(
    name: str,
    request: str,
    signer: str,
    usages: list[str],
    group: str = "certificates.platform.io",
    **spec: object,
) -> dict[str, object]:
    return {
        "apiVersion": f"{group}/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": request, "signerName": signer, "usages": usages, **spec},
    }


def whoami(server: Server, config: Path) -> dict[str, object]:
    """kubectl auth whoami, by hand: kubectl's command asks for kube's group name only."""
    review = {"apiVersion": "authentication.platform.io/v1", "kind": "SelfSubjectReview"}
    path = "/apis/authentication.platform.io/v1/selfsubjectreviews"
    args = ("--kubeconfig", str(config), "create", "--raw", path, "-f", "-")
    user: dict[str, object] = json.loads(server.kubectl(*args, stdin=json.dumps(review)).stdout)[
        "status"
    ]["userInfo"]
    return user


@pytest.fixture(scope="module")
def branded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("csr-signing") / "data")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("csr-signing-upstream")
    server = start_server(root / "data", "--serve-upstream-groups", "--authorization-mode=RBAC")
    yield server
    server.stop()


def approve(server: Server, path: str) -> None:
    """What ``kubectl certificate approve`` sends, by ``kubectl replace --raw``."""
    csr = json.loads(server.kubectl("get", "--raw", path).stdout)
    csr["status"] = {
        "conditions": [{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]
    }
    server.kubectl("replace", "--raw", path + "/approval", "-f", "-", stdin=json.dumps(csr))


def issued(session: requests.Session, url: str) -> str:
    found: list[str] = []

    def ready() -> bool:
        status = session.get(url).json().get("status") or {}
        found[:] = [status.get("certificate") or ""]
        return bool(found[0])

    eventually(ready)
    return found[0]


def test_a_user_gets_a_certificate_that_logs_in(branded: Server, tmp_path: Path) -> None:
    """The "add a user" walkthrough: ask, approve, read the certificate, log in."""
    key_pem, request = key_and_request("alice", ("dev", "qa"))
    body = manifest("alice", request, SIGNER, ["client auth"], expirationSeconds=86400)
    branded.kubectl("create", "-f", "-", stdin=json.dumps(body))
    approve(branded, f"{BRANDED}/alice")
    admin = session_for(branded, cert=branded.admin_cert)
    cert_b64 = issued(admin, f"{branded.url}{BRANDED}/alice")
    listed = branded.kubectl("get", "csr", "alice").stdout.splitlines()[1].split()
    assert listed[-1] == "Approved,Issued"
    cert = x509.load_pem_x509_certificate(base64.b64decode(cert_b64))
    # Backdated five minutes; from 8 hours up, kube takes the five off the end too.
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(hours=24)
    config = kubeconfig_for(branded, cert_b64, key_pem, tmp_path / "alice.kubeconfig")
    assert whoami(branded, config) == {
        "username": "alice",
        "groups": ["dev", "qa", "system:authenticated"],
    }
    jsonpath = "{.status.certificate}"
    printed = branded.kubectl("get", "csr", "alice", "-o", f"jsonpath={jsonpath}").stdout
    assert printed == cert_b64  # what walkthroughs pipe through base64 -d


def test_a_request_the_signer_refuses_fails(branded: Server) -> None:
    _, request = key_and_request("bob")
    body = manifest("bob", request, SIGNER, ["client auth", "server auth"])
    branded.kubectl("create", "-f", "-", stdin=json.dumps(body))
    approve(branded, f"{BRANDED}/bob")
    admin = session_for(branded, cert=branded.admin_cert)

    def failed() -> bool:
        conditions = admin.get(f"{branded.url}{BRANDED}/bob").json()["status"]["conditions"]
        return len(conditions) == 2

    eventually(failed)
    status = admin.get(f"{branded.url}{BRANDED}/bob").json()["status"]
    assert "certificate" not in status
    condition = status["conditions"][1]
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
        "type": "Failed",
        "status": "True",
        "reason": "SignerValidationFailure",
        "message": "invalid usage for client certificate: server auth",
    }
    listed = branded.kubectl("get", "csr", "bob").stdout.splitlines()[1].split()
    assert listed[-1] == "Approved,Failed"


def test_upstreams_conformance_flow_with_the_kubernetes_client(upstream: Server) -> None:
    """upstream's "should support building a client with a CSR", step by step: kube's
    group and signer name, approved with UpdateApproval, the certificate used by a new
    client whose own CSR names it as the requester."""
    admin = kubernetes.config.new_client_from_config(str(upstream.kubeconfig))
    api = kubernetes.client.CertificatesV1Api(admin)
    key_pem, request = key_and_request("tester-csr")
    body = kubernetes.client.V1CertificateSigningRequest(
        metadata=kubernetes.client.V1ObjectMeta(generate_name="tester-csr-"),
        spec=kubernetes.client.V1CertificateSigningRequestSpec(
            request=request,
            usages=["digital signature", "key encipherment", "client auth"],
            signer_name="kubernetes.io/kube-apiserver-client",
            expiration_seconds=3600,
        ),
    )
    rbac = kubernetes.client.RbacAuthorizationV1Api(admin)
    rule = kubernetes.client.V1PolicyRule(
        verbs=["create"],
        api_groups=["certificates.k8s.io"],
        resources=["certificatesigningrequests"],
    )
    rbac.create_cluster_role(
        kubernetes.client.V1ClusterRole(
            metadata=kubernetes.client.V1ObjectMeta(name="tester-csr"), rules=[rule]
        )
    )
    rbac.create_cluster_role_binding(
        kubernetes.client.V1ClusterRoleBinding(
            metadata=kubernetes.client.V1ObjectMeta(name="tester-csr"),
            role_ref=kubernetes.client.V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="tester-csr"
            ),
            subjects=[
                kubernetes.client.RbacV1Subject(
                    api_group="rbac.authorization.k8s.io", kind="User", name="tester-csr"
                )
            ],
        )
    )
    made = api.create_certificate_signing_request(body)
    made.status.conditions = [
        kubernetes.client.V1CertificateSigningRequestCondition(
            type="Approved", status="True", reason="E2E", message="Set from an e2e test"
        )
    ]
    api.replace_certificate_signing_request_approval(made.metadata.name, made)
    found: list[str] = []

    def signed() -> bool:
        csr = api.read_certificate_signing_request(made.metadata.name)
        found[:] = [csr.status.certificate or ""]
        return bool(found[0])

    eventually(signed)
    cert = x509.load_pem_x509_certificate(base64.b64decode(found[0]))
    assert cert.not_valid_after_utc - cert.not_valid_before_utc <= datetime.timedelta(
        hours=1, minutes=5
    )
    config = kubernetes.client.Configuration()
    config.host = upstream.url
    config.ssl_ca_cert = upstream.ca
    config.cert_file = _write(upstream, "tester.crt", base64.b64decode(found[0]))
    config.key_file = _write(upstream, "tester.key", key_pem)
    mine = kubernetes.client.CertificatesV1Api(kubernetes.client.ApiClient(config))
    body.metadata.generate_name = "tester-csr-again-"
    again = mine.create_certificate_signing_request(body)
    assert again.spec.username == "tester-csr"


def _write(server: Server, name: str, data: bytes) -> str:
    assert server.data_dir is not None
    path = server.data_dir / name
    path.write_bytes(data)
    return str(path)


def test_kubectl_certificate_approve_with_upstream_names(upstream: Server) -> None:
    _, request = key_and_request("dana")
    body = manifest("dana", request, KUBE_SIGNER, ["client auth"], "certificates.k8s.io")
    upstream.kubectl("create", "-f", "-", stdin=json.dumps(body))
    # By name, kubectl picks the branded group (listed first) and refuses it client-side;
    # from the manifest it takes kube's.
    out = upstream.kubectl("certificate", "approve", "-f", "-", stdin=json.dumps(body)).stdout
    assert out.strip() == "certificatesigningrequest.certificates.k8s.io/dana approved"
    admin = session_for(upstream, cert=upstream.admin_cert)
    issued(admin, f"{upstream.url}/apis/certificates.k8s.io/v1/certificatesigningrequests/dana")


@pytest.mark.parametrize("signer", ["kubernetes.io/kube-apiserver-client"])
def test_system_masters_refused_under_kubes_signer_name(upstream: Server, signer: str) -> None:
    _, request = key_and_request("mallory", ("system:masters",))
    body = manifest("mallory", request, signer, ["client auth"], "certificates.k8s.io")
    admin = session_for(upstream, cert=upstream.admin_cert)
    r = admin.post(
        f"{upstream.url}/apis/certificates.k8s.io/v1/certificatesigningrequests", json=body
    )
    assert r.status_code == 403
    status = r.json()
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        'certificatesigningrequests.certificates.k8s.io "mallory" is forbidden: use of '
        "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    )
    gone = admin.get(
        f"{upstream.url}/apis/certificates.k8s.io/v1/certificatesigningrequests/mallory"
    )
    assert gone.status_code == 404


@pytest.fixture(scope="module", params=["branded", "upstream"])
def nodes(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Server]:
    """A server taking bootstrap tokens; also one serving kube's names, where kubeadm's
    bindings name kube's roles and its kubelet kube's signer."""
    root = tmp_path_factory.mktemp("csr-nodes")
    flags = [
        "--enable-bootstrap-token-auth",
        "--authorization-mode=Node,RBAC",
        "--controllers=*,bootstrapsigner",
    ]
    if request.param == "upstream":
        flags.append("--serve-upstream-groups")
    server = start_server(root / "data", *flags)
    server.upstream = request.param == "upstream"  # type: ignore[attr-defined]
    yield server
    server.stop()


def test_kubelet_tls_bootstrap(nodes: Server, tmp_path: Path) -> None:
    """kubeadm's join, as the API sees it: the token's signature on cluster-info, read
    anonymously; the token asks for a node's client certificate; the approving controller
    approves it (the token's group is bound to the nodeclient role, as kubeadm binds it),
    the signer signs it, the node logs in.  Under upstream names, as kubeadm does it: the
    token in kube-system with kube's type, cluster-info in kube-public, kube's names."""
    admin = session_for(nodes, cert=nodes.admin_cert)
    upstream = nodes.upstream  # type: ignore[attr-defined]
    token_group = "system:bootstrappers:kubeadm:default-node-token"
    usages = {
        "usage-bootstrap-authentication": "true",
        "usage-bootstrap-signing": "true",
        "auth-extra-groups": token_group,
    }
    secret = bootstrap_secret("abcdef", "0123456789abcdef", **usages)
    system, public = (
        ("kube-system", "kube-public") if upstream else ("platform-system", "platform-public")
    )
    secret["metadata"]["namespace"] = system
    if upstream:
        secret["type"] = "bootstrap.kubernetes.io/token"
    assert admin.post(f"{nodes.url}/api/v1/namespaces/{system}/secrets", json=secret).ok
    anonymous = session_for(nodes)
    info = f"{nodes.url}/api/v1/namespaces/{public}/configmaps/cluster-info"
    eventually(lambda: "jws-kubeconfig-abcdef" in (anonymous.get(info).json().get("data") or {}))
    group = "certificates.k8s.io" if upstream else "certificates.platform.io"
    rbac = f"{nodes.url}/apis/rbac.authorization.platform.io/v1/clusterrolebindings"
    prefix = f"system:{group}:certificatesigningrequests:"
    for name, role in (
        ("kubeadm:kubelet-bootstrap", "system:node-bootstrapper"),
        ("kubeadm:node-autoapprove-bootstrap", prefix + "nodeclient"),
    ):
        body = {
            "metadata": {"name": name},
            "roleRef": {
                "apiGroup": "rbac.authorization.platform.io",
                "kind": "ClusterRole",
                "name": role,
            },
            "subjects": [
                {"apiGroup": "rbac.authorization.platform.io", "kind": "Group", "name": token_group}
            ],
        }
        assert admin.post(rbac, json=body).status_code == 201
    key_pem, request = key_and_request("system:node:n1", ("system:nodes",))
    token = session_for(nodes, token="abcdef.0123456789abcdef")
    spec = {
        "request": request,
        "signerName": ("kubernetes.io" if upstream else "platform.io")
        + "/kube-apiserver-client-kubelet",
        "usages": ["digital signature", "client auth"],
    }
    body = {"metadata": {"generateName": "node-csr-"}, "spec": spec}

    def created() -> bool:  # the bindings reach the authorizer moments after they are made
        r = token.post(nodes.url + BRANDED, json=body)
        found[:] = [r.json()["metadata"]["name"]] if r.status_code == 201 else []
        return bool(found)

    found: list[str] = []
    eventually(created)
    cert_b64 = issued(admin, f"{nodes.url}{BRANDED}/{found[0]}")
    csr = admin.get(f"{nodes.url}{BRANDED}/{found[0]}").json()
    assert csr["spec"]["username"] == "system:bootstrap:abcdef"
    (condition,) = csr["status"]["conditions"]
    assert (condition["type"], condition["reason"], condition["message"]) == (
        "Approved",
        "AutoApproved",
        "Auto approving kubelet client certificate after SubjectAccessReview.",
    )
    config = kubeconfig_for(nodes, cert_b64, key_pem, tmp_path / "node.kubeconfig")
    assert whoami(nodes, config) == {
        "username": "system:node:n1",
        "groups": ["system:nodes", "system:authenticated"],
    }
