"""``twistd platform-controller-manager`` against a real server that runs no controllers."""

from __future__ import annotations

import base64
import datetime
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography import x509

from tests.e2e.conftest import VENV_BIN, Server, session_for, start_server
from tests.e2e.test_csr_signing import key_and_request

LEASE = "/apis/coordination.platform.io/v1/namespaces/platform-system/leases/platform-controller-manager"
# Short leases keep the takeover test quick; the defaults (15s/10s/2s) behave alike.
ELECTION = (
    "--leader-elect-lease-duration=4s",
    "--leader-elect-renew-deadline=3s",
    "--leader-elect-retry-period=1s",
)
DURATION = 4.0
SIGNER = "platform.io/kube-apiserver-client"


class Manager:
    def __init__(self, server: Server, workdir: Path, *args: str) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.log = workdir / f"manager-{time.time_ns()}.log"
        self.process = subprocess.Popen(
            [
                str(VENV_BIN / "twistd"),
                "--pidfile=",
                "-n",
                "--logfile",
                str(self.log),
                "platform-controller-manager",
                "--kubeconfig",
                str(server.kubeconfig),
                "--secure-port=0",
                *ELECTION,
                *args,
            ],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    @property
    def leading(self) -> bool:
        return (
            '"Successfully acquired lease" lock="platform-system/platform-controller-manager"'
            in (self.text())
        )

    @property
    def started(self) -> bool:
        return '"Started controllers"' in self.text()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def wait_for(check: Callable[[], Any], timeout: float = 20.0, step: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {check}")


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server running no controllers: the manager's work is visible, or nothing is."""
    running = start_server(tmp_path_factory.mktemp("bare"), "--controllers=")
    yield running
    running.stop()


@pytest.fixture
def api(bare: Server) -> requests.Session:
    return session_for(bare, cert=bare.admin_cert)


@pytest.fixture
def managers(bare: Server, tmp_path: Path) -> Iterator[Callable[..., Manager]]:
    started: list[Manager] = []

    def start(*args: str) -> Manager:
        manager = Manager(bare, tmp_path / f"m{len(started)}", *args)
        started.append(manager)
        return manager

    yield start
    for manager in started:
        manager.stop()


def lease(api: requests.Session, server: Server) -> dict[str, Any]:
    r = api.get(server.url + LEASE)
    return r.json()["spec"] if r.status_code == 200 else {}


def has_default_account(api: requests.Session, server: Server, namespace: str) -> bool:
    r = api.get(f"{server.url}/api/v1/namespaces/{namespace}/serviceaccounts/default")
    return r.status_code == 200


def create_namespace(api: requests.Session, server: Server, name: str) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert api.post(server.url + "/api/v1/namespaces", json=body).status_code == 201


def test_server_runs_the_controllers_itself_by_default(
    admin: requests.Session, server: Server
) -> None:
    create_namespace(admin, server, "in-process")
    wait_for(lambda: has_default_account(admin, server, "in-process"), timeout=10)


def test_server_without_controllers_makes_no_service_account(
    api: requests.Session, bare: Server
) -> None:
    create_namespace(api, bare, "no-manager")
    time.sleep(1.0)
    assert not has_default_account(api, bare, "no-manager")


def test_manager_signs_with_the_cluster_signing_flags(
    api: requests.Session, bare: Server, managers: Callable[..., Manager]
) -> None:
    """The signer in the manager's home: CA files by kube's flags, the certificate written
    through the API's /status (where CertificateSigning checks the ``sign`` verb)."""
    pki = bare.data_dir / "pki"  # type: ignore[operator]
    manager = managers(
        f"--cluster-signing-cert-file={pki / 'ca.crt'}",
        f"--cluster-signing-key-file={pki / 'ca.key'}",
        "--cluster-signing-duration=2h",
    )
    wait_for(lambda: manager.started, timeout=DURATION + 20)
    _, request = key_and_request("erin")
    csrs = bare.url + "/apis/certificates.platform.io/v1/certificatesigningrequests"
    spec = {"request": request, "signerName": SIGNER, "usages": ["client auth"]}
    body = {"metadata": {"name": "erin"}, "spec": spec}
    assert api.post(csrs, json=body).status_code == 201
    approved = api.get(csrs + "/erin").json()
    approved["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "T"}]}
    assert api.put(csrs + "/erin/approval", json=approved).status_code == 200
    wait_for(lambda: api.get(csrs + "/erin").json()["status"].get("certificate"), timeout=10)
    data = base64.b64decode(api.get(csrs + "/erin").json()["status"]["certificate"])
    cert = x509.load_pem_x509_certificate(data)
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(
        hours=2, minutes=5
    )
    # A kubelet's client request is approved here too, after a SubjectAccessReview the
    # manager asks of the server (its requester, the admin, may create .../nodeclient).
    _, node_request = key_and_request("system:node:n9", ("system:nodes",))
    spec = {
        "request": node_request,
        "signerName": "platform.io/kube-apiserver-client-kubelet",
        "usages": ["digital signature", "client auth"],
    }
    assert api.post(csrs, json={"metadata": {"name": "n9"}, "spec": spec}).status_code == 201
    wait_for(lambda: api.get(csrs + "/n9").json()["status"].get("certificate"), timeout=10)
    (condition,) = api.get(csrs + "/n9").json()["status"]["conditions"]
    assert (condition["type"], condition["reason"]) == ("Approved", "AutoApproved")


def test_manager_runs_the_endpoint_controllers(
    api: requests.Session, bare: Server, managers: Callable[..., Manager]
) -> None:
    """Through the API and informers: a selector Service's Endpoints and EndpointSlice, and
    a hand-made Endpoints mirrored."""
    manager = managers()
    wait_for(lambda: manager.started, timeout=DURATION + 20)
    create_namespace(api, bare, "cm-endpoints")
    core = bare.url + "/api/v1/namespaces/cm-endpoints"
    ports = [{"name": "http", "port": 80}]
    for name, selector in (("web", {"app": "web"}), ("db", None)):
        spec: dict[str, Any] = {"ports": ports}
        if selector is not None:
            spec["selector"] = selector
        body = {"metadata": {"name": name}, "spec": spec}
        assert api.post(core + "/services", json=body).status_code == 201
    endpoints = {
        "metadata": {"name": "db"},
        "subsets": [{"addresses": [{"ip": "192.0.2.1"}], "ports": [{"name": "http", "port": 80}]}],
    }
    assert api.post(core + "/endpoints", json=endpoints).status_code == 201
    wait_for(lambda: api.get(core + "/endpoints/web").status_code == 200, timeout=10)
    slices = bare.url + "/apis/discovery.platform.io/v1/namespaces/cm-endpoints/endpointslices"

    def managers_of() -> set[str]:
        items = api.get(slices).json()["items"]
        return {i["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] for i in items}

    wait_for(
        lambda: (
            managers_of()
            == {"endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io"}
        ),
        timeout=10,
    )


def test_manager_runs_the_workload_controllers(
    api: requests.Session, bare: Server, managers: Callable[..., Manager]
) -> None:
    """A Deployment's ReplicaSet and pods, made by the manager over the API."""
    manager = managers()
    wait_for(lambda: manager.started, timeout=DURATION + 20)
    create_namespace(api, bare, "cm-workloads")
    apps = bare.url + "/apis/apps/v1/namespaces/cm-workloads"
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    spec = {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template}
    body = {"metadata": {"name": "web"}, "spec": spec}
    assert api.post(apps + "/deployments", json=body).status_code == 201
    pods = bare.url + "/api/v1/namespaces/cm-workloads/pods"
    wait_for(lambda: len(api.get(pods).json()["items"]) == 2, timeout=20)
    (rs,) = api.get(apps + "/replicasets").json()["items"]
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    # A StatefulSet's first pod and a Job's pod, with their identities and finalizer.
    sts = {"metadata": {"name": "db"}, "spec": {**spec, "replicas": 1, "serviceName": "db"}}
    assert api.post(apps + "/statefulsets", json=sts).status_code == 201
    job = {
        "metadata": {"name": "once"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            }
        },
    }
    batch = bare.url + "/apis/batch/v1/namespaces/cm-workloads/jobs"
    assert api.post(batch, json=job).status_code == 201

    def names() -> set[str]:
        return {p["metadata"]["name"] for p in api.get(pods).json()["items"]}

    wait_for(lambda: "db-0" in names() and any(n.startswith("once-") for n in names()), timeout=20)
    made = {p["metadata"]["name"]: p for p in api.get(pods).json()["items"]}
    assert made["db-0"]["spec"]["hostname"] == "db-0"
    (once,) = [p for n, p in made.items() if n.startswith("once-")]
    assert once["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]


@pytest.mark.slow
def test_manager_runs_serviceaccount_and_gc(
    api: requests.Session, bare: Server, managers: Callable[..., Manager]
) -> None:
    create_namespace(api, bare, "before-manager")
    manager = managers()
    wait_for(lambda: manager.started, timeout=DURATION + 20)
    create_namespace(api, bare, "cm-one")
    wait_for(lambda: has_default_account(api, bare, "cm-one"), timeout=10)
    # the namespace made before the manager started has its account too (start-up resync)
    assert has_default_account(api, bare, "before-manager")

    base = bare.url + "/api/v1/namespaces/cm-one/configmaps"
    owner = api.post(base, json={"metadata": {"name": "owner"}}).json()
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    dependent = {"metadata": {"name": "dependent", "ownerReferences": [ref]}}
    assert api.post(base, json=dependent).status_code == 201
    assert api.delete(base + "/owner").status_code == 200
    wait_for(lambda: api.get(base + "/dependent").status_code == 404, timeout=10)

    # the namespace controller empties a deleted namespace over HTTP, then lets it go
    assert api.delete(bare.url + "/api/v1/namespaces/cm-one").status_code == 200
    wait_for(lambda: api.get(bare.url + "/api/v1/namespaces/cm-one").status_code == 404, 20)

    spec = lease(api, bare)
    assert spec["leaseDurationSeconds"] == 4
    assert spec["holderIdentity"].count("_") >= 1


def test_manager_fills_token_secrets_with_the_servers_signing_key(
    api: requests.Session, bare: Server, managers: Callable[..., Manager]
) -> None:
    """kube-controller-manager's --service-account-private-key-file and --root-ca-file: the
    token it signs authenticates at the server that verifies with the same key."""
    assert bare.data_dir is not None
    pki = bare.data_dir / "pki"
    manager = managers(
        f"--service-account-private-key-file={pki / 'sa.key'}", f"--root-ca-file={pki / 'ca.crt'}"
    )
    wait_for(lambda: manager.started, timeout=DURATION + 20)
    create_namespace(api, bare, "cm-tokens")
    base = bare.url + "/api/v1/namespaces/cm-tokens"
    assert api.post(base + "/serviceaccounts", json={"metadata": {"name": "robot"}}).ok
    secret = {
        "metadata": {
            "name": "robot-token",
            "annotations": {"platform.io/service-account.name": "robot"},
        },
        "type": "platform.io/service-account-token",
    }
    assert api.post(base + "/secrets", json=secret).status_code == 201

    def filled() -> dict[str, str] | None:
        data = api.get(base + "/secrets/robot-token").json().get("data") or {}
        return data if "token" in data else None

    data = wait_for(filled, timeout=10)
    assert base64.b64decode(data["ca.crt"]) == (pki / "ca.crt").read_bytes()
    token = base64.b64decode(data["token"]).decode()
    robot = session_for(bare, token=token)
    assert robot.get(base + "/serviceaccounts/robot").status_code == 200


@pytest.mark.slow
def test_two_managers_one_leader_then_takeover_after_sigkill(
    api: requests.Session, bare: Server, managers: Callable[..., Manager]
) -> None:
    first, second = managers(), managers()
    leader = wait_for(
        lambda: next((m for m in (first, second) if m.started), None), timeout=DURATION + 20
    )
    follower = second if leader is first else first
    time.sleep(2 * DURATION)  # the follower keeps trying, and keeps failing
    assert not follower.leading
    before = lease(api, bare)
    transitions = before["leaseTransitions"]

    leader.process.send_signal(signal.SIGKILL)
    leader.process.wait()
    killed = time.monotonic()
    after = wait_for(
        lambda: (s := lease(api, bare)).get("holderIdentity") != before["holderIdentity"] and s,
        timeout=3 * DURATION,
    )
    takeover = time.monotonic() - killed
    print(f"takeover after SIGKILL: {takeover:.2f}s (lease duration {DURATION}s)")
    # The follower sees the last renewal (made before the kill) on its next try, up to
    # one jittered retry (1.0 s x 2.2) later; the lease runs out DURATION after that, and
    # the try after takes it: two retries at most, and a second for the polling here.
    assert takeover <= DURATION + 2 * (1.0 * 2.2) + 1.0
    assert after["leaseTransitions"] == transitions + 1
    assert after["acquireTime"] == after["renewTime"] or after["acquireTime"] > before["renewTime"]
    wait_for(lambda: follower.started, timeout=20)
    create_namespace(api, bare, "cm-after-takeover")
    wait_for(lambda: has_default_account(api, bare, "cm-after-takeover"), timeout=10)
