"""kube's second round of mutations, end to end: a MutatingAdmissionPolicy and a real
HTTPS mutating webhook, each with and without ``reinvocationPolicy: IfNeeded``; the
webhook records in an annotation what it saw each time it was called.  The answers
are the ones kube's reference gave for the same four set-ups."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.hookserver import ReviewHandler, serving
from tests.e2e.test_admission_webhooks import ca_bundle, install, labelled_namespace, webhook
from tests.e2e.test_mutating_policies import bind, policy


class _Echo(ReviewHandler):
    """Appends the ``n`` it sees in the object's data to its ``seen`` annotation."""

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        obj = request["object"]
        annotations = obj["metadata"].get("annotations") or {}
        seen = annotations.get("seen", "") + "," + (obj.get("data") or {}).get("n", "none")
        ops = [{"op": "add", "path": "/metadata/annotations", "value": {"seen": seen}}]
        patch = base64.b64encode(json.dumps(ops).encode()).decode()
        return {"allowed": True, "patchType": "JSONPatch", "patch": patch}


@pytest.fixture
def echo(tmp_path: Path) -> Iterator[dict[str, str]]:
    with serving(_Echo, tmp_path) as (certs, port):
        yield {"url": f"https://127.0.0.1:{port}/", "caBundle": ca_bundle(certs)}


COUNT = {
    "patchType": "JSONPatch",
    "jsonPatch": {
        "expression": '[JSONPatch{op: "add", path: "/data/n", value: string(size(object.data))}]'
    },
}


@pytest.mark.parametrize(
    ("policy_again", "hook_again", "n", "seen"),
    [
        ("Never", "Never", "1", ",1"),
        ("Never", "IfNeeded", "1", ",1"),
        ("IfNeeded", "Never", "2", ",1"),
        ("IfNeeded", "IfNeeded", "2", ",1,2"),
    ],
)
def test_ifneeded_runs_again_when_the_object_changed_after_it(
    server: Server,
    admin: requests.Session,
    echo: dict[str, str],
    policy_again: str,
    hook_again: str,
    n: str,
    seen: str,
) -> None:
    name = f"ri-{policy_again}-{hook_again}".lower()
    ns = labelled_namespace(admin, server, name)
    bind(admin, server, policy(name, name, COUNT, reinvocationPolicy=policy_again))
    hooks = [webhook(f"{name}.example.com", ns, echo, reinvocationPolicy=hook_again)]
    install(admin, server, "MutatingWebhookConfiguration", name, hooks)
    url = f"{server.url}/api/v1/namespaces/{ns}/configmaps?dryRun=All"
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"probe": name}},
        "data": {"a": "1"},
    }

    def both_ran() -> bool:
        made = admin.post(url, json=body).json()
        return "n" in (made.get("data") or {}) and "seen" in made["metadata"].get("annotations", {})

    eventually(both_ran)
    made = admin.post(url, json=body).json()
    assert made["data"] == {"a": "1", "n": n}
    assert made["metadata"]["annotations"] == {"seen": seen}


class _Untolerating(ReviewHandler):
    """Removes a pod's tolerations, and counts its calls in an annotation."""

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        pod = request["object"]
        ops: list[dict[str, Any]] = []
        if pod["spec"].get("tolerations"):
            ops.append({"op": "remove", "path": "/spec/tolerations"})
        calls = (pod["metadata"].get("annotations") or {}).get("calls", "") + "x"
        ops.append({"op": "add", "path": "/metadata/annotations", "value": {"calls": calls}})
        patch = base64.b64encode(json.dumps(ops).encode()).decode()
        return {"allowed": True, "patchType": "JSONPatch", "patch": patch}


@pytest.mark.parametrize(
    ("again", "calls", "tolerations"), [("Never", "x", 2), ("IfNeeded", "xx", 0)]
)
def test_the_second_round_runs_the_built_in_plugins_again(
    server: Server,
    admin: requests.Session,
    tmp_path: Path,
    again: str,
    calls: str,
    tolerations: int,
) -> None:
    """A webhook's change sends kube's chain round its mutations again, built-in plugins
    first: DefaultTolerationSeconds puts back the tolerations the webhook removed, and an
    IfNeeded webhook, seeing them changed, runs again and removes them (as kube's
    reference answered)."""
    with serving(_Untolerating, tmp_path) as (certs, port):
        name = f"untol-{again}".lower()
        ns = labelled_namespace(admin, server, name)
        config = {"url": f"https://127.0.0.1:{port}/", "caBundle": ca_bundle(certs)}
        hook = webhook(f"{name}.example.com", ns, config, reinvocationPolicy=again)
        hook["rules"][0]["resources"] = ["pods"]
        install(admin, server, "MutatingWebhookConfiguration", name, [hook])
        url = f"{server.url}/api/v1/namespaces/{ns}/pods?dryRun=All"
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }
        made = eventually(
            lambda: admin.post(url, json=pod).json().get("metadata", {}).get("annotations")
        )
        assert made == {"calls": calls}
        made_pod = admin.post(url, json=pod).json()
        assert len(made_pod["spec"].get("tolerations") or []) == tolerations
