"""apps/v1 ControllerRevisions: answers as kube-apiserver v1.36 gave them to the same
requests (reference; recorded in tests/registry/fixtures/controllerrevision_kube.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.answers import assert_create_answered
from tests.e2e.conftest import Server

KUBE = json.loads(
    (
        Path(__file__).parents[1] / "registry" / "fixtures" / "controllerrevision_kube.json"
    ).read_text()
)
BASE = "/apis/apps/v1/namespaces/default/controllerrevisions"


@pytest.mark.parametrize("case", KUBE["create"], ids=[c["name"] for c in KUBE["create"]])
def test_creates_are_answered_as_kube_answered_them(
    server: Server, admin: requests.Session, case: dict[str, Any]
) -> None:
    assert_create_answered(
        admin, server.url + BASE, case, lambda obj: {k: obj.get(k) for k in ("data", "revision")}
    )


def test_data_is_immutable_and_revision_is_not(server: Server, admin: requests.Session) -> None:
    body = {"metadata": {"name": "upd"}, "data": {"a": 1}, "revision": 1}
    made = admin.post(server.url + BASE, json=body).json()
    try:
        changed = admin.put(server.url + BASE + "/upd", json={**made, "data": {"a": 2}})
        assert [changed.status_code, changed.json()["message"]] == KUBE["update"]["data"]
        bumped = admin.put(server.url + BASE + "/upd", json={**made, "revision": 5})
        assert [bumped.status_code, bumped.json()["revision"]] == KUBE["update"]["revision"]
    finally:
        admin.delete(server.url + BASE + "/upd")
