"""storage/v1 CSIDrivers: defaults and answers as kube-apiserver v1.36 gave them to the
same requests (reference; recorded in tests/registry/fixtures/csidriver_kube.json, group
names rebranded here)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.answers import assert_create_answered
from tests.e2e.conftest import Server

FIXTURE = Path(__file__).parents[1] / "registry" / "fixtures" / "csidriver_kube.json"
KUBE = json.loads(FIXTURE.read_text().replace("storage.k8s.io", "storage.platform.io"))
BASE = "/apis/storage.platform.io/v1/csidrivers"


def _shown(obj: dict[str, Any]) -> dict[str, Any]:
    return {"spec": obj["spec"], "generation": obj["metadata"].get("generation")}


@pytest.mark.parametrize("case", KUBE["create"], ids=[c["name"] for c in KUBE["create"]])
def test_creates_are_answered_as_kube_answered_them(
    server: Server, admin: requests.Session, case: dict[str, Any]
) -> None:
    assert_create_answered(admin, server.url + BASE, case, _shown)


def test_attach_and_lifecycle_modes_never_change(server: Server, admin: requests.Session) -> None:
    made = admin.post(server.url + BASE, json={"metadata": {"name": "upd.example.com"}}).json()
    url = server.url + BASE + "/upd.example.com"
    try:
        changed = copy.deepcopy(made)
        changed["spec"].update(attachRequired=False, volumeLifecycleModes=["Ephemeral"])
        refused = admin.put(url, json=changed)
        assert [refused.status_code, refused.json()["message"]] == KUBE["update"]["immutable"]
        mounted = copy.deepcopy(made)
        mounted["spec"]["podInfoOnMount"] = True
        got = admin.put(url, json=mounted)
        shown = {"generation": got.json()["metadata"].get("generation"), "podInfoOnMount": True}
        assert [got.status_code, shown] == KUBE["update"]["mutable"]
    finally:
        admin.delete(url)


def test_token_requests_without_secrets_get_kube_s_warning(
    server: Server, admin: requests.Session
) -> None:
    """kube warns on create only (the reference printed it for create, not for apply's
    later update)."""
    spec = {"tokenRequests": [{"audience": "a"}]}
    body = {"metadata": {"name": "warn.example.com"}, "spec": spec}
    created = admin.post(server.url + BASE + "?dryRun=All", json=body)
    assert created.status_code == 201
    assert created.headers["Warning"] == (
        '299 - "spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, '
        'set to true to prevent possible logging of tokens in volume attributes"'
    )
    spec["serviceAccountTokenInSecrets"] = False
    quiet = admin.post(server.url + BASE + "?dryRun=All", json=body)
    assert quiet.status_code == 201 and "Warning" not in quiet.headers
