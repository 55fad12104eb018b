"""Auditing end to end: a real server with a policy, a log file and a real webhook sink."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests

from platform_api.apiserver import pki
from tests.e2e.conftest import VENV_BIN, Server, session_for, start_server

pytestmark = pytest.mark.slow
POLICY = """apiVersion: audit.platform.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*"]
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: Request
  resources: [{group: "", resources: ["configmaps"]}]
  omitManagedFields: true
- level: RequestResponse
  resources: [{group: "", resources: ["pods"]}]
  omitStages: [RequestReceived]
- level: Metadata
"""
NS = "/api/v1/namespaces/default"
JSON_BODY = {"Content-Type": "application/json"}


class Setup:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = root / "audit" / "audit.log"
        self.sunk = root / "sink.jsonl"
        self.sink: subprocess.Popen[bytes] | None = None
        self.server: Server | None = None

    @classmethod
    def started(cls, root: Path, *flags: str) -> Setup:
        """A sink, then a server logging to a file and to the sink by POLICY."""
        setup = cls(root)
        setup.start_sink()
        policy = root / "policy.yaml"
        policy.write_text(POLICY)
        setup.server = start_server(
            root / "data",
            f"--audit-policy-file={policy}",
            f"--audit-log-path={setup.log}",
            f"--audit-webhook-config-file={root / 'sink.kubeconfig'}",
            "--audit-webhook-batch-max-wait=100ms",
            *flags,
        )
        return setup

    def start_sink(self) -> int:
        certs = pki.ensure_pki(str(self.root / "sink-pki"), "127.0.0.1")
        port_file = self.root / "sink.port"
        self.sink = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.auditsink", certs.serving_cert,
             certs.serving_key, str(self.sunk), str(port_file)],
            cwd=Path(__file__).parents[2],
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text()):
            assert time.monotonic() < deadline, "audit sink did not start"
            time.sleep(0.05)
        kubeconfig = self.root / "sink.kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sink\n  cluster:\n"
            f"    server: https://127.0.0.1:{port_file.read_text()}/audit\n"
            f"    certificate-authority: {certs.ca_cert}\n"
            "contexts:\n- name: sink\n  context: {cluster: sink, user: ''}\n"
            "current-context: sink\n"
        )
        return int(port_file.read_text())


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    setup = Setup(tmp_path_factory.mktemp("audit"))
    setup.start_sink()
    policy = setup.root / "policy.yaml"
    policy.write_text(POLICY)
    tokens = setup.root / "tokens.csv"
    tokens.write_text('tok-bob,bob,3,"dev"\n')
    setup.server = start_server(
        setup.root / "data",
        f"--audit-policy-file={policy}",
        f"--audit-log-path={setup.log}",
        f"--audit-webhook-config-file={setup.root / 'sink.kubeconfig'}",
        "--audit-webhook-batch-max-wait=100ms",
        "--authorization-mode=RBAC",
        f"--token-auth-file={tokens}",
    )
    yield setup
    setup.server.stop()
    if setup.sink is not None and setup.sink.poll() is None:
        setup.sink.kill()
        setup.sink.wait()


@pytest.fixture
def admin(audited: Setup) -> requests.Session:
    assert audited.server is not None
    return session_for(audited.server, cert=audited.server.admin_cert)


def events(path: Path, audit_id: str, count: int = 1, wait: float = 10.0) -> list[dict[str, Any]]:
    """The events of one request in ``path`` once at least ``count`` are there."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        if path.exists():
            found = [orjson.loads(line) for line in path.read_bytes().splitlines()]
            found = [e for e in found if e["auditID"] == audit_id]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def kept_secret(audited: Setup, admin: requests.Session) -> str:
    """A Secret the later tests read, whichever of them runs first (and on whichever
    xdist worker: each has its own module server)."""
    assert audited.server is not None
    body = {"metadata": {"name": "kept-secret"}, "data": {"k": "dg=="}}
    reply = admin.post(audited.server.url + f"{NS}/secrets", json=body)
    assert reply.status_code in (201, 409), reply.text
    return "kept-secret"


