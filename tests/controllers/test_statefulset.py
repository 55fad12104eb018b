"""statefulset-controller over real storage and a test clock; a stand-in kubelet makes
pods Running and Ready when a test says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers import statefulsetutil as su
from platform_api.controllers.statefulset import StatefulSetController
from platform_api.storage.interface import ListOptions
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
PODS, EVENTS, PVCS = ("", "v1", "pods"), ("", "v1", "events"), ("", "v1", "persistentvolumeclaims")
SETS, REVISIONS = ("apps", "v1", "statefulsets"), ("apps", "v1", "controllerrevisions")
NS = "default"


def statefulset(replicas: int = 3, image: str = "nginx:1", **spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "serviceName": "web",
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
            StatefulSetController(st[SETS], st[PODS], st[PVCS], st[REVISIONS], st[EVENTS], *args)
        )

    def items(self, kind: tuple[str, str, str]) -> list[Obj]:
        found = [s.object for s in self.cluster.stores[kind].list(NS, ListOptions()).items]
        return sorted(found, key=lambda o: o["metadata"]["name"])

    def names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.items(PODS)]

    def set(self) -> Obj:
        found = self.get(SETS, "web", NS)
        assert found is not None
        return found

    def change(self, **spec: Any) -> None:
        self.change_spec(SETS, "web", NS, **spec)

    def kubelet(self, phase: str = "Running", only: str | None = None) -> None:
        self.run_pods(NS, phase, only)

    def roll(self, rounds: int = 6) -> None:
        for _ in range(rounds):
            self.kubelet()


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def test_ordered_pods_one_at_a_time_with_a_stable_identity(s: Setup) -> None:
    made = s.create(SETS, statefulset(), NS)
    s.wait(0.1)
    assert s.names() == ["web-0"]  # the next waits until this one is Running and Ready
    (revision,) = s.items(REVISIONS)
    digest = revision["metadata"]["labels"][su.HASH_LABEL]
    assert revision["metadata"]["name"] == f"web-{digest}" and revision["revision"] == 1
    assert revision["metadata"]["labels"]["app"] == "web"
    assert revision["data"]["spec"]["template"]["$patch"] == "replace"
    assert revision["metadata"]["ownerReferences"][0]["uid"] == made["metadata"]["uid"]
    (pod,) = s.items(PODS)
    assert pod["metadata"]["labels"] == {
        "app": "web",
        su.POD_NAME_LABEL: "web-0",
        su.POD_INDEX_LABEL: "0",
        su.REVISION_LABEL: f"web-{digest}",
    }
    assert pod["spec"]["hostname"] == "web-0" and pod["spec"]["subdomain"] == "web"
    ref = pod["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("StatefulSet", "web", True)
    s.kubelet()
    assert s.names() == ["web-0", "web-1"]
    s.roll()
    assert s.names() == ["web-0", "web-1", "web-2"]
    status = s.set()["status"]
    assert status == {
        "observedGeneration": 1,
        "replicas": 3,
        "readyReplicas": 3,
        "currentReplicas": 3,
        "updatedReplicas": 3,
        "availableReplicas": 3,
        "currentRevision": f"web-{digest}",
        "updateRevision": f"web-{digest}",
        "collisionCount": 0,
    }
    events = [(e["reason"], e["message"]) for e in s.items(EVENTS)]
    assert ("SuccessfulCreate", "Create Pod web-0 in StatefulSet web successful") in events


def test_parallel_pods_all_at_once(s: Setup) -> None:
    s.create(SETS, statefulset(podManagementPolicy="Parallel"), NS)
    s.wait(0.1)
    assert s.names() == ["web-0", "web-1", "web-2"]


def test_claims_from_templates_and_the_retention_policy(s: Setup) -> None:
    claim = {
        "metadata": {"name": "data", "labels": {"tier": "db"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    policy = {"whenDeleted": "Delete", "whenScaled": "Retain"}
    made = s.create(
        SETS,
        statefulset(
            replicas=2, volumeClaimTemplates=[claim], persistentVolumeClaimRetentionPolicy=policy
        ),
        NS,
    )
    s.wait(0.1)
    s.roll()
    pvcs = s.items(PVCS)
    assert [c["metadata"]["name"] for c in pvcs] == ["data-web-0", "data-web-1"]
    assert pvcs[0]["metadata"]["labels"] == {"tier": "db", "app": "web"}
    refs = pvcs[0]["metadata"]["ownerReferences"]
    assert [(r["kind"], r["uid"]) for r in refs] == [("StatefulSet", made["metadata"]["uid"])]
    pod = s.items(PODS)[0]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}} in pod["spec"][
        "volumes"
    ]
    s.change(replicas=1)
    s.roll()
    assert s.names() == ["web-0"]
    assert len(s.items(PVCS)) == 2  # whenScaled: Retain keeps web-1's claim


def test_scale_down_from_the_highest_ordinal(s: Setup) -> None:
    s.create(SETS, statefulset(), NS)
    s.wait(0.1)
    s.roll()
    s.change(replicas=1)
    s.roll()
    assert s.names() == ["web-0"]
    deleted = [e["message"] for e in s.items(EVENTS) if e["reason"] == "SuccessfulDelete"]
    assert deleted == [
        "Delete Pod web-2 in StatefulSet web successful",
        "Delete Pod web-1 in StatefulSet web successful",
    ]
    assert s.set()["status"]["replicas"] == 1


def test_rolling_update_replaces_from_the_top_down_to_the_partition(s: Setup) -> None:
    s.create(SETS, statefulset(), NS)
    s.wait(0.1)
    s.roll()
    first = s.set()["status"]["currentRevision"]
    s.change(
        image="nginx:2", updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}
    )
    s.roll()
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in s.items(PODS)}
    assert images == {"web-0": "nginx:1", "web-1": "nginx:2", "web-2": "nginx:2"}
    status = s.set()["status"]
    assert status["currentRevision"] == first and status["updateRevision"] != first
    assert status["updatedReplicas"] == 2 and status["currentReplicas"] == 1
    assert len(s.items(REVISIONS)) == 2
    s.change(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    s.roll()
    status = s.set()["status"]
    assert {p["spec"]["containers"][0]["image"] for p in s.items(PODS)} == {"nginx:2"}
    assert status["currentRevision"] == status["updateRevision"] != first
    assert status["currentReplicas"] == 3


def test_on_delete_waits_for_the_user(s: Setup) -> None:
    s.create(SETS, statefulset(replicas=2, updateStrategy={"type": "OnDelete"}), NS)
    s.wait(0.1)
    s.roll()
    s.change(image="nginx:2")
    s.roll()
    assert {p["spec"]["containers"][0]["image"] for p in s.items(PODS)} == {"nginx:1"}
    s.delete(PODS, "web-1", NS)
    s.wait(0.1)
    s.roll()
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in s.items(PODS)}
    assert images == {"web-0": "nginx:1", "web-1": "nginx:2"}


def test_a_failed_pod_is_replaced(s: Setup) -> None:
    s.create(SETS, statefulset(replicas=1), NS)
    s.wait(0.1)
    s.roll()
    uid = s.items(PODS)[0]["metadata"]["uid"]
    s.kubelet(phase="Failed", only="web-0")
    s.wait(0.1)
    (pod,) = s.items(PODS)
    assert pod["metadata"]["name"] == "web-0" and pod["metadata"]["uid"] != uid


def test_the_revision_hash_is_fnv1_over_gos_json() -> None:
    assert su.fnv1_32(b"") == 0x811C9DC5 and su.fnv1_32(b"a") == 0x050C5D7E  # FNV's vectors
    data = {"spec": {"template": {"metadata": {"labels": {"app": "<web>"}}, "$patch": "replace"}}}
    raw = b'{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"\\u003cweb\\u003e"}}}}}'
    assert su.revision_hash(data, 0) == su.safe_encode(str(su.fnv1_32(raw + b"0")))
