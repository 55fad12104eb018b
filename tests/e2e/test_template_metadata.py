"""Pod templates' labels and annotations are validated as kube-apiserver v1.36 validated
them (reference, dry runs): ``spec.template.labels`` (``template.labels`` in a
PodTemplate), then the annotations, before the pod spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import Server

KUBE = json.loads(
    (Path(__file__).parent.parent / "registry" / "fixtures" / "template_meta_kube.json").read_text()
)
TEMPLATE = {
    "metadata": {"labels": {"app": "x", "bad key!": "v"}, "annotations": {"Bad Key": "v"}},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}
SELECTOR = {"matchLabels": {"app": "x"}}
KINDS = {
    "Deployment": ("apps/v1", "deployments", {"selector": SELECTOR, "template": TEMPLATE}),
    "ReplicaSet": ("apps/v1", "replicasets", {"selector": SELECTOR, "template": TEMPLATE}),
    "StatefulSet": (
        "apps/v1",
        "statefulsets",
        {"selector": SELECTOR, "template": TEMPLATE, "serviceName": "s"},
    ),
    "DaemonSet": ("apps/v1", "daemonsets", {"selector": SELECTOR, "template": TEMPLATE}),
}


@pytest.mark.parametrize("kind", sorted(KUBE))
def test_template_labels_and_annotations_are_refused_as_kube(
    server: Server, admin: requests.Session, kind: str
) -> None:
    if kind == "PodTemplate":
        url = server.url + "/api/v1/namespaces/default/podtemplates?dryRun=All"
        body = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "t"}, "template": TEMPLATE}
    else:
        version, plural, spec = KINDS[kind]
        url = f"{server.url}/apis/{version}/namespaces/default/{plural}?dryRun=All"
        body = {"apiVersion": version, "kind": kind, "metadata": {"name": "t"}, "spec": spec}
    answer = admin.post(url, json=body)
    assert [answer.status_code, answer.json()["message"]] == KUBE[kind]


RC_KUBE = json.loads(
    (
        Path(__file__).parent.parent / "registry" / "fixtures" / "replicationcontroller_kube.json"
    ).read_text()
)


@pytest.mark.parametrize("name", sorted(RC_KUBE))
def test_replication_controllers_as_kube(
    server: Server, admin: requests.Session, name: str
) -> None:
    """Selector and labels defaulted from the template; kube's ValidateReplicationControllerSpec."""
    url = server.url + "/api/v1/namespaces/default/replicationcontrollers?dryRun=All"
    body = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": name},
        "spec": RC_KUBE[name]["spec"],
    }
    answer = admin.post(url, json=body)
    if answer.status_code >= 300:
        got = answer.json()["message"]
    else:
        rc = answer.json()
        got = {
            "labels": rc["metadata"].get("labels"),
            "selector": rc["spec"].get("selector"),
            "replicas": rc["spec"].get("replicas"),
        }
    assert [answer.status_code, got] == RC_KUBE[name]["kube"]
