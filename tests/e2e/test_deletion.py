"""Deletion: finalizers, propagation policies and the garbage collector, namespace deletion."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import lmdb
import requests

from tests.e2e.conftest import ON_LMDB, Server, session_for, start_server
from tests.e2e.test_list import make_namespace

MERGE = {"Content-Type": "application/merge-patch+json"}


def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached")


def cm(
    name: str, owner: dict | None = None, finalizers: list[str] | None = None, block: bool = False
) -> dict:
    meta: dict = {"name": name}
    if owner is not None:
        ref = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
        }
        if block:
            ref["blockOwnerDeletion"] = True
        meta["ownerReferences"] = [ref]
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def gone(session: requests.Session, url: str) -> Callable[[], bool]:
    return lambda: session.get(url).status_code == 404


def test_finalizers_keep_an_object_until_removed(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "fin")
    admin.post(server.url + base, json=cm("held", finalizers=["example.com/hold"]))
    r = admin.delete(server.url + base + "/held")
    assert r.status_code == 200
    terminating = r.json()
    assert (
        terminating["metadata"]["deletionTimestamp"]
        and terminating["metadata"]["deletionGracePeriodSeconds"] == 0
    )
    again = admin.delete(server.url + base + "/held")
    assert (
        again.status_code == 200
        and again.json()["metadata"]["resourceVersion"]
        == terminating["metadata"]["resourceVersion"]
    )
    r = admin.patch(
        server.url + base + "/held",
        data=b'{"metadata":{"finalizers":["example.com/new"]}}',
        headers=MERGE,
    )
    why = (
        "Forbidden: no new finalizers can be added if the object is being deleted, found new "
        'finalizers []string{"example.com/new"}'
    )
    cause = {"reason": "FieldValueForbidden", "message": why, "field": "metadata.finalizers"}
    # kube checks an update's metadata before the kind's validation checks it again: the
    # problem is a cause twice, and once in the message.
    assert (r.status_code, r.json()["message"], r.json()["details"]["causes"]) == (
        422,
        f'ConfigMap "held" is invalid: metadata.finalizers: {why}',
        [cause, cause],
    )
    for query in ("", "?dryRun=All"):  # kube's store says why the name is taken
        taken = admin.post(server.url + base + query, json=cm("held"))
        assert (taken.status_code, taken.json()["message"]) == (
            409,
            'object is being deleted: configmaps "held" already exists',
        )
    admin.patch(
        server.url + base + "/held", data=b'{"metadata":{"finalizers":null}}', headers=MERGE
    )
    assert admin.get(server.url + base + "/held").status_code == 404


def test_marking_deletion_moves_the_generation_on(server: Server, admin: requests.Session) -> None:
    """kube's markAsDeleting: an object that counts generations gets a new one when its
    deletion begins (its controllers have a new state to act on); once only."""
    make_namespace(admin, server, "gen")
    base = "/apis/apps/v1/namespaces/gen"
    template = {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    spec = {"selector": {"matchLabels": {"a": "b"}}, "template": template}
    meta = {"name": "d", "finalizers": ["example.com/hold"]}
    created = admin.post(server.url + base + "/deployments", json={"metadata": meta, "spec": spec})
    assert created.json()["metadata"]["generation"] == 1
    first = admin.delete(server.url + base + "/deployments/d").json()["metadata"]
    again = admin.delete(server.url + base + "/deployments/d").json()["metadata"]
    assert (first["generation"], again["generation"]) == (2, 2)
    assert first["deletionTimestamp"] and first["deletionGracePeriodSeconds"] == 0
    admin.patch(
        server.url + base + "/deployments/d",
        data=b'{"metadata":{"finalizers":null}}',
        headers=MERGE,
    )
    assert admin.get(server.url + base + "/deployments/d").status_code == 404


def test_delete_preconditions(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "pre")
    created = admin.post(server.url + base, json=cm("p")).json()
    body = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "not-it"}}
    r = admin.delete(server.url + base + "/p", json=body)
    # kube v1.36's BeforeDelete (reference): the kind, not the resource, is named
    assert (r.status_code, r.json()["message"], r.json()["details"]) == (
        409,
        'Operation cannot be fulfilled on ConfigMap "p": the UID in the precondition (not-it) '
        f"does not match the UID in record ({created['metadata']['uid']}). The object might "
        "have been deleted and then recreated",
        {"name": "p", "kind": "ConfigMap"},
    )
    body = {"preconditions": {"resourceVersion": "1"}}
    r = admin.delete(server.url + base + "/p", json=body)
    assert (r.status_code, r.json()["message"]) == (
        409,
        'Operation cannot be fulfilled on ConfigMap "p": the ResourceVersion in the precondition '
        f"(1) does not match the ResourceVersion in record ({created['metadata']['resourceVersion']})"
        ". The object might have been modified",
    )
    r = admin.delete(server.url + base + "/p", json={"propagationPolicy": "Sideways"})
    assert r.status_code == 422
    assert r.json()["message"] == (
        'DeleteOptions.meta.platform.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
        'supported values: "Foreground", "Background", "Orphan", "nil"'
    )
    assert admin.delete(server.url + base + "/p?dryRun=All").status_code == 200
    assert admin.get(server.url + base + "/p").status_code == 200


def test_namespace_preconditions_in_its_storages_words(
    server: Server, admin: requests.Session
) -> None:
    """kube's namespace storage checks a delete's preconditions itself."""
    make_namespace(admin, server, "pre-ns")
    url = server.url + "/api/v1/namespaces/pre-ns"
    meta = admin.get(url).json()["metadata"]
    for key, what, given in (("uid", "UID", "x"), ("resourceVersion", "ResourceVersion", "1")):
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {key: given}}
        r = admin.delete(url, json=body)
        why = f"Precondition failed: {what} in precondition: {given}, {what} in object meta: "
        assert (r.status_code, r.json()["message"], r.json()["details"]) == (
            409,
            f'Operation cannot be fulfilled on namespaces "pre-ns": {why}{meta[key]}',
            {"name": "pre-ns", "kind": "namespaces"},
        )
    assert admin.get(url).json()["status"]["phase"] == "Active"


def test_background_deletion_collects_dependents(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "gc-bg")
    owner = admin.post(server.url + base, json=cm("owner")).json()
    admin.post(server.url + base, json=cm("child", owner))
    assert admin.delete(server.url + base + "/owner").status_code == 200
    eventually(gone(admin, server.url + base + "/child"))


def test_orphan_deletion_keeps_dependents(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "gc-orphan")
    owner = admin.post(server.url + base, json=cm("owner")).json()
    admin.post(server.url + base, json=cm("child", owner))
    r = admin.delete(server.url + base + "/owner", json={"propagationPolicy": "Orphan"})
    assert r.status_code == 200 and r.json()["metadata"]["finalizers"] == ["orphan"]
    eventually(gone(admin, server.url + base + "/owner"))
    child = admin.get(server.url + base + "/child").json()
    assert "ownerReferences" not in child["metadata"]


def test_a_policy_that_drops_the_only_finalizer_deletes_at_once(
    server: Server, admin: requests.Session
) -> None:
    """An ``orphan`` finalizer set by hand, a Background delete: nothing holds it then."""
    base = make_namespace(admin, server, "gc-dropped")
    admin.post(server.url + base, json=cm("held", finalizers=["orphan"]))
    r = admin.delete(server.url + base + "/held", json={"propagationPolicy": "Background"})
    assert (r.status_code, r.json()["kind"], r.json()["status"]) == (200, "Status", "Success")
    assert admin.get(server.url + base + "/held").status_code == 404


def test_foreground_deletion_waits_for_blocking_dependents(
    server: Server, admin: requests.Session
) -> None:
    base = make_namespace(admin, server, "gc-fg")
    owner = admin.post(server.url + base, json=cm("owner")).json()
    admin.post(
        server.url + base, json=cm("child", owner, finalizers=["example.com/hold"], block=True)
    )
    r = admin.delete(server.url + base + "/owner", json={"propagationPolicy": "Foreground"})
    assert r.json()["metadata"]["finalizers"] == ["foregroundDeletion"]
    eventually(
        lambda: bool(
            admin.get(server.url + base + "/child").json()["metadata"].get("deletionTimestamp")
        )
    )
    time.sleep(0.3)
    assert admin.get(server.url + base + "/owner").status_code == 200  # blocked by the child
    admin.patch(
        server.url + base + "/child", data=b'{"metadata":{"finalizers":null}}', headers=MERGE
    )
    eventually(gone(admin, server.url + base + "/owner"))


def test_foreground_deletion_spares_dependents_another_owner_keeps(
    server: Server, admin: requests.Session
) -> None:
    """kube's solid owners: a dependent with a second, live owner loses its reference to
    the owner going away, and stays."""
    base = make_namespace(admin, server, "gc-two")
    going = admin.post(server.url + base, json=cm("going")).json()
    staying = admin.post(server.url + base, json=cm("staying")).json()
    shared = cm("shared", going, block=True)
    shared["metadata"]["ownerReferences"].append(cm("x", staying)["metadata"]["ownerReferences"][0])
    admin.post(server.url + base, json=shared)
    admin.post(server.url + base, json=cm("alone", going, block=True))
    r = admin.delete(server.url + base + "/going", json={"propagationPolicy": "Foreground"})
    assert r.status_code == 200
    eventually(gone(admin, server.url + base + "/going"))
    eventually(gone(admin, server.url + base + "/alone"))
    kept = admin.get(server.url + base + "/shared").json()["metadata"]
    assert "deletionTimestamp" not in kept
    assert [ref["name"] for ref in kept["ownerReferences"]] == ["staying"]


def test_namespace_deletion_empties_it_then_removes_it(
    server: Server, admin: requests.Session
) -> None:
    base = make_namespace(admin, server, "doomed")
    admin.post(server.url + base, json=cm("a"))
    admin.post(server.url + base, json=cm("b", finalizers=["example.com/hold"]))
    r = admin.delete(server.url + "/api/v1/namespaces/doomed")
    assert r.status_code == 200 and r.json()["status"]["phase"] == "Terminating"
    meta = r.json()["metadata"]  # kube's namespace storage stamps the time, no grace period
    assert "deletionTimestamp" in meta and "deletionGracePeriodSeconds" not in meta
    r = admin.post(server.url + base, json=cm("late"))
    assert r.status_code == 403
    assert (
        r.json()["message"]
        == 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated'
    )
    assert r.json()["details"]["causes"] == [
        {
            "reason": "NamespaceTerminating",
            "message": "namespace doomed is being terminated",
            "field": "metadata.namespace",
        }
    ]
    eventually(gone(admin, server.url + base + "/a"))
    assert admin.get(server.url + "/api/v1/namespaces/doomed").status_code == 200  # b holds it
    admin.patch(server.url + base + "/b", data=b'{"metadata":{"finalizers":null}}', headers=MERGE)
    eventually(gone(admin, server.url + "/api/v1/namespaces/doomed"))


def test_a_namespace_stuck_terminating_says_what_holds_it(
    server: Server, admin: requests.Session
) -> None:
    """kube's deletion conditions: the resources left, and the finalizers holding them."""
    base = make_namespace(admin, server, "stuck")
    pods = f"{server.url}/api/v1/namespaces/stuck/pods"
    for name in ("bound-1", "bound-2"):  # terminating for 30 s once deleted: no kubelet
        pod = {
            "metadata": {"name": name},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "b"}]},
        }
        assert admin.post(pods, json=pod).status_code == 201
    admin.post(server.url + base, json=cm("held", finalizers=["example.com/hold"]))
    assert admin.delete(server.url + "/api/v1/namespaces/stuck").status_code == 200

    def conditions() -> list[tuple[str, str, str, str]]:
        status = admin.get(server.url + "/api/v1/namespaces/stuck").json().get("status", {})
        return [
            (c["type"], c["status"], c["reason"], c["message"])
            for c in status.get("conditions", [])
        ]

    eventually(lambda: len(conditions()) == 5)
    assert conditions() == [
        (
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        (
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        (
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            "Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 "
            "resource instances",
        ),
        (
            "NamespaceFinalizersRemaining",
            "True",
            "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 "
            "resource instances",
        ),
    ]
    admin.patch(
        server.url + base + "/held", data=b'{"metadata":{"finalizers":null}}', headers=MERGE
    )
    eventually(lambda: conditions()[4][1] == "False")
    assert conditions()[3][3] == "Some resources are remaining: pods. has 2 resource instances"
    for name in ("bound-1", "bound-2"):  # their kubelet, once the containers stopped
        admin.delete(f"{pods}/{name}", params={"gracePeriodSeconds": "0"})
    eventually(gone(admin, server.url + "/api/v1/namespaces/stuck"))


def test_kubectl_delete_namespace(server: Server, admin: requests.Session) -> None:
    make_namespace(admin, server, "kdel")
    out = server.kubectl("delete", "namespace", "kdel", "--timeout=20s")
    assert 'namespace "kdel" deleted' in out.stdout


UNSAFE = "ignoreStoreReadErrorWithClusterBreakingPotential"


def test_unsafe_delete_is_ignored_without_its_gate(server: Server, admin: requests.Session) -> None:
    """AllowUnsafeMalformedObjectDeletion is off by default: kube drops the option."""
    base = server.url + make_namespace(admin, server, "unsafe-off")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fine"}}
    assert admin.post(base, json=body).status_code == 201
    r = admin.delete(base + f"/fine?{UNSAFE}=true")
    assert r.status_code == 200 and r.json()["details"]["name"] == "fine"


def test_unsafe_delete_only_for_corrupt_objects(tmp_path: Path) -> None:
    server = start_server(  # the value is corrupted in LMDB (test_etcd_unreadable: in etcd)
        tmp_path / "data", ON_LMDB, "--feature-gates=AllowUnsafeMalformedObjectDeletion=true"
    )
    try:
        _unsafe_delete_only_for_corrupt_objects(server, session_for(server, cert=server.admin_cert))
    finally:
        server.stop()


def _unsafe_delete_only_for_corrupt_objects(server: Server, admin: requests.Session) -> None:
    base = server.url + make_namespace(admin, server, "unsafe-delete")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"}}
    assert admin.post(base, json=body).status_code == 201
    r = admin.delete(base + f"/bad?{UNSAFE}=true")
    assert r.status_code == 422
    assert r.json()["message"] == (
        f'configmaps "bad" is invalid: {UNSAFE}: Invalid value: true: is exclusively used to '
        "delete corrupt object(s), try again by removing this option"
    )
    r = admin.delete(base + f"/bad?{UNSAFE}=true&dryRun=All&propagationPolicy=Orphan")
    assert r.status_code == 422
    assert [c["message"] for c in r.json()["details"]["causes"]] == [
        "Invalid value: true: cannot be set together with .dryRun",
        "Invalid value: true: cannot be set together with .propagationPolicy",
    ]
    # Corrupt the stored value behind the server's back (LMDB allows a second process).
    env = lmdb.open(str(server.data_dir / "db"), max_dbs=4, subdir=True)
    objects = env.open_db(b"objects")
    key = b"/core/configmaps/unsafe-delete/bad"
    with env.begin(write=True, db=objects) as txn:
        value = txn.get(key)
        assert value is not None
        txn.put(key, value[:8] + b"\x00not json")
    env.close()
    r = admin.delete(base + f"/bad?{UNSAFE}=true")
    assert r.status_code == 200, r.text
    assert r.json()["details"] == {"name": "bad", "kind": "configmaps", "uid": ""}
    assert admin.get(base + "/bad").status_code == 404


def test_foreground_deletion_takes_a_cycle_of_owners_apart(
    server: Server, admin: requests.Session
) -> None:
    """upstream's "should not be blocked by dependency circle": each of three objects
    owns the next (blocking); deleting one in the foreground deletes all three."""
    base = make_namespace(admin, server, "gc-cycle")
    made = [admin.post(server.url + base, json=cm(name)).json() for name in ("p1", "p2", "p3")]
    for i, obj in enumerate(made):
        owner = made[i - 1]  # p1 is owned by p3, p2 by p1, p3 by p2
        ref = cm(obj["metadata"]["name"], owner, block=True)["metadata"]["ownerReferences"]
        patch = {"metadata": {"ownerReferences": ref}}
        url = server.url + base + "/" + obj["metadata"]["name"]
        assert admin.patch(url, json=patch, headers=MERGE).status_code == 200
    options = {
        "propagationPolicy": "Foreground",
        "preconditions": {"uid": made[0]["metadata"]["uid"]},
    }
    assert admin.delete(server.url + base + "/p1", json=options).status_code == 200
    for name in ("p1", "p2", "p3"):
        eventually(gone(admin, server.url + base + "/" + name))


def test_without_the_garbage_collector_policies_add_no_finalizers(tmp_path: Path) -> None:
    """--enable-garbage-collector=false: deletes ignore propagation (nothing would remove
    an orphan or foregroundDeletion finalizer) and dependents stay.  Checked against
    kube-apiserver v1.36 with the same flag."""
    server = start_server(tmp_path / "data", "--enable-garbage-collector=false")
    try:
        admin = session_for(server, cert=server.admin_cert)
        base = server.url + "/api/v1/namespaces/default/configmaps"
        owner = admin.post(base, json=cm("owner")).json()
        assert admin.post(base, json=cm("child", owner)).status_code == 201
        r = admin.delete(base + "/owner", json={"propagationPolicy": "Foreground"})
        assert (r.status_code, r.json()["kind"], r.json()["status"]) == (200, "Status", "Success")
        time.sleep(0.5)  # no collector: the dependent keeps its dangling reference
        child = admin.get(base + "/child").json()
        assert child["metadata"]["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]
        admin.post(base, json=cm("held", finalizers=["orphan"]))
        r = admin.delete(base + "/held", json={"propagationPolicy": "Background"})
        assert r.status_code == 200 and r.json()["metadata"]["finalizers"] == ["orphan"]
        assert admin.get(base + "/held").json()["metadata"]["deletionTimestamp"]
    finally:
        server.stop()
