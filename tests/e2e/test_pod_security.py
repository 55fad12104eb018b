"""PodSecurity on a real server, through kubectl and the kubernetes client: enforce
refusals, warn headers, workload templates, namespace relabelling and bad labels.  The
expected texts are the reference kube-apiserver's (with platform.io label keys)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from tests.e2e.conftest import VENV_BIN, Server, start_server

K = "pod-security.platform.io/"
RESTRICTED_DETAIL = (
    'allowPrivilegeEscalation != false (container "c" must set '
    "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
    '(container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true '
    '(pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile '
    '(pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" '
    'or "Localhost")'
)


def namespace(api: client.ApiClient, name: str, **labels: str) -> None:
    meta = client.V1ObjectMeta(name=name, labels={K + k: v for k, v in labels.items()})
    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=meta))


def pod(name: str, **security: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "i"}
    if security:
        container["securityContext"] = security
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container]},
    }


def warnings_of(headers: Any) -> list[str]:
    """The Warning header values, each ``299 - "<text>"``."""
    return [value for key, value in headers.items() if key.lower() == "warning"]


def test_enforce_refuses_a_privileged_pod(api: client.ApiClient) -> None:
    namespace(api, "psa-enforce", enforce="restricted")
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod("psa-enforce", pod("x", privileged=True))
    assert (caught.value.status, caught.value.reason) == (403, "Forbidden")
    assert json.loads(caught.value.body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "x" is forbidden: violates PodSecurity "restricted:latest": privileged '
        '(container "c" must not set securityContext.privileged=true), ' + RESTRICTED_DETAIL,
        "reason": "Forbidden",
        "details": {"name": "x", "kind": "pods"},
        "code": 403,
    }
    # A generated name is the one the message gives.
    named = pod("x")
    named["metadata"] = {"generateName": "x-"}
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod("psa-enforce", named)
    message = json.loads(caught.value.body)["message"]
    assert re.fullmatch(r'pods "x-[a-z0-9]{5}" is forbidden: violates PodSecurity .*', message)
    good = pod(
        "ok",
        allowPrivilegeEscalation=False,
        capabilities={"drop": ["ALL"]},
        runAsNonRoot=True,
        seccompProfile={"type": "RuntimeDefault"},
    )
    _, status, headers = core.create_namespaced_pod_with_http_info("psa-enforce", good)
    assert status == 201 and warnings_of(headers) == []


def test_warn_level_adds_a_warning_header(api: client.ApiClient) -> None:
    namespace(api, "psa-warn", warn="restricted")
    core = client.CoreV1Api(api)
    created, status, headers = core.create_namespaced_pod_with_http_info("psa-warn", pod("x"))
    assert status == 201 and created.metadata.name == "x"
    text = f'would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}'
    assert warnings_of(headers) == ['299 - "' + text.replace('"', '\\"') + '"']


def test_deployment_template_warns_even_under_enforce(api: client.ApiClient) -> None:
    namespace(api, "psa-deploy", enforce="restricted")
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod("p")["spec"]},
        },
    }
    apps = client.AppsV1Api(api)
    _, status, headers = apps.create_namespaced_deployment_with_http_info("psa-deploy", body)
    assert status == 201
    text = f'would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}'
    assert warnings_of(headers) == ['299 - "' + text.replace('"', '\\"') + '"']


def test_relabel_warns_about_existing_pods(api: client.ApiClient, server: Server) -> None:
    namespace(api, "psa-relabel")
    core = client.CoreV1Api(api)
    core.create_namespaced_pod("psa-relabel", pod("p1"))
    core.create_namespaced_pod("psa-relabel", pod("p2"))
    core.create_namespaced_pod("psa-relabel", pod("root", privileged=True))
    kubectl = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(server.kubeconfig)]
    done = subprocess.run(
        [*kubectl, "label", "ns", "psa-relabel", K + "enforce=restricted"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "namespace/psa-relabel labeled\n"
    reasons = "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true"
    assert done.stderr.splitlines() == [
        'Warning: existing pods in namespace "psa-relabel" violate the new PodSecurity enforce '
        'level "restricted:latest"',
        f"Warning: p1 (and 1 other pod): {reasons}, seccompProfile",
        f"Warning: root: privileged, {reasons}, seccompProfile",
    ]
    done = subprocess.run(
        [*kubectl, "-n", "psa-relabel", "run", "p3", "--image=i", "--restart=Never"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == (
        'Error from server (Forbidden): pods "p3" is forbidden: violates PodSecurity '
        '"restricted:latest": ' + RESTRICTED_DETAIL.replace('"c"', '"p3"') + "\n"
    )


def test_bad_labels_are_invalid(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    meta = client.V1ObjectMeta(
        name="psa-bad", labels={K + "enforce": "foo", K + "warn-version": "2"}
    )
    with pytest.raises(ApiException) as caught:
        core.create_namespace(client.V1Namespace(metadata=meta))
    assert caught.value.status == 422
    body = json.loads(caught.value.body)
    assert body["message"] == (
        f'Namespace "psa-bad" is invalid: [metadata.labels[{K}enforce]: Invalid value: "foo": '
        f"must be one of privileged, baseline, restricted, metadata.labels[{K}warn-version]: "
        'Invalid value: "2": must be "latest" or "v1.x"]'
    )
    assert body["reason"] == "Invalid" and body["details"]["kind"] == "Namespace"


def test_configured_defaults_and_exemptions(tmp_path: Path) -> None:
    """The PodSecurityConfiguration from --admission-control-config-file."""
    admission = tmp_path / "admission.yaml"
    admission.write_text(
        "apiVersion: apiserver.config.platform.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
        "- name: PodSecurity\n  configuration:\n"
        "    apiVersion: pod-security.admission.config.platform.io/v1\n"
        "    kind: PodSecurityConfiguration\n"
        "    defaults: {enforce: baseline, enforce-version: v1.30}\n"
        "    exemptions: {namespaces: [psa-free]}\n"
    )
    server = start_server(tmp_path / "data", f"--admission-control-config-file={admission}")
    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        for name in ("psa-default", "psa-free"):
            namespace(api, name)
        with pytest.raises(ApiException) as caught:
            core.create_namespaced_pod("psa-default", pod("x", privileged=True))
        assert caught.value.status == 403
        assert json.loads(caught.value.body)["message"] == (
            'pods "x" is forbidden: violates PodSecurity "baseline:v1.30": privileged '
            '(container "c" must not set securityContext.privileged=true)'
        )
        _, status, _ = core.create_namespaced_pod_with_http_info(
            "psa-free", pod("x", privileged=True)
        )
        assert status == 201
        body = client.V1Namespace(
            metadata=client.V1ObjectMeta(labels={K + "enforce": "restricted"})
        )
        _, status, headers = core.patch_namespace_with_http_info("psa-free", body)
        assert status == 200
        assert warnings_of(headers) == [
            '299 - "namespace \\"psa-free\\" is exempt from Pod Security, and the policy '
            '(enforce=restricted:v1.30) will be ignored"'
        ]
    finally:
        api.close()
        server.stop()
