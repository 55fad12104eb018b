"""What kube sets as it decodes a write (defaults, its v1 conversions) is in the object
before field tracking, so the writer's managedFields own it.  Each expectation is what
kube-apiserver v1.36 answered to the same request (reference, 2026-11-30)."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server

TEMPLATE = {
    "metadata": {"labels": {"a": "b"}},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}
SELECTOR = {"matchLabels": {"a": "b"}}
APPS = "/apis/apps/v1/namespaces/default"


def _owned(obj: dict[str, Any]) -> dict[str, Any]:
    (entry,) = obj["metadata"]["managedFields"]
    fields: dict[str, Any] = entry["fieldsV1"]
    return fields


def test_a_priority_class_defaults_its_preemption_policy_as_it_is_decoded(
    server: Server, admin: requests.Session
) -> None:
    url = server.url + "/apis/scheduling.platform.io/v1/priorityclasses"
    body = {"metadata": {"name": "decoded"}, "value": 0, "globalDefault": False}
    made = admin.post(url, json=body)
    assert made.status_code == 201, made.text
    assert made.json()["preemptionPolicy"] == "PreemptLowerPriority"
    assert "globalDefault" not in made.json() and made.json()["value"] == 0
    assert _owned(made.json()) == {"f:preemptionPolicy": {}}
    admin.delete(f"{url}/decoded")


def test_a_daemon_sets_template_generation_is_its_writers(
    server: Server, admin: requests.Session
) -> None:
    url = server.url + APPS + "/daemonsets"
    body = {"metadata": {"name": "decoded"}, "spec": {"selector": SELECTOR, "template": TEMPLATE}}
    made = admin.post(url, json=body)
    assert made.status_code == 201, made.text
    annotations = made.json()["metadata"]["annotations"]
    assert annotations == {"deprecated.daemonset.template.generation": "1"}
    meta = _owned(made.json())["f:metadata"]
    assert meta == {"f:annotations": {".": {}, "f:deprecated.daemonset.template.generation": {}}}
    admin.delete(f"{url}/decoded")


def test_a_stateful_sets_claim_templates_are_defaulted_as_claims(
    server: Server, admin: requests.Session
) -> None:
    url = server.url + APPS + "/statefulsets"
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    spec = {
        "serviceName": "s",
        "selector": SELECTOR,
        "template": TEMPLATE,
        "volumeClaimTemplates": [claim],
    }
    made = admin.post(url, json={"metadata": {"name": "decoded"}, "spec": spec})
    assert made.status_code == 201, made.text
    (template,) = made.json()["spec"]["volumeClaimTemplates"]
    assert template == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {**claim["spec"], "volumeMode": "Filesystem"},
        "status": {"phase": "Pending"},
    }
    admin.delete(f"{url}/decoded")


def test_an_on_delete_daemon_sets_rolling_update_is_filled_with_zeros(
    server: Server, admin: requests.Session
) -> None:
    """kube's internal RollingUpdateDaemonSet holds values, not pointers: an OnDelete set
    that writes a rollingUpdate gets 0 for each field it left out, owned by its writer."""
    url = server.url + APPS + "/daemonsets"
    strategy = {"type": "OnDelete", "rollingUpdate": {"maxSurge": "10%"}}
    spec = {"selector": SELECTOR, "template": TEMPLATE, "updateStrategy": strategy}
    made = admin.post(url, json={"metadata": {"name": "zeros"}, "spec": spec})
    assert made.status_code == 201, made.text
    assert made.json()["spec"]["updateStrategy"] == {
        "type": "OnDelete",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"},
    }
    assert _owned(made.json())["f:spec"]["f:updateStrategy"] == {
        "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
        "f:type": {},
    }
    admin.delete(f"{url}/zeros")