def test_metadata_event_for_a_secret_has_no_data(audited: Setup, admin: requests.Session) -> None:
    assert audited.server is not None
    body = {"metadata": {"name": "audited-secret"}, "data": {"password": "c2VjcmV0"}}
    reply = admin.post(audited.server.url + f"{NS}/secrets", json=body)
    assert reply.status_code == 201
    audit_id = reply.headers["Audit-Id"]
    received, complete = events(audited.log, audit_id, 2)
    assert received["stage"] == "RequestReceived" and complete["stage"] == "ResponseComplete"
    assert "responseStatus" not in received and "annotations" not in received
    assert complete["kind"] == "Event" and complete["apiVersion"] == "audit.platform.io/v1"
    assert complete["level"] == "Metadata"
    assert complete["verb"] == "create"
    assert complete["requestURI"] == f"{NS}/secrets"
    assert complete["user"] == {
        "username": "platform-admin",
        "groups": ["system:masters", "system:authenticated"],
    }
    assert complete["sourceIPs"] == ["127.0.0.1"]
    assert complete["userAgent"].startswith("python-requests/")
    assert complete["objectRef"] == {
        "resource": "secrets",
        "namespace": "default",
        "name": "audited-secret",
        "apiVersion": "v1",
    }
    assert complete["responseStatus"] == {"metadata": {}, "code": 201}
    assert complete["annotations"] == {  # system:masters: kube's privileged-group authorizer
        "authorization.platform.io/decision": "allow",
        "authorization.platform.io/reason": "",
    }
    assert "requestObject" not in complete and "responseObject" not in complete
    text = audited.log.read_text()
    assert "c2VjcmV0" not in text and "password" not in text
    assert list(complete)[:6] == ["kind", "apiVersion", "level", "auditID", "stage", "requestURI"]


def test_client_audit_id_and_failure_status(audited: Setup, admin: requests.Session) -> None:
    assert audited.server is not None
    reply = admin.get(audited.server.url + f"{NS}/secrets/missing", headers={"Audit-ID": "mine-1"})
    assert reply.status_code == 404 and reply.headers["Audit-Id"] == "mine-1"
    complete = events(audited.log, "mine-1", 2)[-1]
    assert complete["responseStatus"] == {
        "metadata": {},
        "status": "Failure",
        "message": 'secrets "missing" not found',
        "reason": "NotFound",
        "details": {"name": "missing", "kind": "secrets"},
        "code": 404,
    }


def test_forbidden_request_is_annotated(audited: Setup) -> None:
    assert audited.server is not None
    bob = session_for(audited.server, token="tok-bob")
    reply = bob.get(audited.server.url + f"{NS}/pods")
    assert reply.status_code == 403
    complete = events(audited.log, reply.headers["Audit-Id"], 1)[-1]
    assert complete["user"] == {
        "username": "bob",
        "uid": "3",
        "groups": ["dev", "system:authenticated"],
    }
    assert complete["responseStatus"]["code"] == 403
    assert complete["responseStatus"]["reason"] == "Forbidden"
    assert complete["annotations"] == {
        "authorization.platform.io/decision": "forbid",
        "authorization.platform.io/reason": "",
    }


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


def test_impersonation_is_recorded(audited: Setup, admin: requests.Session) -> None:
    assert audited.server is not None
    reply = admin.get(
        audited.server.url + "/api/v1/nodes",
        headers={"Impersonate-User": "jane", "Impersonate-Group": "ops"},
    )
    complete = events(audited.log, reply.headers["Audit-Id"], 2)[-1]
    assert complete["user"]["username"] == "platform-admin"
    assert complete["impersonatedUser"] == {
        "username": "jane",
        "groups": ["ops", "system:authenticated"],
    }
    assert complete["objectRef"] == {"resource": "nodes", "apiVersion": "v1"}
    assert complete["verb"] == "list"


def test_watch_has_a_response_started_stage(audited: Setup, admin: requests.Session) -> None:
    assert audited.server is not None
    reply = admin.get(
        audited.server.url + f"{NS}/secrets?watch=1&timeoutSeconds=1", stream=True, timeout=10
    )
    audit_id = reply.headers["Audit-Id"]
    for _ in reply.iter_content(chunk_size=None):
        pass
    found = events(audited.log, audit_id, 3)
    assert [e["stage"] for e in found] == ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    assert found[1]["responseStatus"] == {"metadata": {}, "code": 200}
    assert found[2]["verb"] == "watch"


