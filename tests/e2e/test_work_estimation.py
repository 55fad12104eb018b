"""Priority and fairness's work estimates on a real server: big lists take several seats,
writes watched by many keep seats after they end, a watch holds its seat only while it
starts, and the other long-running requests pass unclassified (as kube-apiserver)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server

API = "/apis/flowcontrol.apiserver.platform.io/v1"
NS = "/api/v1/namespaces/big"
# A list at a revision far ahead waits (~3 s) for it, holding its seats meanwhile.
SLOW = NS + "/configmaps?resourceVersion=99999999&resourceVersionMatch=NotOlderThan"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("estimates")
    tokens = root / "tokens.csv"
    tokens.write_text("t-lister,lister,u1,\nt-bob,bob,u2,\n")
    # One dispatcher's seats (under --workers each worker has a share); objects are
    # counted every second instead of every minute.
    server = start_server(
        root / "data",
        "--workers=1",
        "--etcd-count-metric-poll-period=1s",
        "--token-auth-file",
        str(tokens),
    )
    admin = session_for(server, cert=server.admin_cert)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "big"}}
    assert admin.post(server.url + "/api/v1/namespaces", json=ns).status_code == 201
    for i in range(400):  # ~400 KB of ConfigMaps: a list of them is 4 seats' worth
        cm = {"metadata": {"name": f"cm-{i}"}, "data": {"v": "x" * 1000}}
        assert admin.post(server.url + NS + "/configmaps", json=cm).status_code == 201
    _lists_level(admin, server)
    time.sleep(1.5)  # counted, and the filter has the new level
    yield server
    server.stop()


def _lists_level(admin: requests.Session, server: Server) -> None:
    """22 seats (9 shares of 254 over 600, none lent or borrowed) in one queue; a request
    takes at most 4 of them (15% of 22): for user ``lister``."""
    level = {
        "apiVersion": "flowcontrol.apiserver.platform.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "lists"},
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 9,
                "borrowingLimitPercent": 0,
                "limitResponse": {
                    "type": "Queue",
                    "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 10},
                },
            },
        },
    }
    rule = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"]}
    schema = {
        "apiVersion": "flowcontrol.apiserver.platform.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": "listers"},
        "spec": {
            "priorityLevelConfiguration": {"name": "lists"},
            "matchingPrecedence": 500,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [
                {
                    "subjects": [{"kind": "User", "user": {"name": "lister"}}],
                    "resourceRules": [rule],
                }
            ],
        },
    }
    r = admin.post(server.url + API + "/prioritylevelconfigurations", json=level)
    assert r.status_code == 201, r.text
    assert admin.post(server.url + API + "/flowschemas", json=schema).status_code == 201


def _metric(text: str, name: str, **labels: str) -> float:
    """One sample of ``/metrics``, its labels given in any order."""
    for line in text.splitlines():
        match = re.fullmatch(rf"{name}\{{(.*)\}} (\S+)", line)
        if match is None:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        if found == labels:
            return float(match.group(2))
    return 0.0


LISTERS = {"flow_schema": "listers", "priority_level": "lists"}


@pytest.mark.slow
def test_big_lists_take_several_seats_of_their_level(server: Server) -> None:
    """Six slow lists of ~400 KB take 4 seats each: five fill 20 of the level's 22
    seats, the sixth waits for seats although fewer than 22 requests run."""
    admin = session_for(server, cert=server.admin_cert)
    before = admin.get(server.url + "/metrics").text
    assert (
        _metric(before, "apiserver_flowcontrol_nominal_limit_seats", priority_level="lists") == 22
    )
    lister = [session_for(server, token="t-lister") for _ in range(6)]
    with ThreadPoolExecutor(6) as pool:
        futures = []
        for session in lister:
            futures.append(pool.submit(session.get, server.url + SLOW, timeout=30))
            time.sleep(0.1)  # in order: the sixth is the one that waits
        time.sleep(0.8)
        during = admin.get(server.url + "/metrics").text
        answers = [f.result() for f in futures]
    assert [r.status_code for r in answers] == [504] * 6  # the revision never came
    executing = "apiserver_flowcontrol_current_executing_seats"
    assert _metric(during, executing, **LISTERS) == 20
    assert _metric(during, "apiserver_flowcontrol_current_executing_requests", **LISTERS) == 5
    assert _metric(during, "apiserver_flowcontrol_current_inqueue_requests", **LISTERS) == 1
    after = admin.get(server.url + "/metrics").text
    bucket = "apiserver_flowcontrol_work_estimated_seats_bucket"
    assert _metric(after, bucket, **LISTERS, le="2") == 0
    assert _metric(after, bucket, **LISTERS, le="4") == 6
    assert _metric(after, executing, **LISTERS) == 0


def test_a_write_watched_by_many_is_estimated_by_its_watchers(server: Server) -> None:
    """25 watches of a namespace's ConfigMaps: a write there keeps 3 seats (one per 10
    watches) after it ends, and its level records the 25 watchers."""
    admin = session_for(server, cert=server.admin_cert)
    bob = session_for(server, token="t-bob")
    watchers = [session_for(server, cert=server.admin_cert) for _ in range(25)]
    # From the list's revision: on etcd, a revision before the watch cache's window is
    # 410 Expired at once, as in kube's cacher, and the stream ends.
    start = admin.get(server.url + NS + "/configmaps").json()["metadata"]["resourceVersion"]
    url = server.url + NS + f"/configmaps?watch=1&resourceVersion={start}&timeoutSeconds=20"
    streams = [w.get(url, stream=True, timeout=30) for w in watchers]
    try:
        assert all(s.status_code == 200 for s in streams)
        cm = {"metadata": {"name": "watched"}, "data": {"v": "1"}}
        r = bob.post(server.url + NS + "/configmaps", json=cm)
        assert r.status_code == 201, r.text
        text = admin.get(server.url + "/metrics").text
    finally:
        for s in streams:
            s.close()
    default = {"flow_schema": "global-default", "priority_level": "global-default"}
    samples = "apiserver_flowcontrol_watch_count_samples"
    assert _metric(text, samples + "_bucket", **default, le="10") == 0
    assert _metric(text, samples + "_bucket", **default, le="100") == 1
    assert _metric(text, samples + "_sum", **default) == 25
    seats = "apiserver_flowcontrol_work_estimated_seats_bucket"
    assert _metric(text, seats, **default, le="2") == 0
    assert _metric(text, seats, **default, le="4") == 1


def test_a_watch_runs_only_while_it_starts(server: Server) -> None:
    """A watch is dispatched and executing while it sends its initial state, then
    holds nothing: its level shows no request executing while it stays open."""
    admin = session_for(server, cert=server.admin_cert)
    lister = session_for(server, token="t-lister")
    before = admin.get(server.url + "/metrics").text
    dispatched = "apiserver_flowcontrol_dispatched_requests_total"
    url = server.url + NS + "/configmaps?watch=1&timeoutSeconds=20"
    with lister.get(url, stream=True, timeout=30) as stream:
        assert stream.status_code == 200
        assert "X-Platform-PF-FlowSchema-UID" in stream.headers
        next(stream.iter_lines())  # the initial state is being sent
        time.sleep(0.3)
        during = admin.get(server.url + "/metrics").text
    executing = "apiserver_flowcontrol_current_executing_requests"
    assert _metric(during, executing, **LISTERS) == 0
    assert _metric(during, "apiserver_flowcontrol_current_executing_seats", **LISTERS) == 0
    assert _metric(during, dispatched, **LISTERS) == _metric(before, dispatched, **LISTERS) + 1
    seats = "apiserver_flowcontrol_work_estimated_seats_bucket"
    assert (
        _metric(during, seats, **LISTERS, le="4") == _metric(before, seats, **LISTERS, le="4") + 1
    )


def test_logs_and_exec_pass_unclassified(server: Server) -> None:
    """kube's filter lets long-running requests other than watches through without a
    flow schema: no headers on their answers."""
    bob = session_for(server, token="t-bob")
    for sub in ("log", "exec?command=ls", "attach", "portforward"):
        r = bob.get(server.url + f"/api/v1/namespaces/big/pods/nope/{sub}")
        assert r.status_code in (400, 404), (sub, r.status_code, r.text)
        assert "X-Platform-PF-FlowSchema-UID" not in r.headers, sub
    r = bob.get(server.url + "/api/v1/namespaces/big/pods/nope")
    assert r.status_code == 404
    assert "X-Platform-PF-FlowSchema-UID" in r.headers
