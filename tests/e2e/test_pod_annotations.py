"""The rules of a pod's own annotations, each answer as kube-apiserver v1.36 gave it:
the deprecated seccomp and AppArmor annotations, the mirror annotation, the deletion
cost and the legacy tolerations annotation."""

from __future__ import annotations

import uuid

import pytest
import requests

from tests.e2e.conftest import Server

APPARMOR = "container.apparmor.security.beta.platform.io/"
SECCOMP = "seccomp.security.alpha.platform.io/pod"
TOLERATIONS = "scheduler.alpha.platform.io/tolerations"
MIRROR = "platform.io/config.mirror"
COST = "controller.kubernetes.io/pod-deletion-cost"
DEPRECATED = 'deprecated since v1.30; use the "appArmorProfile" field instead'


@pytest.fixture
def pods(server: Server, admin: requests.Session) -> str:
    name = f"annotations-{uuid.uuid4().hex[:8]}"
    made = admin.post(server.url + "/api/v1/namespaces", json={"metadata": {"name": name}})
    assert made.status_code == 201
    return f"{server.url}/api/v1/namespaces/{name}/pods"


def pod(name: str, annotations: dict[str, str], **context: object) -> dict:
    container: dict = {"name": "c", "image": "i"}
    if context:
        container["securityContext"] = context
    return {
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"containers": [container]},
    }


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        (
            {COST: "abc"},
            f'metadata.annotations[{COST}]: Invalid value: "abc": must be a 32bit integer',
        ),
        (
            {COST: "+5"},
            f'metadata.annotations[{COST}]: Invalid value: "+5": must be a 32bit integer',
        ),
        (
            {SECCOMP: "bogus"},
            f'metadata.annotations.{SECCOMP}: Invalid value: "bogus": must be a valid seccomp profile',
        ),
        (
            {SECCOMP: "localhost/../x"},
            f"metadata.annotations.{SECCOMP}: Invalid value: \"../x\": must not contain '..'",
        ),
        (
            {APPARMOR + "zz": "runtime/default"},
            f'metadata.annotations[{APPARMOR}zz]: Invalid value: "zz": container not found',
        ),
        (
            {APPARMOR + "c": "bogus"},
            f'metadata.annotations[{APPARMOR}c]: Invalid value: "bogus": invalid AppArmor profile name: "bogus"',
        ),
        (
            {MIRROR: "x"},
            f'metadata.annotations[{MIRROR}]: Invalid value: "x": must set spec.nodeName if mirror pod annotation is set',
        ),
        (
            {TOLERATIONS: "bogus"},
            f"metadata.annotations: Invalid value: \"{TOLERATIONS}\": invalid character 'b' looking for beginning of value",
        ),
        (
            {TOLERATIONS: "{}"},
            f'metadata.annotations: Invalid value: "{TOLERATIONS}": json: cannot unmarshal object into Go value of type []core.Toleration',
        ),
    ],
)
def test_annotations_a_pod_is_refused_for(
    admin: requests.Session, pods: str, annotations: dict[str, str], message: str
) -> None:
    refused = admin.post(pods, json=pod("p", annotations))
    assert (refused.status_code, refused.json()["message"]) == (
        422,
        f'Pod "p" is invalid: {message}',
    )
    assert admin.get(pods + "/p").status_code == 404


def test_an_apparmor_annotation_becomes_the_field_and_stays(
    admin: requests.Session, pods: str
) -> None:
    made = admin.post(pods, json=pod("p", {APPARMOR + "c": "localhost/prof"}))
    assert made.status_code == 201
    assert made.json()["spec"]["containers"][0]["securityContext"] == {
        "appArmorProfile": {"type": "Localhost", "localhostProfile": "prof"}
    }
    assert made.headers[
        "Warning"
    ] == f'299 - "metadata.annotations[{APPARMOR}c]: {DEPRECATED}"'.replace(
        '"appArmorProfile"', '\\"appArmorProfile\\"'
    )
    merge = {"Content-Type": "application/merge-patch+json"}
    for change, detail in (
        (
            {APPARMOR + "c": "unconfined"},
            f"metadata.annotations[{APPARMOR}c]: Forbidden: may not remove or update AppArmor annotations",
        ),
        (
            {APPARMOR + "c": None},
            f"metadata.annotations[{APPARMOR}c]: Forbidden: may not remove or update AppArmor annotations",
        ),
    ):
        patched = admin.patch(
            pods + "/p", json={"metadata": {"annotations": change}}, headers=merge
        )
        assert (patched.status_code, patched.json()["message"]) == (
            422,
            f'Pod "p" is invalid: {detail}',
        )
    added = admin.patch(
        pods + "/p",
        json={"metadata": {"annotations": {APPARMOR + "d": "unconfined"}}},
        headers=merge,
    )
    assert added.json()["message"] == (
        f'Pod "p" is invalid: [metadata.annotations[{APPARMOR}d]: Invalid value: "d": container not '
        f"found, metadata.annotations[{APPARMOR}d]: Forbidden: may not add AppArmor annotations]"
    )


def test_annotation_and_field_must_agree(admin: requests.Session, pods: str) -> None:
    refused = admin.post(
        pods,
        json=pod("p", {APPARMOR + "c": "runtime/default"}, appArmorProfile={"type": "Unconfined"}),
    )
    assert refused.json()["message"] == (
        'Pod "p" is invalid: spec.containers[0].securityContext.appArmorProfile.type: Forbidden: '
        "apparmor type in annotation and field must match"
    )
    agreed = admin.post(
        pods,
        json=pod(
            "q", {APPARMOR + "c": "runtime/default"}, appArmorProfile={"type": "RuntimeDefault"}
        ),
    )
    assert agreed.status_code == 201
    assert "Warning" not in agreed.headers  # set by its writer, not copied: nothing to warn of


def test_a_template_is_held_to_the_same_rules(
    server: Server, admin: requests.Session, pods: str
) -> None:
    deployments = pods.replace("/api/v1/", "/apis/apps/v1/").replace("/pods", "/deployments")
    template = pod("", {SECCOMP: "bogus"})
    template["metadata"] = {
        "labels": {"a": "b"},
        "annotations": template["metadata"]["annotations"],
    }
    template["spec"]["ephemeralContainers"] = [{"name": "e", "image": "i"}]
    body = {
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template},
    }
    refused = admin.post(deployments, json=body)
    assert refused.json()["message"] == (
        f'Deployment.apps "d" is invalid: [spec.template.annotations.{SECCOMP}: Invalid value: '
        '"bogus": must be a valid seccomp profile, spec.template.spec.ephemeralContainers: '
        "Forbidden: ephemeral containers not allowed in pod template]"
    )
