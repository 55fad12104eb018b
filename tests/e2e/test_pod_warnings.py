"""kube's warnings on pods and workloads as kubectl shows them, and the name and grace
period rules that came with them (each answer as kube-apiserver v1.36 gave it)."""

from __future__ import annotations

import uuid

import pytest
import requests
import yaml

from tests.e2e.answers import status
from tests.e2e.conftest import Server

ENV = (
    'spec.template.spec.containers[0].env[1]: hides previous definition of "A", which may be '
    "dropped when using apply"
)


@pytest.fixture
def ns(server: Server, admin: requests.Session) -> str:
    name = f"warn-{uuid.uuid4().hex[:8]}"
    made = admin.post(server.url + "/api/v1/namespaces", json={"metadata": {"name": name}})
    assert made.status_code == 201
    return name


def deployment(name: str, image: str, label: str = "x") -> str:
    env = [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]
    container = {"name": "c", "image": image, "env": env}
    return yaml.safe_dump(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "labels": {"l": label}},
            "spec": {
                "selector": {"matchLabels": {"app": "w"}},
                "template": {
                    "metadata": {"labels": {"app": "w"}},
                    "spec": {"containers": [container]},
                },
            },
        }
    )


def test_kubectl_apply_prints_a_templates_warnings_when_the_template_changes(
    server: Server, ns: str
) -> None:
    first = server.kubectl("apply", "-n", ns, "-f", "-", stdin=deployment("web.v1", "i"))
    assert first.stderr.splitlines() == [
        "Warning: metadata.name: this is used in Pod names and hostnames, which can result in "
        "surprising behavior; a DNS label is recommended: [must not contain dots]",
        f"Warning: {ENV}",
    ]
    # kube bumps a Deployment's generation for its annotations too, and warns of the
    # template then: kubectl apply's last-applied annotation changes with the label
    relabelled = server.kubectl(
        "apply", "-n", ns, "-f", "-", stdin=deployment("web.v1", "i", "two")
    )
    assert relabelled.stderr.splitlines() == [f"Warning: {ENV}"]
    labelled = server.kubectl("label", "-n", ns, "deployment", "web.v1", "x=z")
    assert labelled.stderr == ""  # the generation stays: no warnings
    annotated = server.kubectl("annotate", "-n", ns, "deployment", "web.v1", "x=z")
    assert annotated.stderr.splitlines() == [f"Warning: {ENV}"]
    got = server.kubectl(
        "get", "-n", ns, "deployment", "web.v1", "-o", "jsonpath={.metadata.generation}"
    )
    assert got.stdout == "3"


def test_a_pods_negative_grace_period_is_stored_as_one(
    server: Server, admin: requests.Session, ns: str
) -> None:
    """kube's v1 Pod conversion makes it 1 before anything looks at it, so the pod is not
    warned of it (a template is: its conversion keeps the value)."""
    spec = {"containers": [{"name": "c", "image": "i"}], "terminationGracePeriodSeconds": -5}
    made = admin.post(
        f"{server.url}/api/v1/namespaces/{ns}/pods", json={"metadata": {"name": "p"}, "spec": spec}
    )
    assert made.status_code == 201
    assert made.json()["spec"]["terminationGracePeriodSeconds"] == 1
    assert "Warning" not in made.headers


def test_name_rules_of_statefulsets_and_disruption_budgets(
    server: Server, admin: requests.Session, ns: str
) -> None:
    apps = f"{server.url}/apis/apps/v1/namespaces/{ns}/statefulsets"
    refused = admin.post(apps, json={"metadata": {"name": "s.s"}, "spec": {}})
    assert refused.status_code == 422
    detail = 'Invalid value: "s.s": must not contain dots'
    assert refused.json()["details"]["causes"][0] == {
        "reason": "FieldValueInvalid",
        "message": detail,
        "field": "metadata.name",
    }
    budgets = f"{server.url}/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    for name in ("A_B", "Upper"):  # kube checks a budget's name as a path segment only
        made = admin.post(budgets, json={"metadata": {"name": name}, "spec": {}})
        assert made.status_code == 201, made.text
    slash = admin.post(budgets, json={"metadata": {"name": "a%b"}, "spec": {}})
    assert slash.json() == status(
        422,
        "Invalid",
        'PodDisruptionBudget.policy "a%b" is invalid: metadata.name: Invalid value: "a%b": '
        "may not contain '%'",
        {
            "name": "a%b",
            "group": "policy",
            "kind": "PodDisruptionBudget",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: \"a%b\": may not contain '%'",
                    "field": "metadata.name",
                }
            ],
        },
    )
