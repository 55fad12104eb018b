"""Graceful deletion of Pods, and deletes that finish without a write, on a real server.

Every answer here was first taken from the reference kube-apiserver v1.36 with the same
requests: a pod bound to a node terminates for its grace period (a later delete may
shorten it, a kubelet's ends it at 0); one never scheduled, or finished, goes at once
after its terminating state is written; an update that removes the last finalizer of a
deleting object deletes the stored state without writing the update.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import requests

from platform_api.timestamps import parse_timestamp
from tests.e2e.conftest import Server
from tests.e2e.test_list import make_namespace

MERGE = {"Content-Type": "application/merge-patch+json"}


def pods_url(server: Server, admin: requests.Session, name: str) -> str:
    return server.url + make_namespace(admin, server, name).replace("configmaps", "pods")


def make_pod(session: requests.Session, url: str, name: str, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if "finalizers" in spec:
        meta["finalizers"] = spec.pop("finalizers")
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }
    r = session.post(url, json=body)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def stamp(answer: requests.Response) -> tuple[int, str, int | None, float, int]:
    """(status, resourceVersion, grace period, deletion time, generation) of an answer."""
    meta = answer.json()["metadata"]
    when = parse_timestamp(meta.get("deletionTimestamp")) or 0.0
    grace = meta.get("deletionGracePeriodSeconds")
    return answer.status_code, meta["resourceVersion"], grace, when, meta["generation"]


class Watch:
    """The events of a watch from ``version``, collected on a thread until it times out."""

    def __init__(self, session: requests.Session, url: str, version: str) -> None:
        params = {"watch": "1", "resourceVersion": version, "timeoutSeconds": "2"}
        self.response = session.get(url, params=params, stream=True)
        assert self.response.status_code == 200
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.response.iter_lines():
            event = json.loads(line)
            self.events.append((event["type"], event["object"]["metadata"]))

    def done(self) -> list[tuple[str, dict[str, Any]]]:
        self.thread.join(timeout=10)
        return self.events


def test_a_bound_pod_terminates_for_its_grace_period(
    server: Server, admin: requests.Session
) -> None:
    url = pods_url(server, admin, "grace-bound")
    created = make_pod(admin, url, "a", nodeName="n1")
    assert created["metadata"]["generation"] == 1
    code, version, grace, when, generation = stamp(admin.delete(f"{url}/a"))
    assert (code, grace, generation) == (200, 30, 2)
    started = parse_timestamp(created["metadata"]["creationTimestamp"]) or 0.0
    assert 29 <= when - started <= 31  # now plus the pod's default 30 s
    assert stamp(admin.get(f"{url}/a")) == (200, version, 30, when, 2)
    # A longer period, or none, leaves it as it is; a shorter one moves the time back.
    assert stamp(admin.delete(f"{url}/a", params={"gracePeriodSeconds": "60"})) == (
        200,
        version,
        30,
        when,
        2,
    )
    code, shortened, grace, moved, _ = stamp(
        admin.delete(f"{url}/a", params={"gracePeriodSeconds": "10"})
    )
    assert (code, grace, moved) == (200, 10, when - 20) and shortened != version
    assert stamp(admin.delete(f"{url}/a")) == (200, shortened, 10, moved, 2)
    # Its kubelet's delete at 0 (here in a DeleteOptions body) ends it.
    code, _, grace, last, generation = stamp(
        admin.delete(f"{url}/a", json={"gracePeriodSeconds": 0})
    )
    assert (code, grace, last, generation) == (200, 0, when - 30, 2)
    assert admin.get(f"{url}/a").status_code == 404


def test_pods_nothing_runs_go_at_once(server: Server, admin: requests.Session) -> None:
    url = pods_url(server, admin, "grace-at-once")
    created = make_pod(admin, url, "never-scheduled")
    watch = Watch(admin, url, created["metadata"]["resourceVersion"])
    answer = admin.delete(f"{url}/never-scheduled")
    code, version, grace, when, generation = stamp(answer)
    assert (code, grace, generation) == (200, 0, 2)
    assert when == parse_timestamp(answer.json()["metadata"]["deletionTimestamp"])
    events = watch.done()
    # The terminating state is written, then deleted: the answer is at the deletion's.
    assert [(kind, meta["deletionGracePeriodSeconds"]) for kind, meta in events] == [
        ("MODIFIED", 0),
        ("DELETED", 0),
    ]
    assert events[1][1]["resourceVersion"] == version
    assert int(events[0][1]["resourceVersion"]) == int(version) - 1
    finished = make_pod(admin, url, "finished", nodeName="n1")
    finished["status"]["phase"] = "Succeeded"
    assert admin.put(f"{url}/finished/status", json=finished).status_code == 200
    no_period = make_pod(admin, url, "no-period", nodeName="n1", terminationGracePeriodSeconds=0)
    assert no_period["spec"]["terminationGracePeriodSeconds"] == 0
    for name in ("finished", "no-period"):
        assert stamp(admin.delete(f"{url}/{name}"))[2] == 0
        assert admin.get(f"{url}/{name}").status_code == 404


def test_finalizers_and_grace_periods_together(server: Server, admin: requests.Session) -> None:
    url = pods_url(server, admin, "grace-finalizers")
    unfinalize = json.dumps({"metadata": {"finalizers": None}})
    make_pod(admin, url, "f", finalizers=["x/y"])
    code, version, grace, _, _ = stamp(admin.delete(f"{url}/f"))
    assert (code, grace) == (200, 0)
    assert stamp(admin.delete(f"{url}/f"))[1] == version  # nothing more to write
    # The update that takes the last finalizer deletes it, and answers unwritten.
    removed = admin.patch(f"{url}/f", data=unfinalize, headers=MERGE)
    assert removed.status_code == 200 and "finalizers" not in removed.json()["metadata"]
    assert removed.json()["metadata"]["resourceVersion"] == version
    assert admin.get(f"{url}/f").status_code == 404
    # Bound: the finalizer goes, the grace period still holds it.
    make_pod(admin, url, "g", nodeName="n1", finalizers=["x/y"])
    assert stamp(admin.delete(f"{url}/g"))[2] == 30
    assert admin.patch(f"{url}/g", data=unfinalize, headers=MERGE).status_code == 200
    assert stamp(admin.get(f"{url}/g"))[2] == 30
    assert stamp(admin.delete(f"{url}/g", params={"gracePeriodSeconds": "0"}))[2] == 0
    assert admin.get(f"{url}/g").status_code == 404


def test_dry_runs_negative_periods_and_preconditions(
    server: Server, admin: requests.Session
) -> None:
    url = pods_url(server, admin, "grace-options")
    created = make_pod(admin, url, "k", nodeName="n1")
    version = created["metadata"]["resourceVersion"]
    dry = stamp(admin.delete(f"{url}/k", params={"dryRun": "All"}))
    assert dry[:3] == (200, version, 30) and dry[4] == 2
    assert stamp(admin.get(f"{url}/k"))[1:3] == (version, None)
    assert stamp(admin.delete(f"{url}/k", params={"gracePeriodSeconds": "-5"}))[2] == 1
    # A precondition on the version holds through the terminating write before it.
    unscheduled = make_pod(admin, url, "l")
    body = {"preconditions": {"resourceVersion": unscheduled["metadata"]["resourceVersion"]}}
    assert stamp(admin.delete(f"{url}/l", json=body))[:3:2] == (200, 0)
    assert admin.get(f"{url}/l").status_code == 404


def test_periods_past_go_durations_wrap_as_in_kube(server: Server, admin: requests.Session) -> None:
    url = pods_url(server, admin, "grace-wrap")
    make_pod(admin, url, "big", nodeName="n1")
    answer = admin.delete(f"{url}/big", params={"gracePeriodSeconds": str(2**63 - 1)})
    code, _, grace, when, _ = stamp(answer)
    created = parse_timestamp(admin.get(f"{url}/big").json()["metadata"]["creationTimestamp"])
    assert (code, grace) == (200, 2**63 - 1) and abs(when - (created or 0.0)) <= 2  # -1 s
    for query, message in (
        ("abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
        (
            "99999999999999999999",
            'strconv.ParseInt: parsing "99999999999999999999": value out of range',
        ),
    ):
        refused = admin.delete(f"{url}/big", params={"gracePeriodSeconds": query})
        assert (refused.status_code, refused.json()["reason"], refused.json()["message"]) == (
            400,
            "BadRequest",
            message,
        )
    refused = admin.delete(f"{url}/big", json={"gracePeriodSeconds": "x"})
    assert refused.status_code == 400 and refused.json()["message"] == (
        "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds "
        "of type int64"
    )
    assert stamp(admin.get(f"{url}/big"))[2] == 2**63 - 1  # unchanged by the refusals


def test_delete_collection_answers_the_list_it_deleted_from(
    server: Server, admin: requests.Session
) -> None:
    url = pods_url(server, admin, "grace-collection")
    make_pod(admin, url, "bound", nodeName="n1")
    make_pod(admin, url, "free")
    listed = admin.get(url).json()
    answer = admin.delete(url)
    assert answer.status_code == 200
    body = answer.json()
    assert body["items"] == listed["items"]  # as listed, not as left
    (left,) = admin.get(url).json()["items"]
    assert (left["metadata"]["name"], left["metadata"]["deletionGracePeriodSeconds"]) == (
        "bound",
        30,
    )
    # Listed before its first delete (on a shared etcd, other writers move the revision
    # between the two lists).
    listed_at, answered_at = (int(b["metadata"]["resourceVersion"]) for b in (listed, body))
    assert listed_at <= answered_at < int(left["metadata"]["resourceVersion"])


def test_an_update_that_lets_an_object_go_is_not_written(
    server: Server, admin: requests.Session
) -> None:
    url = server.url + make_namespace(admin, server, "grace-emptied")
    body = {"metadata": {"name": "cf", "finalizers": ["x/y"]}, "data": {"a": "1"}}
    created = admin.post(url, json=body).json()
    watch = Watch(admin, url, created["metadata"]["resourceVersion"])
    assert admin.delete(f"{url}/cf").status_code == 200
    patch = json.dumps({"metadata": {"finalizers": None}, "data": {"a": "2"}})
    answer = admin.patch(f"{url}/cf", data=patch, headers=MERGE)
    assert answer.status_code == 200
    meta = answer.json()["metadata"]
    assert (answer.json()["data"], meta.get("finalizers")) == ({"a": "2"}, None)
    events = watch.done()
    assert [(kind, meta.get("finalizers")) for kind, meta in events] == [
        ("MODIFIED", ["x/y"]),
        ("DELETED", ["x/y"]),  # the stored state, deleted: the update never was
    ]
    assert meta["resourceVersion"] == events[0][1]["resourceVersion"]
    assert admin.get(f"{url}/cf").status_code == 404


def test_an_eviction_takes_its_delete_options_as_a_delete_does(
    server: Server, admin: requests.Session
) -> None:
    url = pods_url(server, admin, "grace-eviction")
    make_pod(admin, url, "web", nodeName="n1")

    def evict(options: dict[str, Any], query: str = "") -> requests.Response:
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}}
        return admin.post(f"{url}/web/eviction{query}", json={**body, "deleteOptions": options})

    refused = evict({"dryRun": ["Bogus"]})
    assert (refused.status_code, refused.json()["message"]) == (
        422,
        'DeleteOptions.meta.platform.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: '
        'supported values: "All"',
    )
    refused = evict({"propagationPolicy": "Bogus"})
    assert (refused.status_code, refused.json()["reason"]) == (422, "Invalid")
    # A dry run in the body (or the query) changes nothing, even at period 0.
    assert evict({"dryRun": ["All"], "gracePeriodSeconds": 0}).status_code == 201
    assert evict({}, "?dryRun=All").status_code == 201
    kept = admin.get(f"{url}/web").json()
    assert "deletionTimestamp" not in kept["metadata"]
    assert "conditions" not in kept["status"]  # not even marked a disruption target
    assert evict({"gracePeriodSeconds": 5}).status_code == 201
    assert stamp(admin.get(f"{url}/web"))[2] == 5