def test_non_resource_request_and_kubectl(audited: Setup, admin: requests.Session) -> None:
    assert audited.server is not None
    reply = admin.get(audited.server.url + "/version")
    complete = events(audited.log, reply.headers["Audit-Id"], 2)[-1]
    assert complete["verb"] == "get" and "objectRef" not in complete
    assert complete["requestURI"] == "/version"
    name = kept_secret(audited, admin)
    out = subprocess.run(
        [str(VENV_BIN / "kubectl"), "--kubeconfig", str(audited.server.kubeconfig),
         "get", "secrets", "-n", "default", "-o", "name"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert f"secret/{name}" in out.stdout
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = [orjson.loads(line) for line in audited.log.read_bytes().splitlines()]
        kubectl = [e for e in lines if e.get("userAgent", "").startswith("kubectl")]
        if any(e["stage"] == "ResponseComplete" and e["verb"] == "list" for e in kubectl):
            break
        time.sleep(0.05)
    else:
        pytest.fail("no kubectl list event")


def test_webhook_sink_receives_events_and_a_dead_sink_blocks_nothing(
    audited: Setup, admin: requests.Session
) -> None:
    assert audited.server is not None and audited.sink is not None
    name = kept_secret(audited, admin)
    reply = admin.get(audited.server.url + f"{NS}/secrets/{name}")
    assert reply.status_code == 200
    sunk = events(audited.sunk, reply.headers["Audit-Id"], 2)
    assert [e["stage"] for e in sunk] == ["RequestReceived", "ResponseComplete"]
    assert {e.pop("listApiVersion") for e in sunk} == {"audit.platform.io/v1"}
    assert sunk[1] == events(audited.log, reply.headers["Audit-Id"], 2)[1]
    audited.sink.kill()
    audited.sink.wait()
    started = time.monotonic()
    for i in range(20):
        reply = admin.get(audited.server.url + f"{NS}/secrets/{name}")
        assert reply.status_code == 200, i
    assert time.monotonic() - started < 5
    assert events(audited.log, reply.headers["Audit-Id"], 2)  # the log still gets them
    metrics = admin.get(audited.server.url + "/metrics").text
    assert "apiserver_audit_event_total" in metrics


def test_invalid_policy_stops_the_start(tmp_path: Path) -> None:
    policy = tmp_path / "bad.yaml"
    policy.write_text("apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n- level: Loud\n")
    with pytest.raises(RuntimeError) as err:
        start_server(tmp_path / "data", f"--audit-policy-file={policy}", timeout=15)
    assert (
        'Error: loading audit policy file: rules[0].level: Unsupported value: "Loud": '
        'supported values: "None", "Metadata", "Request", "RequestResponse": '
        f"from file {policy}"
    ) in str(err.value)


def test_failed_authentication_is_one_response_started_event(audited: Setup) -> None:
    assert audited.server is not None
    stranger = session_for(audited.server, token="no-such-token")
    reply = stranger.get(audited.server.url + f"{NS}/configmaps")
    assert reply.status_code == 401
    found = events(audited.log, reply.headers["Audit-Id"], 1)
    time.sleep(0.2)
    found = events(audited.log, reply.headers["Audit-Id"], 1)
    assert len(found) == 1
    event = found[0]
    assert event["stage"] == "ResponseStarted"
    assert event["level"] == "Request"
    assert event["user"] == {}
    assert event["verb"] == "list"
    assert event["objectRef"] == {
        "resource": "configmaps",
        "namespace": "default",
        "apiVersion": "v1",
    }
    assert event["responseStatus"] == {
        "metadata": {},
        "message": "Authentication failed, attempted: bearer",
        "code": 401,
    }


def test_upstream_names_write_kubes_audit_group(tmp_path: Path) -> None:
    """Under --serve-upstream-groups the log and the webhook get audit.k8s.io/v1 Events
    and EventLists, as from kube (what audit consumers decode)."""
    setup = Setup.started(tmp_path, "--serve-upstream-groups")
    try:
        admin = session_for(setup.server, cert=setup.server.admin_cert)
        reply = admin.get(setup.server.url + "/api/v1/namespaces/default/configmaps")
        logged = events(setup.log, reply.headers["Audit-Id"], 2)
        assert {e["apiVersion"] for e in logged} == {"audit.k8s.io/v1"}
        sunk = events(setup.sunk, reply.headers["Audit-Id"], 2)
        assert {(e["apiVersion"], e["listApiVersion"]) for e in sunk} == {
            ("audit.k8s.io/v1", "audit.k8s.io/v1")
        }
    finally:
        setup.server.stop()
        assert setup.sink is not None
        setup.sink.kill()
        setup.sink.wait()


def test_truncated_events_and_compressed_backups(tmp_path: Path) -> None:
    """kube's truncate plugin on both backends, and a rotated log gzipped beside it."""
    setup = Setup.started(
        tmp_path,
        "--audit-log-maxsize=1",
        "--audit-log-maxbackup=1",
        "--audit-log-compress",
        "--audit-log-truncate-enabled",
        "--audit-log-truncate-max-event-size=20000",
        "--audit-webhook-truncate-enabled=true",
        "--audit-webhook-truncate-max-event-size=20000",
        "--audit-webhook-truncate-max-batch-size=20000",
    )
    try:
        admin = session_for(setup.server, cert=setup.server.admin_cert)
        url = setup.server.url + f"{NS}/pods"

        def create(name: str, size: int) -> str:
            pod = {
                "metadata": {"name": name, "annotations": {"pad": "x" * size}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            }
            reply = admin.post(url, json=pod)
            assert reply.status_code == 201, reply.text
            return str(reply.headers["Audit-Id"])

        small, large = create("small", 2000), create("large", 30000)
        for path in (setup.log, setup.sunk):
            whole = events(path, small)[0]
            assert whole["requestObject"]["metadata"]["name"] == "small"
            assert "audit.k8s.io/truncated" not in whole.get("annotations", {})
            cut = events(path, large)[0]
            assert "requestObject" not in cut and "responseObject" not in cut
            assert cut["annotations"]["audit.k8s.io/truncated"] == "true"
            assert cut["objectRef"]["name"] == "large" and cut["responseStatus"]["code"] == 201
        for i in range(70):  # ~1.2 MB of 17 kB events: the log rotates past 1 MB
            create(f"fill-{i}", 8000)
        deadline = time.monotonic() + 20
        while not (backups := sorted(tmp_path.glob("audit/audit-*.log.gz"))):
            assert time.monotonic() < deadline, sorted(p.name for p in tmp_path.glob("audit/*"))
            time.sleep(0.1)
        lines = gzip.decompress(backups[0].read_bytes()).splitlines()
        assert small in [orjson.loads(line)["auditID"] for line in lines]
        assert (backups[0].stat().st_mode & 0o777) == 0o600
        assert not list(tmp_path.glob("audit/audit-*.log"))  # the plain copy is gone
    finally:
        setup.server.stop()
        if setup.sink is not None:
            setup.sink.kill()
            setup.sink.wait()


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
        for event in (orjson.loads(line) for line in audited.log.read_bytes().splitlines())
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
    return [_completed(audited.log, i) for i in dict.fromkeys(ids)]


def _completed(path: Path, audit_id: str, wait: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + wait
    while True:
        done = [e for e in events(path, audit_id, 0) if e["stage"] == "ResponseComplete"]
        if done or time.monotonic() > deadline:
            assert done, audit_id
            return done[0]
        time.sleep(0.05)


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
    pods = _completed(audited.log, listed.headers["Audit-Id"])["responseObject"]
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
        logged: list[dict[str, Any]] = []
        deadline = time.monotonic() + 10
        while len(logged) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            lines = log.read_bytes().splitlines() if log.exists() else []
            logged = [orjson.loads(line) for line in lines]
        role, token = (e for e in logged if e["verb"] == "create")
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
