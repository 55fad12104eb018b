"""Watch streams: initial events, replay from a revision, 410, selectors, bookmarks, timeouts."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests
from kubernetes import client, config, watch

from tests.e2e.conftest import VENV_BIN, Server, session_for, start_server
from tests.e2e.crds import crd_manifest, create_crd, crontab, delete_crd, ns_path
from tests.e2e.test_http import status
from tests.e2e.test_list import add, make_namespace


def events(session: requests.Session, url: str, **params: str) -> Iterator[dict[str, Any]]:
    response = session.get(url, params={"watch": "1", **params}, stream=True, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "application/json"
    for line in response.iter_lines():
        if line:
            yield json.loads(line)


def take(stream: Iterator[dict[str, Any]], n: int) -> list[tuple[str, str]]:
    out = []
    for event in stream:
        name = event["object"].get("metadata", {}).get("name", event["object"].get("message", ""))
        out.append((event["type"], name))
        if len(out) == n:
            break
    return out


def test_initial_state_then_changes(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "watch-a")
    add(admin, server, base, "before")
    stream = events(admin, server.url + base)
    assert take(stream, 1) == [("ADDED", "before")]
    add(admin, server, base, "after")
    admin.patch(
        server.url + base + "/after",
        data=b'{"data":{"x":"1"}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    gone = admin.delete(server.url + base + "/before").json()
    assert take(stream, 3) == [("ADDED", "after"), ("MODIFIED", "after"), ("DELETED", "before")]
    del gone


def test_replay_from_a_revision_without_gaps_or_duplicates(
    server: Server, admin: requests.Session
) -> None:
    base = make_namespace(admin, server, "watch-b")
    first = add(admin, server, base, "one")
    for name in ("two", "three"):
        add(admin, server, base, name)
    admin.delete(server.url + base + "/one")
    stream = events(admin, server.url + base, resourceVersion=first["metadata"]["resourceVersion"])
    seen = []
    for event in stream:
        seen.append(event)
        if len(seen) == 3:
            break
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in seen] == [
        ("ADDED", "two"),
        ("ADDED", "three"),
        ("DELETED", "one"),
    ]
    revisions = [int(e["object"]["metadata"]["resourceVersion"]) for e in seen]
    assert revisions == sorted(revisions) and len(set(revisions)) == 3
    # DELETED carries the last state, stamped with the deletion's revision.
    assert revisions[2] > int(first["metadata"]["resourceVersion"])


def test_selector_transitions(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "watch-c")
    created = add(admin, server, base, "x", {"tier": "web"})
    # From just before the object existed (a fixed old revision would fall out of the
    # watch history window of a server that has run for minutes).
    since = str(int(created["metadata"]["resourceVersion"]) - 1)
    stream = events(admin, server.url + base, labelSelector="tier=db", resourceVersion=since)
    patch = {"Content-Type": "application/merge-patch+json"}
    admin.patch(
        server.url + base + "/x", data=b'{"metadata":{"labels":{"tier":"db"}}}', headers=patch
    )
    admin.patch(server.url + base + "/x", data=b'{"data":{"k":"v"}}', headers=patch)
    admin.patch(
        server.url + base + "/x", data=b'{"metadata":{"labels":{"tier":"web"}}}', headers=patch
    )
    assert take(stream, 3) == [("ADDED", "x"), ("MODIFIED", "x"), ("DELETED", "x")]


def test_bookmarks_timeout_and_initial_events(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "watch-d")
    add(admin, server, base, "a")
    start = time.monotonic()
    got = list(
        events(
            admin,
            server.url + base,
            timeoutSeconds="1",
            allowWatchBookmarks="true",
            resourceVersion="0",
        )
    )
    assert time.monotonic() - start < 5
    # kube v1.36 defaults a watch from "" or "0" with WatchList on to a watch-list
    # (SetListOptionsDefaults): the initial events end with their bookmark; the
    # timeout's bookmark follows.
    assert [e["type"] for e in got] == ["ADDED", "BOOKMARK", "BOOKMARK"]
    assert got[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"
    assert (
        set(got[2]["object"]["metadata"]) == {"resourceVersion"}
        and got[2]["object"]["kind"] == "ConfigMap"
    )
    got = list(
        events(
            admin,
            server.url + base,
            timeoutSeconds="1",
            allowWatchBookmarks="true",
            sendInitialEvents="true",
            resourceVersionMatch="NotOlderThan",
            resourceVersion="",
        )
    )
    assert got[0]["type"] == "ADDED"
    assert got[1]["type"] == "BOOKMARK"
    assert got[1]["object"]["metadata"]["annotations"] == {
        "platform.io/initial-events-end": "true",
        "k8s.io/initial-events-end": "true",  # what stock client-go waits for
    }


def _bookmark_line(session: requests.Session, url: str) -> bytes:
    params = {"watch": "1", "allowWatchBookmarks": "true", "timeoutSeconds": "1"}
    lines = session.get(url, params=params, timeout=30).content.splitlines()
    return next(line for line in lines if b"initial-events-end" in line)


def test_bookmarks_are_written_as_kube_writes_them(server: Server, admin: requests.Session) -> None:
    """The initial-events-end bookmark byte for byte: a built-in kind's is a typed struct
    (TypeMeta, then ObjectMeta's field order), a custom resource's an unstructured map
    (every key sorted); the annotations are a map either way."""
    base = make_namespace(admin, server, "watch-bookmark-shape")
    add(admin, server, base, "a")
    line = _bookmark_line(admin, server.url + base)
    revision = json.loads(line)["object"]["metadata"]["resourceVersion"]
    marks = '{"k8s.io/initial-events-end":"true","platform.io/initial-events-end":"true"}'
    assert line.decode() == (
        '{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":'
        f'{{"resourceVersion":"{revision}","annotations":{marks}}}}}}}'
    )
    group = "bookmarks.example.com"
    create_crd(admin, server, crd_manifest(group))
    try:
        path = server.url + ns_path(group, base.split("/")[4])
        assert admin.post(path, json=crontab("c", group)).status_code == 201
        line = _bookmark_line(admin, path)
        revision = json.loads(line)["object"]["metadata"]["resourceVersion"]
        assert line.decode() == (
            f'{{"type":"BOOKMARK","object":{{"apiVersion":"{group}/v1","kind":"CronTab",'
            f'"metadata":{{"annotations":{marks},"resourceVersion":"{revision}"}}}}}}'
        )
    finally:
        delete_crd(admin, server, f"crontabs.{group}")


def test_a_watch_list_from_a_future_revision_ends_with_an_error_event(
    server: Server, admin: requests.Session
) -> None:
    """The stream has begun when the wait for the revision runs out: kube's cacher
    answers with one ERROR event carrying the 504 (ours wrote a bare Status into the
    200 stream)."""
    base = make_namespace(admin, server, "watch-future")
    params = {"resourceVersion": str(2**62), "sendInitialEvents": "true"}
    params |= {"resourceVersionMatch": "NotOlderThan", "allowWatchBookmarks": "true"}
    got = list(events(admin, server.url + base, **params))
    assert [e["type"] for e in got] == ["ERROR"]
    status = got[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 504, "Timeout")
    assert status["message"].startswith(f"Timeout: Too large resource version: {2**62}, ")
    assert status["details"]["retryAfterSeconds"] == 1


def test_without_initial_events_a_watch_starts_now(server: Server, admin: requests.Session) -> None:
    """``sendInitialEvents=false`` (kube v1.36: no synthetic ADDED events), with no
    resourceVersion (the newest) and with ``0`` (any)."""
    base = make_namespace(admin, server, "watch-now")
    add(admin, server, base, "before")
    for version in ("", "0"):
        params = {"watch": "1", "sendInitialEvents": "false", "timeoutSeconds": "5"}
        params |= {"resourceVersionMatch": "NotOlderThan", "resourceVersion": version}
        response = admin.get(server.url + base, params=params, stream=True, timeout=30)
        assert response.status_code == 200  # the headers: the watch has started
        name = f"after{version}"
        add(admin, server, base, name)
        first = json.loads(next(line for line in response.iter_lines() if line))
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", name)
        response.close()


def test_watch_option_errors(server: Server, admin: requests.Session) -> None:
    r = admin.get(
        server.url + "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true"
    )
    assert r.status_code == 422
    assert r.json()["message"] == (
        'ListOptions.meta.platform.io "" is invalid: resourceVersionMatch: Forbidden: '
        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
    )


def test_too_old_resource_version_is_an_error_event(tmp_path: Path) -> None:
    """LMDB serves watches from its change log, which the window compacts (as kube with
    its watch cache off, on etcd); on etcd the watch cache keeps each resource's history
    (test_etcd_backend.py)."""
    running = start_server(
        tmp_path / "data", "--storage-backend=lmdb", "--etcd-compaction-interval", "1s"
    )
    try:
        admin = session_for(running, cert=running.admin_cert)
        base = make_namespace(admin, running, "stale")
        first = add(admin, running, base, "a")
        add(admin, running, base, "b")
        time.sleep(2.5)
        add(admin, running, base, "c")
        got = list(
            events(admin, running.url + base, resourceVersion=first["metadata"]["resourceVersion"])
        )
        assert len(got) == 1 and got[0]["type"] == "ERROR"
        status = got[0]["object"]
        assert status["code"] == 410 and status["reason"] == "Expired"
        assert status["message"].startswith(
            f"too old resource version: {first['metadata']['resourceVersion']} ("
        )
    finally:
        running.stop()


def test_legacy_watch_path_of_one_object(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "watch-e")
    add(admin, server, base, "one")
    add(admin, server, base, "two")
    url = server.url + "/api/v1/watch/namespaces/watch-e/configmaps/two"
    assert take(events(admin, url), 1) == [("ADDED", "two")]


def test_python_client_watch(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "watch-f")
    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    core = client.CoreV1Api(api)
    w = watch.Watch()

    def later() -> None:
        time.sleep(0.3)
        add(admin, server, base, "from-thread")

    threading.Thread(target=later).start()
    seen = []
    for event in w.stream(core.list_namespaced_config_map, "watch-f", timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        if seen[-1] == ("ADDED", "from-thread"):
            w.stop()
    assert ("ADDED", "from-thread") in seen
    api.close()


def test_kubectl_get_watch(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "watch-g")
    cmd = [
        str(VENV_BIN / "kubectl"),
        "--kubeconfig",
        str(server.kubeconfig),
        "get",
        "cm",
        "-n",
        "watch-g",
        "-w",
        "--output-watch-events",
        "--request-timeout=4s",
    ]
    add(admin, server, base, "first")  # kubectl has listed once it shows this one
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    lines = [proc.stdout.readline().split()[:2] for _ in range(2)]
    assert lines == [["EVENT", "NAME"], ["ADDED", "first"]]
    add(admin, server, base, "kw")
    admin.delete(server.url + base + "/kw")
    out, _ = proc.communicate(timeout=15)
    lines += [line.split()[:2] for line in out.splitlines()]
    assert ["ADDED", "kw"] in lines and ["DELETED", "kw"] in lines


def test_watch_sees_writes_of_another_process(fresh_server: Server) -> None:
    other = start_server(fresh_server.data_dir)
    try:
        one = session_for(fresh_server, cert=fresh_server.admin_cert)
        two = session_for(other, cert=other.admin_cert)
        base = make_namespace(one, fresh_server, "cross")
        listed = one.get(fresh_server.url + base).json()["metadata"]["resourceVersion"]
        stream = events(one, fresh_server.url + base, resourceVersion=listed)
        written: list[float] = []
        received: list[float] = []

        names: list[str] = []

        def consume() -> None:
            for event in take_iter(stream, 20):
                received.append(time.monotonic())
                names.append(event["object"]["metadata"]["name"])

        reader = threading.Thread(target=consume)
        reader.start()
        for i in range(20):
            written.append(time.monotonic())
            add(two, other, base, f"x{i}")
            time.sleep(0.02)
        reader.join(timeout=10)
        # Every write made through the other process arrives, in order (latency: benchmarks/).
        assert len(received) == 20
        assert names == [f"x{i}" for i in range(20)]
    finally:
        other.stop()


def take_iter(stream: Iterator[dict[str, Any]], n: int) -> Iterator[dict[str, Any]]:
    for i, event in enumerate(stream):
        yield event
        if i + 1 == n:
            return


TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def _table_events(admin: requests.Session, url: str, n: int, **params: str) -> list[dict[str, Any]]:
    query = {"watch": "1", "labelSelector": "w=t", **params}
    response = admin.get(url, params=query, headers=TABLE, stream=True, timeout=30)
    assert response.status_code == 200, response.text
    lines = (json.loads(line) for line in response.iter_lines() if line)
    out = [next(lines) for _ in range(n)]
    response.close()
    return out


def test_watch_as_table_is_kubes_stream_of_tables(server: Server, admin: requests.Session) -> None:
    """As kube's watch encoder: the first Table carries the columns and later ones
    ``null``, each Table has its object's resourceVersion, rows hold
    PartialObjectMetadata unless includeObject says otherwise, and a bookmark is a Table
    too (a reflector asking for Tables never sees the end of its initial events: kube's
    upstream e2e case counts on it)."""
    base = make_namespace(admin, server, "watch-table")
    for name in ("t1", "t2"):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        body["metadata"]["labels"] = {"w": "t"}
        assert admin.post(server.url + base, json=body).status_code == 201
    initial = {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"}
    url = server.url + base
    for _ in range(2):  # a second watcher gets its own first Table with columns
        first, second, bookmark = _table_events(
            admin, url, 3, allowWatchBookmarks="true", **initial
        )
        assert [first["type"], second["type"], bookmark["type"]] == ["ADDED", "ADDED", "BOOKMARK"]
        got = admin.get(url + "/t1", headers=TABLE).json()
        assert first["object"]["columnDefinitions"] == got["columnDefinitions"]
        assert second["object"]["columnDefinitions"] is None
        for event in (first, second):
            table = event["object"]
            (row,) = table["rows"]
            assert row["object"]["kind"] == "PartialObjectMetadata"
            rv = row["object"]["metadata"]["resourceVersion"]
            assert table["metadata"] == {"resourceVersion": rv}
        assert {k: v for k, v in first["object"].items() if k != "rows"} == {
            k: v for k, v in got.items() if k != "rows"
        }
        marker = bookmark["object"]
        assert (marker["kind"], marker["columnDefinitions"]) == ("Table", None)
        (row,) = marker["rows"]
        assert row["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"
    (full,) = _table_events(admin, url, 1, includeObject="Object", **initial)
    assert full["object"]["rows"][0]["object"]["kind"] == "ConfigMap"
    bad = admin.get(url, params={"watch": "1", "includeObject": "Bogus"}, headers=TABLE)
    assert bad.status_code == 400
    assert bad.json() == status(
        400,
        "BadRequest",
        "Unable to convert to Table as requested: includeObject: Invalid value: "
        "\"Bogus\": must be 'Metadata', 'Object', 'None', or empty",
    )


def test_watch_as_partial_metadata_lists_ends_at_its_first_event(
    server: Server, admin: requests.Session
) -> None:
    """kube's watch cannot make a PartialObjectMetadataList of one object: the stream
    starts (200), then ends without a byte when its first event comes (reference)."""
    base = make_namespace(admin, server, "watch-partial-list")
    url = server.url + base
    rv = admin.get(url).json()["metadata"]["resourceVersion"]
    for kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
        accept = f"application/json;as={kind};g=meta.platform.io;v=v1"
        params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "3"}
        r = admin.get(url, params=params, headers={"Accept": accept}, stream=True)
        assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
        add(admin, server, base, f"p-{kind.lower()}")
        started = time.monotonic()
        body = r.raw.read()
        if kind == "PartialObjectMetadata":
            first = json.loads(body.splitlines()[0])
            assert (first["type"], first["object"]["kind"]) == ("ADDED", kind)
        else:
            assert body == b"" and time.monotonic() - started < 2


def test_node_scoped_pod_watches_see_their_nodes_pods(
    server: Server, admin: requests.Session
) -> None:
    """A kubelet's watch (fieldSelector spec.nodeName=<node>, a watch-cache trigger in
    kube) hears the pods bound to its Node, a pod moving onto it as ADDED and off it as
    DELETED; the scheduler's (spec.nodeName=) hears the unbound ones."""
    pods = server.url + "/api/v1/namespaces/default/pods"
    now = admin.get(pods + "?limit=1").json()["metadata"]["resourceVersion"]

    def watch(node: str) -> Iterator[dict[str, Any]]:
        return events(admin, pods, fieldSelector=f"spec.nodeName={node}", resourceVersion=now)

    n1, n2, unbound = watch("trig-n1"), watch("trig-n2"), watch("")

    def pod(name: str, node: str = "") -> None:
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
        if node:
            spec["nodeName"] = node
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
        assert admin.post(pods, json=body).status_code == 201

    pod("trig-a")
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "trig-a"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "trig-n1"},
    }
    assert admin.post(pods + "/trig-a/binding", json=binding).status_code == 201
    pod("trig-b", "trig-n2")
    assert admin.delete(pods + "/trig-b?gracePeriodSeconds=0").status_code == 200
    pod("trig-last", "trig-n1")
    assert take(n1, 2) == [("ADDED", "trig-a"), ("ADDED", "trig-last")]
    # (a bound pod deleted with grace 0 is marked first, as kube's: MODIFIED, DELETED)
    assert take(n2, 3) == [("ADDED", "trig-b"), ("MODIFIED", "trig-b"), ("DELETED", "trig-b")]
    assert take(unbound, 2) == [("ADDED", "trig-a"), ("DELETED", "trig-a")]
    for name in ("trig-a", "trig-last"):
        admin.delete(pods + f"/{name}?gracePeriodSeconds=0")
