"""Auditing end to end: a real server with a policy, a log file and a real webhook sink
(what each stage and level records; the bodies events hold: test_audit_objects.py)."""

from __future__ import annotations

import gzip
import subprocess
import time
from pathlib import Path

import orjson
import pytest
import requests

from tests.e2e.auditing import NS, Setup, events, logged
from tests.e2e.conftest import VENV_BIN, session_for, start_server

pytestmark = pytest.mark.slow


@pytest.fixture
def admin(audited: Setup) -> requests.Session:
    """The audited server's admin (in place of the shared server's)."""
    assert audited.server is not None
    return session_for(audited.server, cert=audited.server.admin_cert)


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
        lines = logged(audited.log)
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
        setup.stop()


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
        setup.stop()
