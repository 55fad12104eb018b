"""``--event-ttl``: Events of both APIs are gone their TTL after their last write."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.answers import status
from tests.e2e.conftest import Server, session_for, start_server

CORE = "/api/v1/namespaces/default/events"
NEW = "/apis/events.platform.io/v1/namespaces/default/events"


@pytest.fixture
def short_ttl(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "data", "--event-ttl", "2s")
    yield running
    running.stop()


def test_events_expire_after_the_ttl(short_ttl: Server) -> None:
    session = session_for(short_ttl, cert=short_ttl.admin_cert)
    core = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "old-news"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Tested",
        "message": "expires",
        "type": "Normal",
    }
    assert session.post(short_ttl.url + CORE, json=core).status_code == 201
    new = {
        "apiVersion": "events.platform.io/v1",
        "kind": "Event",
        "metadata": {"name": "new-news"},
        "eventTime": "2026-11-30T00:00:00.000000Z",
        "reportingController": "tests/e2e",
        "reportingInstance": "tests-1",
        "action": "Test",
        "reason": "Tested",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
        "type": "Normal",
    }
    made = session.post(short_ttl.url + NEW, json=new)
    assert made.status_code == 201, made.text
    assert session.get(short_ttl.url + CORE + "/old-news").status_code == 200
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and session.get(short_ttl.url + CORE).json()["items"]:
        time.sleep(0.2)
    gone = session.get(short_ttl.url + CORE + "/old-news")
    assert gone.status_code == 404
    assert gone.json() == status(
        404, "NotFound", 'events "old-news" not found', {"name": "old-news", "kind": "events"}
    )
    assert session.get(short_ttl.url + NEW + "/new-news").status_code == 404
