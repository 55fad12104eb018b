"""The resourcequota-controller over real storage, the hub and a test clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from platform_api.admission.quota.pending import HOLD, PendingCharges
from platform_api.admission.quota.resources import ONE
from platform_api.controllers.resourcequota import RESYNC, ResourceQuotaController
from tests.authorization.rbac_cluster import Cluster
from tests.spying import calls_of

Obj = dict[str, Any]


class Setup:
    def __init__(self, path: str) -> None:
        self.cluster = Cluster(path)
        self.now = 1000.0
        self.pending = PendingCharges(clock=lambda: self.now)
        self.quotas = self.cluster.stores[("", "v1", "resourcequotas")]
        self.controller = ResourceQuotaController(
            self.quotas,
            self.cluster.stores.values(),
            self.pending,
            self.cluster.hub,
            self.cluster.clock,
        )

    def store(self, plural: str, group: str = "", version: str = "v1") -> Any:
        return self.cluster.stores[(group, version, plural)]

    def create(self, plural: str, obj: Obj, group: str = "", version: str = "v1") -> Obj:
        return self.cluster.run(self.store(plural, group, version).create("ns", obj)).object  # type: ignore[no-any-return]

    def quota(self, name: str, hard: dict[str, str], **spec: Any) -> None:
        self.create("resourcequotas", {"metadata": {"name": name}, "spec": {"hard": hard, **spec}})
        self.cluster.settle()

    def status(self, name: str) -> Obj:
        return dict(self.quotas.get("ns", name).object.get("status") or {})


def pod(name: str, cpu: str = "", **spec: Any) -> Obj:
    c: Obj = {"name": "c", "image": "i"}
    if cpu:
        c["resources"] = {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}
    return {"metadata": {"name": name}, "spec": {"containers": [c], **spec}}


def test_status_is_filled_and_follows_objects(tmp_path: Path) -> None:
    s = Setup(str(tmp_path))
    s.create("pods", pod("before", "1"))
    s.controller.start()
    s.quota("q", {"pods": "5", "requests.cpu": "4", "count/configmaps": "3", "cpu": "1.5"})
    assert s.status("q") == {
        "hard": {"count/configmaps": "3", "cpu": "1500m", "pods": "5", "requests.cpu": "4"},
        "used": {"count/configmaps": "0", "cpu": "1", "pods": "1", "requests.cpu": "1"},
    }
    s.create("pods", pod("after", "500m"))
    s.create("configmaps", {"metadata": {"name": "c"}})
    s.cluster.settle()
    assert s.status("q")["used"] == {
        "count/configmaps": "1",
        "cpu": "1500m",
        "pods": "2",
        "requests.cpu": "1500m",
    }
    s.cluster.run(s.store("pods").delete("ns", "before"))
    s.cluster.settle()
    assert s.status("q")["used"]["pods"] == "1"
    s.controller.stop()


def test_scoped_quotas_and_other_groups(tmp_path: Path) -> None:
    s = Setup(str(tmp_path))
    s.controller.start()
    s.quota("be", {"pods": "5"}, scopes=["BestEffort"])
    s.quota("apps", {"count/deployments.apps": "2"})
    s.create("pods", pod("free"))
    s.create("pods", pod("paid", "1"))
    template = {"metadata": {"labels": {"a": "b"}}, "spec": pod("t")["spec"]}
    selector = {"matchLabels": {"a": "b"}}
    deployment = {"metadata": {"name": "d"}, "spec": {"selector": selector, "template": template}}
    s.create("deployments", deployment, group="apps")
    s.cluster.settle()
    assert s.status("be")["used"] == {"pods": "1"}
    assert s.status("apps")["used"] == {"count/deployments.apps": "1"}
    s.controller.stop()


def test_spec_changes_recount_and_charges_in_flight_are_kept(tmp_path: Path) -> None:
    s = Setup(str(tmp_path))
    s.controller.start()
    s.quota("q", {"secrets": "3"})
    # Admission charged a secret that is not stored yet: a recount must keep it.
    s.pending.add("ns", "q", "uid-in-flight", {"secrets": ONE})

    def grow(current: Obj | None) -> Obj:
        assert current is not None
        current["spec"]["hard"] = {"secrets": "4", "services": "1"}
        return current

    s.cluster.run(s.quotas.update("ns", "q", grow))
    s.cluster.settle()
    assert s.status("q") == {
        "hard": {"secrets": "4", "services": "1"},
        "used": {"secrets": "1", "services": "0"},
    }
    # Its object written, the charge is counted from storage instead.
    secret = {"metadata": {"name": "s", "uid": "x"}}
    stored = s.create("secrets", secret)
    s.pending.add("ns", "q", stored["metadata"]["uid"], {"secrets": ONE})
    s.cluster.settle()
    assert s.status("q")["used"]["secrets"] == "2"  # the stored one and the one in flight
    # A write that never happened is given back once its hold runs out.
    s.now += HOLD + 1
    s.cluster.clock.advance(HOLD + 1)
    s.cluster.settle()
    assert s.status("q")["used"]["secrets"] == "1"
    assert not s.pending.holds("ns")
    s.controller.stop()


def test_full_resync_repairs_drift(tmp_path: Path) -> None:
    s = Setup(str(tmp_path))
    s.controller.start()
    s.quota("q", {"configmaps": "3"})

    def drift(current: Obj | None) -> Obj:
        assert current is not None
        current["status"]["used"] = {"configmaps": "2"}  # an over-count left by a failed write
        return current

    s.cluster.run(s.quotas.update("ns", "q", drift, subresource="status"))
    s.cluster.settle()
    assert s.status("q")["used"] == {"configmaps": "2"}
    s.cluster.clock.advance(RESYNC)
    s.cluster.settle()
    assert s.status("q")["used"] == {"configmaps": "0"}
    s.controller.stop()


def test_a_create_never_gives_back_another_processs_charge(tmp_path: Path) -> None:
    """Under --workers (or replicas), a create another process admitted is charged in the
    quota before it is stored, and this process's ledger does not know it: the recount a
    create asks for keeps that charge; a delete's recount counts what is stored."""
    s = Setup(str(tmp_path))
    s.controller.start()
    s.quota("q", {"configmaps": "3"})

    def charged(current: Obj | None) -> Obj:  # the other worker's admission, two creates
        assert current is not None
        current["status"]["used"] = {"configmaps": "2"}
        return current

    s.cluster.run(s.quotas.update("ns", "q", charged, subresource="status"))
    s.create("configmaps", {"metadata": {"name": "first"}})  # one of them stored
    s.cluster.settle()
    assert s.status("q")["used"] == {"configmaps": "2"}  # not lowered to the 1 stored
    s.create("configmaps", {"metadata": {"name": "second"}})
    s.create("configmaps", {"metadata": {"name": "third"}})  # one more than was charged
    s.cluster.settle()
    assert s.status("q")["used"] == {"configmaps": "3"}  # raised to what is stored
    s.cluster.run(s.store("configmaps").delete("ns", "third"))
    s.cluster.settle()
    assert s.status("q")["used"] == {"configmaps": "2"}  # a delete's recount lowers
    s.controller.stop()


def test_recounts_read_the_kinds_kept_from_events(tmp_path: Path) -> None:
    """One list of a limited kind per namespace, then events (kube's listers): a recount
    per batch of pod changes listed and decoded the namespace's every pod."""
    s = Setup(str(tmp_path))
    s.create("pods", pod("before", "1"))
    s.controller.start()
    with calls_of(s.store("pods"), "list") as lists:
        s.quota("q", {"pods": "10", "requests.cpu": "8"})
        for i in range(5):
            s.create("pods", pod(f"p{i}", "500m"))
            s.cluster.settle()
        s.cluster.run(s.store("pods").delete("ns", "before"))
        s.cluster.settle()
    assert len(lists) == 1
    assert s.status("q")["used"] == {"pods": "5", "requests.cpu": "2500m"}
    s.cluster.run(s.quotas.delete("ns", "q"))
    s.cluster.settle()
    assert s.controller.held == {}  # no quota left in the namespace: nothing kept
    s.controller.stop()
