"""deployment-controller with the replicaset-controller, over real storage and a test
clock; a stand-in kubelet marks pods Ready when a test says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers import deploymentutil as du
from platform_api.controllers.deployment import DeploymentController
from platform_api.controllers.replicaset import REPLICA_SET, ReplicaSetController
from platform_api.storage.interface import ListOptions
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
PODS, EVENTS = ("", "v1", "pods"), ("", "v1", "events")
RS, DEPLOY = ("apps", "v1", "replicasets"), ("apps", "v1", "deployments")
NS = "default"


def deployment(replicas: int = 3, image: str = "nginx:1", **spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            **spec,
        },
    }


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.cluster.clock.advance(1_000_000)
        st, args = self.cluster.stores, (self.cluster.hub, self.cluster.clock)
        self.start(
            ReplicaSetController(st[RS], st[PODS], st[EVENTS], REPLICA_SET, *args),
            DeploymentController(st[DEPLOY], st[RS], st[PODS], st[EVENTS], *args),
        )

    def items(self, kind: tuple[str, str, str]) -> list[Obj]:
        return [s.object for s in self.cluster.stores[kind].list(NS, ListOptions()).items]

    def replicasets(self) -> dict[str, tuple[int, str]]:
        """name -> (spec.replicas, revision)"""
        return {
            rs["metadata"]["name"]: (rs["spec"]["replicas"], du.revision(rs))  # type: ignore[misc]
            for rs in self.items(RS)
        }

    def deployment(self) -> Obj:
        found = self.get(DEPLOY, "web", NS)
        assert found is not None
        return found

    def change(self, **spec: Any) -> None:
        self.change_spec(DEPLOY, "web", NS, **spec)

    def kubelet(self, rounds: int = 1) -> None:
        """Every pod not yet Ready becomes Running and Ready (then the controllers run)."""
        for _ in range(rounds):
            self.run_pods(NS)

    def conditions(self) -> dict[str, tuple[str, str, str]]:
        status = self.deployment().get("status") or {}
        return {c["type"]: (c["status"], c["reason"], c["message"]) for c in status["conditions"]}


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def test_a_deployment_gets_a_replicaset_its_pods_and_a_complete_status(s: Setup) -> None:
    made = s.create(DEPLOY, deployment(), NS)
    s.wait(0.1)
    (rs,) = s.items(RS)
    hashed = rs["metadata"]["labels"][du.HASH_LABEL]
    assert rs["metadata"]["name"] == f"web-{hashed}"
    assert rs["metadata"]["labels"] == {"app": "web", du.HASH_LABEL: hashed}
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", du.HASH_LABEL: hashed}}
    assert rs["spec"]["replicas"] == 3
    assert rs["metadata"]["annotations"] == {
        du.REVISION: "1",
        du.DESIRED: "3",
        du.MAX_REPLICAS: "4",  # 25% surge of 3, rounded up
    }
    assert rs["metadata"]["ownerReferences"][0]["uid"] == made["metadata"]["uid"]
    assert len(s.items(PODS)) == 3
    assert all(p["metadata"]["labels"][du.HASH_LABEL] == hashed for p in s.items(PODS))
    assert s.conditions()["Available"][:2] == ("False", "MinimumReplicasUnavailable")
    s.kubelet()
    d = s.deployment()
    assert d["metadata"]["annotations"][du.REVISION] == "1"
    status = d["status"]
    counts = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")
    assert tuple(status[k] for k in counts) == (3, 3, 3, 3)
    assert "unavailableReplicas" not in status and status["observedGeneration"] == 1
    assert s.conditions() == {
        "Available": ("True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
        "Progressing": (
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "web-{hashed}" has successfully progressed.',
        ),
    }


def test_a_rolling_update_moves_pods_to_the_new_template_within_budget(s: Setup) -> None:
    s.create(DEPLOY, deployment(replicas=4), NS)
    s.wait(0.1)
    s.kubelet()
    (first,) = s.replicasets()
    s.change(image="nginx:2")
    sets = s.replicasets()
    (second,) = set(sets) - {first}
    # 25% of 4: one surge pod, one unavailable; the old one drops to 3 at once
    assert sets == {first: (3, 1), second: (2, 2)}
    assert len(s.items(PODS)) == 5
    s.kubelet(rounds=4)
    assert s.replicasets() == {first: (0, 1), second: (4, 2)}
    d = s.deployment()
    assert d["metadata"]["annotations"][du.REVISION] == "2"
    assert (d["status"]["updatedReplicas"], d["status"]["availableReplicas"]) == (4, 4)
    assert s.conditions()["Progressing"][1] == "NewReplicaSetAvailable"
    images = {p["spec"]["containers"][0]["image"] for p in s.items(PODS)}
    assert images == {"nginx:2"}
    # back to the first template: the first ReplicaSet is reused as revision 3
    s.change(image="nginx:1")
    s.kubelet(rounds=4)
    assert s.replicasets() == {first: (4, 3), second: (0, 2)}
    history = s.get(RS, first, NS)["metadata"]["annotations"]  # type: ignore[index]
    assert history[du.REVISION_HISTORY] == "1"


def test_recreate_empties_the_old_replicaset_before_the_new_one_starts(s: Setup) -> None:
    s.create(DEPLOY, deployment(replicas=2, strategy={"type": "Recreate"}), NS)
    s.wait(0.1)
    s.kubelet()
    (first,) = s.replicasets()
    s.change(image="nginx:2")
    sets = s.replicasets()
    assert len(sets) == 2 and sets[first] == (0, 1)
    images = {p["spec"]["containers"][0]["image"] for p in s.items(PODS)}
    assert images == {"nginx:2"}  # the old pods went first (nothing held them)
    s.kubelet()
    assert s.conditions()["Progressing"][1] == "NewReplicaSetAvailable"


def test_resizing_and_history_limit(s: Setup) -> None:
    s.create(DEPLOY, deployment(replicas=2, revisionHistoryLimit=1), NS)
    s.wait(0.1)
    s.kubelet()
    s.change(replicas=5)
    assert sorted(v[0] for v in s.replicasets().values()) == [5]
    for image in ("nginx:2", "nginx:3"):
        s.change(image=image)
        s.kubelet(rounds=5)
    # the current one and one old one are kept
    assert sorted(s.replicasets().values()) == [(0, 2), (5, 3)]


def test_a_paused_deployment_does_not_roll_out(s: Setup) -> None:
    s.create(DEPLOY, deployment(replicas=1), NS)
    s.wait(0.1)
    s.change(paused=True)
    s.change(image="nginx:2")
    assert len(s.replicasets()) == 1
    assert s.conditions()["Progressing"] == ("Unknown", "DeploymentPaused", "Deployment is paused")
    s.change(paused=False)
    assert len(s.replicasets()) == 2


def test_a_rollout_that_stalls_passes_its_deadline(s: Setup) -> None:
    s.create(DEPLOY, deployment(replicas=1, progressDeadlineSeconds=10), NS)
    s.wait(0.1)
    (name,) = s.replicasets()
    # created, then its pod made: progressing
    assert s.conditions()["Progressing"] == (
        "True",
        "ReplicaSetUpdated",
        f'ReplicaSet "{name}" is progressing.',
    )
    s.wait(12)  # no pod ever becomes ready
    assert s.conditions()["Progressing"] == (
        "False",
        "ProgressDeadlineExceeded",
        f'ReplicaSet "{name}" has timed out progressing.',
    )


def test_template_hash_is_stable_and_safe() -> None:
    template = deployment()["spec"]["template"]
    first = du.template_hash(template, None)
    assert first == du.template_hash({**template}, None)
    assert first != du.template_hash(template, 1)
    assert set(first) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_proportional_scaling_shares_by_size() -> None:
    d = deployment(replicas=20)
    d["spec"]["strategy"] = {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
    d["status"] = {"replicas": 15}
    big = {"metadata": {"annotations": {du.MAX_REPLICAS: "13"}}, "spec": {"replicas": 10}}
    # 10 of a deployment last at most 13, now 20 + 5 surge: 10 * 25 / 13 = 19.2 -> +9
    assert du.proportion(big, d, to_add=12, added=0) == 9
    assert du.proportion(big, d, to_add=12, added=10) == 2  # only what is left
