"""Jobs' selectors as kube-apiserver v1.36 generated and refused them (reference, dry
runs; the job's uid written UID): generated from the uid unless ``manualSelector``, the
name and uid labels on the template and the job, kube's messages for conflicts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server

KUBE = json.loads(
    (Path(__file__).parent.parent / "registry" / "fixtures" / "job_selector_kube.json").read_text()
)
_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@pytest.mark.parametrize("name", sorted(KUBE))
def test_jobs_get_and_keep_selectors_as_kube(
    server: Server, admin: requests.Session, name: str
) -> None:
    url = server.url + "/apis/batch/v1/namespaces/default/jobs?dryRun=All"
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": KUBE[name]["spec"],
    }
    answer = admin.post(url, json=body)
    got: Any
    if answer.status_code < 300:
        job = answer.json()
        got = {
            "labels": job["metadata"].get("labels"),
            "selector": job["spec"].get("selector"),
            "manualSelector": job["spec"].get("manualSelector"),
            "tmplLabels": job["spec"]["template"]["metadata"].get("labels"),
        }
    else:
        got = answer.json()["message"]
    assert json.loads(_UID.sub("UID", json.dumps([answer.status_code, got]))) == KUBE[name]["kube"]


def test_kubectl_create_job_gets_a_selector(server: Server) -> None:
    server.kubectl("create", "job", "made", "--image=busybox", "--", "true")
    try:
        shown = server.kubectl("get", "job", "made", "-o", "jsonpath={.spec.selector.matchLabels}")
        uid = server.kubectl("get", "job", "made", "-o", "jsonpath={.metadata.uid}").stdout
        assert json.loads(shown.stdout) == {"batch.kubernetes.io/controller-uid": uid}
        replacement = server.kubectl(
            "get", "job", "made", "-o", "jsonpath={.spec.podReplacementPolicy}"
        )
        assert replacement.stdout == "TerminatingOrFailed"
    finally:
        server.kubectl("delete", "job", "made", "--wait=false")
