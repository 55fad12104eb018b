"""Several versions of a custom resource: None and Webhook conversion, deprecation."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from platform_api.apiserver import pki
from tests.e2e.answers import unknown
from tests.e2e.certs import serving_certs
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import (
    MERGE,
    SCHEMA,
    crd_manifest,
    create_crd,
    crontab,
    delete_crd,
    eventually,
    namespace,
    ns_path,
    version,
)
from tests.e2e.test_authz_webhook import stop_webhook
from tests.e2e.test_token_webhook import start_sample

ROOT = Path(__file__).parents[2]
V2_SCHEMA = copy.deepcopy(SCHEMA)
V2_SCHEMA["properties"]["spec"]["properties"]["schedule"] = {"type": "string"}


def test_none_conversion_rewrites_the_api_version(server: Server, admin: requests.Session) -> None:
    group = "conv-none.example.com"
    versions = [
        version("v1", storage=True),
        version("v2", storage=False),
        version("v1beta1", storage=False, deprecated=True),
    ]
    crd = create_crd(admin, server, crd_manifest(group, versions=versions))
    ns = namespace(admin, server, "conv-none")
    r = admin.post(server.url + ns_path(group, ns, v="v2"), json=crontab("a", group, v="v2"))
    assert r.status_code == 201, r.text
    assert r.json()["apiVersion"] == f"{group}/v2"
    assert admin.get(server.url + ns_path(group, ns) + "/a").json()["apiVersion"] == f"{group}/v1"
    listed = admin.get(server.url + ns_path(group, ns, v="v2")).json()
    assert [i["apiVersion"] for i in listed["items"]] == [f"{group}/v2"]
    r = admin.get(server.url + ns_path(group, ns, v="v1beta1") + "/a")
    assert r.json()["apiVersion"] == f"{group}/v1beta1"
    assert (
        r.headers["Warning"]
        == f'299 - "{group}/v1beta1 CronTab is deprecated; use {group}/v2 CronTab"'
    )
    preferred = admin.get(f"{server.url}/apis/{group}").json()["preferredVersion"]
    assert preferred["version"] == "v2"
    delete_crd(admin, server, crd["metadata"]["name"])


def test_a_converted_object_is_pruned_by_the_schema_of_its_new_version(
    server: Server, admin: requests.Session
) -> None:
    """As the reference answered: kube coerces an object after every conversion, so a
    field only v2 declares is not stored in v1 (the storage version), and a field only
    v1 declares is not shown in v2."""
    group = "conv-prune.example.com"
    v1_schema = copy.deepcopy(SCHEMA)
    v1_schema["properties"]["spec"]["properties"]["legacy"] = {"type": "string"}
    versions = [version("v1", schema=v1_schema), version("v2", storage=False, schema=V2_SCHEMA)]
    crd = create_crd(admin, server, crd_manifest(group, versions=versions))
    ns = namespace(admin, server, "conv-prune")
    body = crontab("a", group, v="v2", image="i", schedule="daily", legacy="x")
    created = admin.post(server.url + ns_path(group, ns, v="v2"), json=body)
    assert (created.status_code, created.json()["spec"]) == (201, {"image": "i"})
    assert admin.get(server.url + ns_path(group, ns) + "/a").json()["spec"] == {"image": "i"}
    patch = {"spec": {"legacy": "y"}}
    r = admin.patch(server.url + ns_path(group, ns) + "/a", json=patch, headers=MERGE)
    assert r.json()["spec"] == {"image": "i", "legacy": "y"}
    seen = admin.get(server.url + ns_path(group, ns, v="v2") + "/a").json()
    assert seen["spec"] == {"image": "i"} and seen["apiVersion"] == f"{group}/v2"
    delete_crd(admin, server, crd["metadata"]["name"])


def test_a_deprecation_warning_of_the_crd_is_sent(server: Server, admin: requests.Session) -> None:
    group = "conv-warn.example.com"
    versions = [
        version("v1"),
        version("v1alpha1", storage=False, deprecated=True, deprecationWarning="use v1, please"),
    ]
    crd = create_crd(admin, server, crd_manifest(group, versions=versions))
    r = admin.get(f"{server.url}/apis/{group}/v1alpha1/crontabs")
    assert (r.status_code, r.headers["Warning"]) == (200, '299 - "use v1, please"')
    assert "Warning" not in admin.get(f"{server.url}/apis/{group}/v1/crontabs").headers
    # kube's CRD handler warns before it routes: a missing sub-resource, a path past
    # it, a nameless PUT; a request of the wrong scope is no handler's and is not warned.
    base = f"{server.url}/apis/{group}/v1alpha1"
    for method, path, code in [
        ("GET", "/namespaces/default/crontabs/a/scale", 404),
        ("GET", "/namespaces/default/crontabs/a/status/x", 404),
        ("PUT", "/namespaces/default/crontabs", 400),
    ]:
        r = admin.request(method, base + path, json={})
        assert (r.status_code, r.headers.get("Warning")) == (code, '299 - "use v1, please"')
    r = admin.get(f"{base}/crontabs/a")
    assert (r.status_code, r.text, r.headers.get("Warning")) == (404, "404 page not found\n", None)
    delete_crd(admin, server, crd["metadata"]["name"])


def renaming_webhook(root: Path) -> tuple[pki.Paths, subprocess.Popen[bytes], int]:
    """The sample conversion webhook on 127.0.0.1 (v1's cronSpec is v2's schedule)."""
    certs = pki.ensure_pki(str(root / "hook-pki"), "127.0.0.1")
    renames = str(ROOT / "etc" / "conversion-webhook.yaml")
    hook, port = start_sample(
        root, certs, "platform-conversion-webhook", "--renames-file", renames, client_ca=False
    )
    return certs, hook, port


@pytest.fixture
def conversion_webhook(tmp_path: Path) -> Iterator[tuple[pki.Paths, int]]:
    certs, hook, port = renaming_webhook(tmp_path)
    yield certs, port
    stop_webhook(hook)


def webhook_crd(group: str, client_config: dict) -> dict:
    versions = [version("v1"), version("v2", storage=False, schema=V2_SCHEMA)]
    manifest = crd_manifest(group, versions=versions)
    manifest["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {"clientConfig": client_config, "conversionReviewVersions": ["v1"]},
    }
    return manifest


def ca_bundle(path: str) -> str:
    return base64.b64encode(Path(path).read_bytes()).decode()


def test_webhook_conversion_by_url(
    server: Server, admin: requests.Session, conversion_webhook: tuple[pki.Paths, int]
) -> None:
    certs, port = conversion_webhook
    group = "conv-hook.example.com"
    config = {"url": f"https://127.0.0.1:{port}/convert", "caBundle": ca_bundle(certs.ca_cert)}
    crd = create_crd(admin, server, webhook_crd(group, config))
    ns = namespace(admin, server, "conv-hook")
    v1, v2 = server.url + ns_path(group, ns), server.url + ns_path(group, ns, v="v2")
    assert admin.post(v1, json=crontab("a", group, cronSpec="* * * * *")).status_code == 201
    got = admin.get(v2 + "/a").json()
    assert got["apiVersion"] == f"{group}/v2"
    assert got["spec"] == {"schedule": "* * * * *"}
    assert [i["spec"] for i in admin.get(v2).json()["items"]] == [{"schedule": "* * * * *"}]
    # An update through v2 is converted back before it is stored (at v1).
    r = admin.patch(v2 + "/a", json={"spec": {"schedule": "0 * * * *"}}, headers=MERGE)
    assert r.status_code == 200, r.text
    assert r.json()["spec"] == {"schedule": "0 * * * *"}
    assert admin.get(v1 + "/a").json()["spec"] == {"cronSpec": "0 * * * *"}
    r = admin.post(v2, json=crontab("b", group, v="v2", schedule="5 * * * *"))
    assert r.status_code == 201, r.text
    assert admin.get(v1 + "/b").json()["spec"] == {"cronSpec": "5 * * * *"}
    # A watch through v2 sees converted objects.
    events: list[dict] = []

    def watch() -> None:
        with admin.get(v2 + "?watch=1&resourceVersion=0", stream=True, timeout=20) as reply:
            for line in reply.iter_lines():
                if line:
                    events.append(json.loads(line))
                    if len(events) == 3:
                        return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    eventually(lambda: len(events) >= 2)
    admin.patch(v1 + "/b", json={"spec": {"cronSpec": "9 * * * *"}}, headers=MERGE)
    eventually(lambda: len(events) == 3)
    assert events[2]["type"] == "MODIFIED"
    assert events[2]["object"]["spec"] == {"schedule": "9 * * * *"}
    delete_crd(admin, server, crd["metadata"]["name"])


def test_upstream_names_send_upstream_reviews(
    tmp_path: Path, conversion_webhook: tuple[pki.Paths, int]
) -> None:
    """Under --serve-upstream-groups conversion works end to end with kube's
    apiextensions.k8s.io reviews (what controller-runtime's handler decodes; the review's
    group is checked in tests/apiextensions/test_webhook_conversion.py)."""
    upstream = start_server(tmp_path / "upstream", "--serve-upstream-groups")
    try:
        admin = session_for(upstream, cert=upstream.admin_cert)
        certs, port = conversion_webhook
        group = "conv-up.example.com"
        config = {"url": f"https://127.0.0.1:{port}/convert", "caBundle": ca_bundle(certs.ca_cert)}
        create_crd(admin, upstream, webhook_crd(group, config))
        ns = namespace(admin, upstream, "conv-up")
        v1, v2 = upstream.url + ns_path(group, ns), upstream.url + ns_path(group, ns, v="v2")
        assert admin.post(v1, json=crontab("a", group, cronSpec="2 * * * *")).status_code == 201
        assert admin.get(v2 + "/a").json()["spec"] == {"schedule": "2 * * * *"}
        log = (tmp_path / "upstream").glob("server-*.log")
        assert not any("conversion webhook" in path.read_text() for path in log)
    finally:
        upstream.stop()


def test_webhook_conversion_through_a_service(
    tmp_path: Path, server: Server, admin: requests.Session
) -> None:
    ns = namespace(admin, server, "conv-svc")
    certs = serving_certs(tmp_path / "svc-pki", [f"converter.{ns}.svc"])
    renames = str(ROOT / "etc" / "conversion-webhook.yaml")
    hook, port = start_sample(
        tmp_path, certs, "platform-conversion-webhook", "--renames-file", renames, client_ca=False
    )
    try:
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "converter"},
            "spec": {"ports": [{"port": 443, "targetPort": port}]},
        }
        endpoints = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "converter"},
            "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": port}]}],
        }
        assert admin.post(f"{server.url}/api/v1/namespaces/{ns}/services", json=service).ok
        assert admin.post(f"{server.url}/api/v1/namespaces/{ns}/endpoints", json=endpoints).ok
        group = "conv-svc.example.com"
        config = {
            "service": {"namespace": ns, "name": "converter", "path": "/convert"},
            "caBundle": ca_bundle(certs.ca_cert),
        }
        crd = create_crd(admin, server, webhook_crd(group, config))
        v1, v2 = server.url + ns_path(group, ns), server.url + ns_path(group, ns, v="v2")
        assert admin.post(v1, json=crontab("a", group, cronSpec="1 * * * *")).status_code == 201
        assert admin.get(v2 + "/a").json()["spec"] == {"schedule": "1 * * * *"}
        stop_webhook(hook)  # the webhook goes away: reads in other versions fail as kube's do
        r = admin.get(v2 + "/a")
        assert (r.status_code, r.json()) == (
            500,
            unknown(
                f"conversion webhook for {group}/v1, Kind=CronTab failed: "
                f'Post "https://converter.{ns}.svc:443/convert?timeout=30s": '
                f"dial tcp 127.0.0.1:{port}: connect: connection refused"
            ),
        )
        assert admin.get(v1 + "/a").status_code == 200  # the storage version needs no call
        delete_crd(admin, server, crd["metadata"]["name"])
    finally:
        stop_webhook(hook)


ADMISSION = "/apis/admissionregistration.platform.io/v1"


def _policy(kind: str, name: str, group: str, match_policy: str, **spec: object) -> dict:
    rule = {
        "apiGroups": [group],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["crontabs"],
    }
    constraints = {"resourceRules": [rule], "matchPolicy": match_policy}
    return {
        "apiVersion": ADMISSION[6:],
        "kind": kind,
        "metadata": {"name": name},
        "spec": {"matchConstraints": constraints, **spec},
    }


def _install(admin: requests.Session, server: Server, kind: str, body: dict) -> str:
    plural = kind.lower()[:-1] + "ies" if kind.endswith("y") else kind.lower() + "s"
    url = f"{server.url}{ADMISSION}/{plural}"
    r = admin.post(url, json=body)
    assert r.status_code == 201, r.text
    return f"{url}/{body['metadata']['name']}"


def test_policies_see_an_equivalent_version_converted_by_the_crd(
    server: Server, admin: requests.Session, conversion_webhook: tuple[pki.Paths, int]
) -> None:
    """matchPolicy Equivalent: policies naming v1 see a v2 request, converted to v1 by the
    CRD's conversion webhook; what they change there is converted back to v2."""
    certs, port = conversion_webhook
    group = "conv-admit.example.com"
    config = {"url": f"https://127.0.0.1:{port}/convert", "caBundle": ca_bundle(certs.ca_cert)}
    crd = create_crd(admin, server, webhook_crd(group, config))
    ns = namespace(admin, server, "conv-admit")
    urls = []
    check = {"expression": "object.spec.cronSpec != 'never'", "message": "never is no schedule"}
    for policy, match_policy in (("seen-at-v1", "Equivalent"), ("exact-v1", "Exact")):
        vap = _policy("ValidatingAdmissionPolicy", policy, group, match_policy, validations=[check])
        urls.append(_install(admin, server, "ValidatingAdmissionPolicy", vap))
        spec = {"policyName": policy, "validationActions": ["Deny"]}
        body = {"metadata": {"name": policy}, "spec": spec}
        urls.append(_install(admin, server, "ValidatingAdmissionPolicyBinding", body))
    label = (
        "Object{metadata: Object.metadata{labels: {'requested': request.requestKind.version, "
        "'seen': request.kind.version}}}"
    )
    mutation = {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": label}}
    map_ = _policy(
        "MutatingAdmissionPolicy",
        "label",
        group,
        "Equivalent",
        mutations=[mutation],
        reinvocationPolicy="Never",
    )
    urls.append(_install(admin, server, "MutatingAdmissionPolicy", map_))
    body = {"metadata": {"name": "label"}, "spec": {"policyName": "label"}}
    urls.append(_install(admin, server, "MutatingAdmissionPolicyBinding", body))
    v2 = server.url + ns_path(group, ns, v="v2")

    def denied() -> bool:
        r = admin.post(v2 + "?dryRun=All", json=crontab("probe", group, v="v2", schedule="never"))
        return r.status_code == 422

    eventually(denied)
    r = admin.post(v2, json=crontab("bad", group, v="v2", schedule="never"))
    assert r.status_code == 422
    assert r.json()["message"] == (
        f"crontabs.{group} \"bad\" is forbidden: ValidatingAdmissionPolicy 'seen-at-v1' with "
        "binding 'seen-at-v1' denied request: never is no schedule"
    )
    r = admin.post(v2, json=crontab("good", group, v="v2", schedule="5 * * * *"))
    assert r.status_code == 201, r.text
    assert r.json()["apiVersion"] == f"{group}/v2"
    assert r.json()["spec"] == {"schedule": "5 * * * *"}
    assert r.json()["metadata"]["labels"] == {"requested": "v2", "seen": "v1"}
    for url in urls:
        assert admin.delete(url).status_code == 200
    delete_crd(admin, server, crd["metadata"]["name"])
