"""Admission of CONNECT requests (exec, attach, port-forward, the proxies): policies and
webhooks see the request's options as the object, before the target is looked up, and
their refusals are what the client gets; each answer as kube-apiserver v1.36 gave it to
the same requests (reference build, same policy)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from platform_api.apiserver import pki
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import eventually
from tests.e2e.test_admission_webhooks import ca_bundle, install
from tests.e2e.test_authz_webhook import stop_webhook
from tests.e2e.test_token_webhook import start_sample

API = "/apis/admissionregistration.platform.io/v1"
# Prints what it was given, as it printed it on the reference.
SHOWN = (
    '"path=" + object.?path.orValue("-") + " ports=" + object.?ports.orValue([])'
    '.map(p, string(p)).join(",") + " cmd=" + object.?command.orValue([]).join("|")'
    ' + " stdin=" + string(object.?stdin.orValue(false))'
    ' + " tty=" + string(object.?tty.orValue(false))'
)
DENIED = "ValidatingAdmissionPolicy 'no-connect' with binding 'no-connect' denied request: "


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of this module's own: its policy refuses every CONNECT."""
    running = start_server(tmp_path_factory.mktemp("connect-admission"))
    yield running
    running.stop()


def _policy(admin: requests.Session, server: Server) -> None:
    resources = ["pods/exec", "pods/attach", "pods/portforward", "pods/proxy"]
    policy = {
        "metadata": {"name": "no-connect"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CONNECT"],
                        "resources": [*resources, "services/proxy", "nodes/proxy"],
                    }
                ]
            },
            "validations": [{"expression": "false", "messageExpression": SHOWN}],
        },
    }
    binding = {
        "metadata": {"name": "no-connect"},
        "spec": {"policyName": "no-connect", "validationActions": ["Deny"]},
    }
    for plural, body in (
        ("validatingadmissionpolicies", policy),
        ("validatingadmissionpolicybindings", binding),
    ):
        r = admin.post(f"{server.url}{API}/{plural}", json=body)
        assert r.status_code == 201, r.text


def _denial(name: str, kind: str, shown: str) -> dict:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{kind} "{name}" is forbidden: {DENIED}{shown}',
        "reason": "Invalid",
        "details": {"name": name, "kind": kind, "causes": [{"message": DENIED + shown}]},
        "code": 422,
    }


def test_a_policy_sees_each_connects_options_and_refuses_it(own: Server) -> None:
    admin = session_for(own, cert=own.admin_cert)
    pods = own.url + "/api/v1/namespaces/default/pods"
    pod = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "web", "image": "i"}]}}
    assert admin.post(pods, json=pod).status_code == 201
    _policy(admin, own)
    exec_ = f"{pods}/web/exec?command=ls&command=-l&stdin=1&tty=T"
    eventually(lambda: admin.post(exec_).status_code == 422)
    shown = "path=- ports= cmd=ls|-l stdin=true tty=true"
    r = admin.post(exec_)
    assert (r.status_code, r.json()) == (422, _denial("web", "pods", shown))
    cases = [
        ("web/exec", "failed expression: false"),  # its command is null: join fails
        ("web/attach?stdin=maybe&tty=", "path=- ports= cmd= stdin=true tty=true"),
        (
            "web/portforward?ports=80,443&ports=8080",
            "path=- ports=80,443,8080 cmd= stdin=false tty=false",
        ),
        ("web/proxy/x/y/?path=/q", "path=/x/y/ ports= cmd= stdin=false tty=false"),
        ("web/proxy?path=/q", "path=- ports= cmd= stdin=false tty=false"),
        ("absent/exec?command=a", "path=- ports= cmd=a stdin=false tty=false"),  # before lookup
    ]
    for path, shown in cases:
        r = admin.get(f"{pods}/{path}")
        name = path.split("/")[0]
        assert (r.status_code, r.json()) == (422, _denial(name, "pods", shown)), path
    r = admin.get(f"{pods}/web:8080/proxy/")
    assert (
        r.json()["message"]
        == f'pods "web:8080" is forbidden: {DENIED}path=/ ports= cmd= stdin=false tty=false'
    )
    r = admin.get(own.url + "/api/v1/namespaces/default/services/none/proxy/a")
    assert r.json() == _denial("none", "services", "path=/a ports= cmd= stdin=false tty=false")
    r = admin.get(own.url + "/api/v1/nodes/none/proxy/b/c")
    assert r.json() == _denial("none", "nodes", "path=/b/c ports= cmd= stdin=false tty=false")
    # A port that does not convert is refused before admission, as kube's codec refuses it.
    r = admin.post(f"{pods}/web/portforward?ports=70000")
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        400,
        "BadRequest",
        'cannot convert to []int32: strconv.ParseUint: parsing "70000": value out of range',
    )
    shown_ls = "path=- ports= cmd=ls stdin=false tty=false"
    failed = own.kubectl("exec", "web", "--", "ls", check=False)
    assert failed.returncode == 1
    assert failed.stderr.strip() == (
        f'error: unable to upgrade connection: pods "web" is forbidden: {DENIED}{shown_ls}'
    )
    metrics = admin.get(own.url + "/metrics").text
    assert (
        'apiserver_admission_step_admission_duration_seconds_count{operation="CONNECT",'
        'rejected="true",type="validate"}'
    ) in metrics
    # Without the binding the CONNECT goes on to the lookup, as before.
    r = admin.delete(f"{own.url}{API}/validatingadmissionpolicybindings/no-connect")
    assert r.status_code == 200
    eventually(lambda: admin.post(exec_).status_code == 400)
    assert admin.post(exec_).json()["message"] == "pod web does not have a host assigned"


@pytest.fixture(scope="module")
def refuses_exec(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[pki.Paths, int]]:
    """The sample webhook, with a rule that every PodExecOptions lacks."""
    root = tmp_path_factory.mktemp("connect-hook")
    certs = pki.ensure_pki(str(root / "pki"), "127.0.0.1")
    rules = root / "rules.yaml"
    rules.write_text(
        "rules:\n- kinds: [PodExecOptions]\n  requireLabels: [never]\n"
        "  message: exec is not allowed here\n"
    )
    hook, port = start_sample(
        root, certs, "platform-admission-webhook", "--rules-file", str(rules), client_ca=False
    )
    yield certs, port
    stop_webhook(hook)


def test_a_webhook_process_refuses_exec_but_not_attach(
    tmp_path: Path, refuses_exec: tuple[pki.Paths, int]
) -> None:
    certs, port = refuses_exec
    server = start_server(tmp_path / "data")
    try:
        admin = session_for(server, cert=server.admin_cert)
        pods = server.url + "/api/v1/namespaces/default/pods"
        pod = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
        assert admin.post(pods, json=pod).status_code == 201
        hook = {
            "name": "no-exec.example.com",
            "clientConfig": {
                "url": f"https://127.0.0.1:{port}/validate",
                "caBundle": ca_bundle(certs),
            },
            "rules": [
                {
                    "operations": ["CONNECT"],
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "resources": ["pods/exec"],
                }
            ],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }
        install(admin, server, "ValidatingWebhookConfiguration", "no-exec", [hook])
        exec_ = f"{pods}/web/exec?command=ls"
        eventually(lambda: admin.post(exec_).status_code == 403)
        r = admin.post(exec_)
        assert r.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'admission webhook "no-exec.example.com" denied the request: '
            "exec is not allowed here",
            "code": 403,
        }
        attach = admin.post(f"{pods}/web/attach")
        assert (attach.status_code, attach.json()["message"]) == (
            400,
            "pod web does not have a host assigned",
        )
    finally:
        server.stop()
