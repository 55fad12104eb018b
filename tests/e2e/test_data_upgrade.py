"""A data directory of an earlier release (LMDB format 1: namespace and name parted by a
NUL) is upgraded when a server starts on it: every object kept with its uid and
resourceVersion, watches resume from an old resourceVersion, lists come out in kube's
order."""

from __future__ import annotations

import json
from pathlib import Path

import requests

from tests.e2e.conftest import session_for, start_server
from tests.storage.test_lmdb_format import downgrade, raw_keys

NAMESPACES = ("up", "up-b", "upb")


def _create(session: requests.Session, url: str, path: str, body: dict) -> dict:
    r = session.post(url + path, json=body)
    assert r.status_code == 201, r.text
    return r.json()


def test_a_format_1_data_directory_is_upgraded_by_two_workers(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_server(data, "--storage-backend=lmdb", "--workers=1")
    admin = session_for(server, cert=server.admin_cert)
    made = {}
    try:
        for ns in NAMESPACES:
            _create(admin, server.url, "/api/v1/namespaces", {"metadata": {"name": ns}})
            body = {"metadata": {"name": "cm", "labels": {"upgrade": "yes"}}, "data": {"k": ns}}
            made[ns] = _create(admin, server.url, f"/api/v1/namespaces/{ns}/configmaps", body)
    finally:
        server.stop()
    db = str(data / "db")
    downgrade(db)
    assert b"/core/configmaps/up\x00cm" in raw_keys(db)
    # Two workers and their writer open the environment together; one upgrades it.
    server = start_server(data, "--storage-backend=lmdb", "--workers=2")
    admin = session_for(server, cert=server.admin_cert)
    try:
        listed = admin.get(server.url + "/api/v1/configmaps?labelSelector=upgrade%3Dyes")
        assert listed.status_code == 200
        items = listed.json()["items"]
        # kube's key order: "up-b/" before "up/" before "upb/".
        assert [i["metadata"]["namespace"] for i in items] == ["up-b", "up", "upb"]
        for item in items:
            before = made[item["metadata"]["namespace"]]["metadata"]
            assert item["metadata"]["uid"] == before["uid"]
            assert item["metadata"]["resourceVersion"] == before["resourceVersion"]
        got = admin.get(server.url + "/api/v1/namespaces/up/configmaps/cm")
        assert got.status_code == 200 and got.json()["data"] == {"k": "up"}
        # A watch from before the upgrade replays the change log, keys and all.
        first = made["up"]["metadata"]["resourceVersion"]
        watch = admin.get(
            server.url + "/api/v1/configmaps",
            params={
                "watch": "1",
                "resourceVersion": first,
                "timeoutSeconds": "1",
                "labelSelector": "upgrade=yes",
            },
        )
        events = [json.loads(line) for line in watch.text.splitlines() if line]
        assert [(e["type"], e["object"]["metadata"]["namespace"]) for e in events] == [
            ("ADDED", "up-b"),
            ("ADDED", "upb"),
        ]
        updated = admin.put(
            server.url + "/api/v1/namespaces/up-b/configmaps/cm",
            json={**made["up-b"], "data": {"k": "new"}},
        )
        assert updated.status_code == 200, updated.text
    finally:
        server.stop()
    assert all(b"\x00" not in k for k in raw_keys(db))
