"""Admission webhooks against real webhook processes: the sample service, one that is
down, one that never answers, one that answers garbage; with kubectl and dry run."""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from platform_api.apiserver import pki
from tests.e2e.answers import internal_error
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import eventually
from tests.e2e.hookserver import ReviewHandler, serving
from tests.e2e.test_authz_webhook import stop_webhook
from tests.e2e.test_token_webhook import start_sample

ROOT = Path(__file__).parents[2]
API = "/apis/admissionregistration.platform.io/v1"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[pki.Paths, int]]:
    root = tmp_path_factory.mktemp("admission-hook")
    certs = pki.ensure_pki(str(root / "pki"), "127.0.0.1")
    rules = str(ROOT / "etc" / "admission-webhook.yaml")
    hook, port = start_sample(
        root, certs, "platform-admission-webhook", "--rules-file", rules, client_ca=False
    )
    yield certs, port
    stop_webhook(hook)


def ca_bundle(certs: pki.Paths) -> str:
    return base64.b64encode(Path(certs.ca_cert).read_bytes()).decode()


def labelled_namespace(admin: requests.Session, server: Server, name: str) -> str:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    ns["metadata"]["labels"] = {"admission": name}
    r = admin.post(f"{server.url}/api/v1/namespaces", json=ns)
    assert r.status_code == 201, r.text
    return name


def configmap(name: str, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def webhook(name: str, ns: str, config: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "clientConfig": config,
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
        "namespaceSelector": {"matchLabels": {"admission": ns}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


def install(admin: requests.Session, server: Server, kind: str, name: str, hooks: list) -> str:
    plural = kind.lower() + "s"
    body = {"apiVersion": API[6:], "kind": kind, "metadata": {"name": name}, "webhooks": hooks}
    r = admin.post(f"{server.url}{API}/{plural}", json=body)
    assert r.status_code == 201, r.text
    return f"{server.url}{API}/{plural}/{name}"


def active(admin: requests.Session, url: str, expected: int) -> None:
    """Wait until the server's webhook list has caught up (an informer, as kube's)."""
    eventually(lambda: admin.post(url, json=configmap("probe-x")).status_code == expected)


def test_sample_webhook_validates_and_mutates(
    server: Server, admin: requests.Session, sample: tuple[pki.Paths, int]
) -> None:
    certs, port = sample
    ns = labelled_namespace(admin, server, "adm-sample")
    manifests = (ROOT / "etc" / "admission-webhooks.yaml").read_text()
    manifests = manifests.replace("CA_BUNDLE", ca_bundle(certs)).replace("9444", str(port))
    manifests = manifests.replace("admission: sample", f"admission: {ns}")
    urls = []
    for doc in yaml.safe_load_all(manifests):
        urls.append(install(admin, server, doc["kind"], doc["metadata"]["name"], doc["webhooks"]))
    cms = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
    active(admin, cms, 403)

    r = admin.post(cms, json=configmap("plain"))
    assert r.status_code == 403
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'admission webhook "team-label.sample.platform.io" denied the request: '
        "every ConfigMap needs a team label",
        "code": 403,
    }
    r = admin.post(cms, json=configmap("good", team="a"))
    assert r.status_code == 201, r.text
    assert r.json()["metadata"]["labels"] == {"team": "a", "owner": "nobody"}
    assert r.headers["Warning"] == (
        '299 - "platform-admission-webhook added /metadata/labels/owner"'
    )
    # The creator owns what it sent; the webhook's label is nobody's, as kube records it
    # (the field manager runs before mutating admission).
    [entry] = r.json()["metadata"]["managedFields"]
    assert entry["fieldsV1"] == {
        "f:data": {".": {}, "f:k": {}},
        "f:metadata": {"f:labels": {".": {}, "f:team": {}}},
    }
    # Dry run reaches webhooks without side effects, and changes nothing.
    r = admin.post(cms + "?dryRun=All", json=configmap("dry"))
    assert r.status_code == 403
    assert admin.get(cms + "/dry").status_code == 404
    # Updates are admitted too, inside the retry loop.
    r = admin.patch(cms + "/good", json={"metadata": {"labels": {"team": None}}}, headers=MERGE)
    assert r.status_code == 403
    assert "every ConfigMap needs a team label" in r.json()["message"]
    r = admin.patch(cms + "/good", json={"metadata": {"labels": {"owner": None}}}, headers=MERGE)
    assert r.status_code == 200
    assert r.json()["metadata"]["labels"] == {"team": "a", "owner": "nobody"}
    # Other namespaces are not selected.
    other = f"{server.url}/api/v1/namespaces/default/configmaps"
    assert admin.post(other, json=configmap("adm-unlabelled")).status_code == 201
    assert admin.delete(other + "/adm-unlabelled").status_code == 200
    for url in urls:
        assert admin.delete(url).status_code == 200
    eventually(lambda: admin.post(cms, json=configmap("after")).status_code == 201)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_failure_policy_fail_and_ignore(server: Server, admin: requests.Session) -> None:
    ns = labelled_namespace(admin, server, "adm-down")
    port = closed_port()
    url = f"https://127.0.0.1:{port}/validate"
    config = install(
        admin,
        server,
        "ValidatingWebhookConfiguration",
        "adm-down",
        [webhook("down.example.com", ns, {"url": url})],
    )
    cms = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
    active(admin, cms, 500)
    r = admin.post(cms, json=configmap("a"))
    cause = (
        'failed calling webhook "down.example.com": failed to call webhook: '
        f'Post "{url}?timeout=10s": dial tcp 127.0.0.1:{port}: connect: connection refused'
    )
    assert r.status_code == 500
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"Internal error occurred: {cause}",
        "reason": "InternalError",
        "details": {"causes": [{"message": cause}]},
        "code": 500,
    }
    assert admin.get(cms + "/a").status_code == 404
    patch = [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}]
    r = admin.patch(config, json=patch, headers={"Content-Type": "application/json-patch+json"})
    assert r.status_code == 200, r.text
    eventually(lambda: admin.post(cms, json=configmap("b")).status_code == 201)
    assert admin.delete(config).status_code == 200


