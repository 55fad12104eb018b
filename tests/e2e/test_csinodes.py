"""storage/v1 CSINodes: answers as kube-apiserver v1.36 gave them to the same requests
(reference; recorded in tests/registry/fixtures/csinode_kube.json, group names
rebranded here)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.answers import assert_create_answered
from tests.e2e.conftest import Server

KUBE = json.loads(
    json.dumps(
        json.loads(
            (Path(__file__).parents[1] / "registry" / "fixtures" / "csinode_kube.json").read_text()
        )
    ).replace("storage.k8s.io", "storage.platform.io")
)
BASE = "/apis/storage.platform.io/v1/csinodes"


@pytest.mark.parametrize("case", KUBE["create"], ids=[c["name"] for c in KUBE["create"]])
def test_creates_are_answered_as_kube_answered_them(
    server: Server, admin: requests.Session, case: dict[str, Any]
) -> None:
    assert_create_answered(admin, server.url + BASE, case, lambda obj: obj["spec"])


def test_a_registered_driver_changes_only_its_count(
    server: Server, admin: requests.Session
) -> None:
    driver = {"name": "a.com", "nodeID": "1", "allocatable": {"count": 1}}
    made = admin.post(
        server.url + BASE, json={"metadata": {"name": "upd"}, "spec": {"drivers": [driver]}}
    )
    url = server.url + BASE + "/upd"
    try:
        counted = copy.deepcopy(made.json())
        counted["spec"]["drivers"][0]["allocatable"]["count"] = 3
        got = admin.put(url, json=counted)
        assert [got.status_code, got.json()["spec"]] == KUBE["update"]["count"]
        moved = copy.deepcopy(got.json())
        moved["spec"]["drivers"][0]["nodeID"] = "2"
        refused = admin.put(url, json=moved)
        assert [refused.status_code, refused.json()["message"]] == KUBE["update"]["nodeid"]
        added = copy.deepcopy(got.json())
        added["spec"]["drivers"].append({"name": "b.com", "nodeID": "9"})
        more = admin.put(url, json=added)
        assert [more.status_code, more.json()["spec"]] == KUBE["update"]["add"]
    finally:
        admin.delete(url)