def test_a_webhook_that_never_answers_times_out(server: Server, admin: requests.Session) -> None:
    ns = labelled_namespace(admin, server, "adm-slow")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        url = f"https://127.0.0.1:{port}/"
        hook = webhook("slow.example.com", ns, {"url": url}, timeoutSeconds=1)
        config = install(admin, server, "ValidatingWebhookConfiguration", "adm-slow", [hook])
        cms = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
        active(admin, cms, 500)
        r = admin.post(cms, json=configmap("a"))
        assert r.status_code == 500
        assert r.json()["details"]["causes"][0]["message"] == (
            'failed calling webhook "slow.example.com": failed to call webhook: '
            f'Post "{url}?timeout=1s": context deadline exceeded'
        )
    assert admin.delete(config).status_code == 200


def test_an_answer_that_is_not_a_review(
    server: Server, admin: requests.Session, sample: tuple[pki.Paths, int]
) -> None:
    certs, port = sample
    ns = labelled_namespace(admin, server, "adm-garbage")
    hooks = [
        webhook(
            "garbage.example.com",
            ns,
            {"url": f"https://127.0.0.1:{port}/nothing-here", "caBundle": ca_bundle(certs)},
        )
    ]
    config = install(admin, server, "MutatingWebhookConfiguration", "adm-garbage", hooks)
    cms = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
    active(admin, cms, 500)
    r = admin.post(cms, json=configmap("a"))
    assert r.json()["message"] == (
        'Internal error occurred: failed calling webhook "garbage.example.com": '
        "failed to call webhook: the server could not find the requested resource"
    )
    assert admin.delete(config).status_code == 200


class _Malformed(ReviewHandler):
    """A webhook answering 200 with a body that is not JSON."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_json(b"{nope")


def test_an_answer_that_is_not_json_is_worded_as_go_words_it(
    server: Server, admin: requests.Session, tmp_path: Path
) -> None:
    with serving(_Malformed, tmp_path) as (certs, port):
        ns = labelled_namespace(admin, server, "adm-malformed")
        url = f"https://127.0.0.1:{port}/"
        hook = webhook("malformed.example.com", ns, {"url": url, "caBundle": ca_bundle(certs)})
        config = install(admin, server, "ValidatingWebhookConfiguration", "adm-malformed", [hook])
        cms = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
        active(admin, cms, 500)
        r = admin.post(cms, json=configmap("a"))
        assert r.status_code == 500
        assert r.json()["message"] == (
            'Internal error occurred: failed calling webhook "malformed.example.com": '
            "failed to call webhook: couldn't get version/kind; json parse error: "
            "invalid character 'n' looking for beginning of object key string"
        )
        assert admin.get(cms + "/a").status_code == 404
        assert admin.delete(config).status_code == 200


def test_kubectl_sees_the_denial(
    server: Server, admin: requests.Session, sample: tuple[pki.Paths, int]
) -> None:
    certs, port = sample
    ns = labelled_namespace(admin, server, "adm-kubectl")
    config = {"url": f"https://127.0.0.1:{port}/validate", "caBundle": ca_bundle(certs)}
    hooks = [webhook("team.example.com", ns, config)]
    url = install(admin, server, "ValidatingWebhookConfiguration", "adm-kubectl", hooks)
    active(admin, f"{server.url}/api/v1/namespaces/{ns}/configmaps", 403)
    run = server.kubectl("-n", ns, "create", "configmap", "c", "--from-literal=a=b", check=False)
    assert run.returncode == 1
    assert run.stderr.strip() == (
        'error: failed to create configmap: admission webhook "team.example.com" denied the '
        "request: every ConfigMap needs a team label"
    )
    assert admin.delete(url).status_code == 200


def test_the_server_presents_credentials_from_the_admission_config(tmp_path: Path) -> None:
    """A webhook that wants a client certificate gets one only with
    --admission-control-config-file."""
    certs = pki.ensure_pki(str(tmp_path / "hook-pki"), "127.0.0.1")
    rules = str(ROOT / "etc" / "admission-webhook.yaml")
    hook, port = start_sample(tmp_path, certs, "platform-admission-webhook", "--rules-file", rules)
    (tmp_path / "hooks.kubeconfig").write_text(
        "apiVersion: v1\nkind: Config\nusers:\n- name: '*'\n  user:\n"
        f"    client-certificate: {certs.admin_cert}\n    client-key: {certs.admin_key}\n"
    )
    admission = tmp_path / "admission.yaml"
    admission.write_text(
        "apiVersion: apiserver.config.platform.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
        "- name: ValidatingAdmissionWebhook\n  configuration:\n"
        "    apiVersion: apiserver.config.platform.io/v1\n"
        "    kind: WebhookAdmissionConfiguration\n"
        f"    kubeConfigFile: {tmp_path / 'hooks.kubeconfig'}\n"
    )
    plain = start_server(tmp_path / "plain")
    with_config = start_server(tmp_path / "with", f"--admission-control-config-file={admission}")
    try:
        config = {"url": f"https://127.0.0.1:{port}/validate", "caBundle": ca_bundle(certs)}
        codes = []
        for server in (plain, with_config):
            admin = session_for(server, cert=server.admin_cert)
            ns = labelled_namespace(admin, server, "adm-creds")
            hooks = [webhook("creds.example.com", ns, config)]
            install(admin, server, "ValidatingWebhookConfiguration", "adm-creds", hooks)
            cms = f"{server.url}/api/v1/namespaces/{ns}/configmaps?dryRun=All"

            def refused(admin: requests.Session = admin, cms: str = cms) -> bool:
                return admin.post(cms, json=configmap("x")).status_code != 201

            eventually(refused)
            r = admin.post(cms, json=configmap("x"))
            codes.append((r.status_code, r.json()["message"]))
        assert codes[0] == (
            500,
            'Internal error occurred: failed calling webhook "creds.example.com": failed to '
            'call webhook: an error on the server ("{"error":"client certificate required"}") '
            "has prevented the request from succeeding",
        )
        assert codes[1] == (
            403,
            'admission webhook "creds.example.com" denied the request: every ConfigMap needs '
            "a team label",
        )
    finally:
        plain.stop()
        with_config.stop()
        stop_webhook(hook)


def test_a_default_the_type_cannot_hold_is_refused_and_not_stored(
    server: Server, admin: requests.Session, tmp_path: Path
) -> None:
    """The sample webhook adds a number to a ConfigMap's data: kube decodes the patched
    object into its type and answers Go's error as an internal error (as kube's reference
    answered); nothing is stored."""
    certs = pki.ensure_pki(str(tmp_path / "pki"), "127.0.0.1")
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        yaml.safe_dump({"rules": [{"kinds": ["ConfigMap"], "defaults": {"data": {"n": 1}}}]})
    )
    hook, port = start_sample(
        tmp_path, certs, "platform-admission-webhook", "--rules-file", str(rules), client_ca=False
    )
    try:
        ns = labelled_namespace(admin, server, "adm-typed")
        config = {"url": f"https://127.0.0.1:{port}/mutate", "caBundle": ca_bundle(certs)}
        hooks = [webhook("typed.example.com", ns, config)]
        install(admin, server, "MutatingWebhookConfiguration", "adm-typed", hooks)
        url = f"{server.url}/api/v1/namespaces/{ns}/configmaps"
        active(admin, url, 500)
        r = admin.post(url, json=configmap("typed"))
        message = "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        assert r.json() == internal_error(message)
        assert admin.get(url + "/typed").status_code == 404
    finally:
        stop_webhook(hook)
