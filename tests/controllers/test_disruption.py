"""disruption-controller over real storage and a test clock: budgets' status from their
pods and the pods' controllers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers.disruption import DisruptionController
from platform_api.storage.interface import ListOptions
from platform_api.timestamps import format_timestamp
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
PODS, EVENTS = ("", "v1", "pods"), ("", "v1", "events")
PDBS = ("policy", "v1", "poddisruptionbudgets")
RS, DEPLOY = ("apps", "v1", "replicasets"), ("apps", "v1", "deployments")
STS, RC = ("apps", "v1", "statefulsets"), ("", "v1", "replicationcontrollers")
NS = "default"
TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.cluster.clock.advance(1_000_000)
        st = self.cluster.stores
        owners = {
            "ReplicaSet": st[RS],
            "Deployment": st[DEPLOY],
            "StatefulSet": st[STS],
            "ReplicationController": st[RC],
        }
        self.start(
            DisruptionController(
                st[PDBS],
                st[PODS],
                owners,
                st[EVENTS],
                st.values(),
                self.cluster.hub,
                self.cluster.clock,
            )
        )

    def pods(self, count: int, owner: Obj | None = None, kind: str = "ReplicaSet") -> None:
        for i in range(count):
            meta: Obj = {"name": f"web-{i}", "labels": {"app": "web"}}
            if owner is not None:
                api = "v1" if kind == "ReplicationController" else "apps/v1"
                meta["ownerReferences"] = [
                    {
                        "apiVersion": api,
                        "kind": kind,
                        "name": owner["metadata"]["name"],
                        "uid": owner["metadata"]["uid"],
                        "controller": True,
                    }
                ]
            self.create(
                PODS,
                {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": TEMPLATE["spec"]},
                NS,
            )
        self.run_pods(NS)

    def budget(self, **spec: Any) -> None:
        body = {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "keep"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
        }
        self.create(PDBS, body, NS)
        self.wait(0.1)

    def status(self) -> Obj:
        found = self.get(PDBS, "keep", NS)
        assert found is not None
        status: Obj = found.get("status") or {}
        return status

    def counts(self) -> tuple[int, int, int, int]:
        st = self.status()
        return (
            st["expectedPods"],
            st["desiredHealthy"],
            st["currentHealthy"],
            st["disruptionsAllowed"],
        )

    def events(self) -> list[tuple[str, str]]:
        return [
            (e.object["reason"], e.object["message"])
            for e in self.cluster.stores[EVENTS].list(NS, ListOptions()).items
        ]


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def replicaset(s: Setup, replicas: int, owner: Obj | None = None) -> Obj:
    meta: Obj = {"name": "web-rs"}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    body = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": TEMPLATE,
        },
    }
    return s.create(RS, body, NS)


def test_max_unavailable_counts_the_controllers_scale(s: Setup) -> None:
    rs = replicaset(s, 4)
    s.pods(3, rs)
    s.budget(maxUnavailable=1)
    assert s.counts() == (4, 3, 3, 0)  # a pod short of the ReplicaSet's 4: nothing to spare
    (condition,) = s.status()["conditions"]
    assert (condition["type"], condition["status"], condition["reason"], condition["message"]) == (
        "DisruptionAllowed",
        "False",
        "InsufficientPods",
        "",
    )
    assert s.status()["observedGeneration"] == 1
    s.change_spec(RS, "web-rs", NS, replicas=3)
    s.cluster.run(s.cluster.stores[PODS].delete(NS, "web-0"))
    s.pods(1, rs)  # recreated Ready: the RS has 3 of 3 again
    assert s.counts() == (3, 2, 3, 1)
    assert s.status()["conditions"][0]["reason"] == "SufficientPods"


def test_a_deployments_scale_counts_for_its_replicasets_pods(s: Setup) -> None:
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
    }
    deployment = s.create(DEPLOY, body, NS)
    rs = replicaset(s, 2, deployment)
    s.pods(2, rs)
    s.budget(minAvailable="50%")
    assert s.counts() == (5, 3, 2, 0)


def test_an_integer_min_available_counts_the_pods(s: Setup) -> None:
    s.pods(3)  # unmanaged: fine with an integer
    s.budget(minAvailable=2)
    assert s.counts() == (3, 2, 3, 1)
    assert not [e for e in s.events() if e[0] == "UnmanagedPods"]


def test_unmanaged_pods_with_a_percentage_are_reported(s: Setup) -> None:
    s.pods(2)
    s.budget(minAvailable="50%")
    assert s.counts() == (0, 0, 2, 0)
    assert any(reason == "UnmanagedPods" for reason, _ in s.events())


def test_a_pod_whose_controller_is_unknown_fails_safe(s: Setup) -> None:
    ghost = {"metadata": {"name": "ghost", "uid": "0000"}}
    s.pods(2, ghost, kind="ReplicaSet")
    s.budget(maxUnavailable=1)
    status = s.status()
    assert status["disruptionsAllowed"] == 0
    (condition,) = status["conditions"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "SyncFailed",
        'found no controllers for pod "web-0"',
    )


@pytest.mark.parametrize(
    ("api_version", "kind", "message"),
    [
        ("example.com/v1", "Widget", 'no matches for kind "Widget" in version "example.com/v1"'),
        ("v1", "ConfigMap", "configmaps does not implement the scale subresource"),
    ],
)
def test_an_owner_without_a_scale_fails_safe_as_kube_words_it(
    s: Setup, api_version: str, kind: str, message: str
) -> None:
    """kube's getScaleController: an unknown kind, or one without a scale subresource."""
    owner = {"metadata": {"name": "owner", "uid": "0001"}}
    s.pods(1, owner, kind=kind)
    pod = s.get(PODS, "web-0", NS)
    assert pod is not None
    pod["metadata"]["ownerReferences"][0]["apiVersion"] = api_version
    s.cluster.run(s.cluster.stores[PODS].update(NS, "web-0", lambda _: pod))
    s.budget(maxUnavailable=1)
    (condition,) = s.status()["conditions"]
    assert (condition["reason"], condition["message"]) == ("SyncFailed", message)


def test_no_pods_is_an_event_and_nothing_allowed(s: Setup) -> None:
    s.budget(minAvailable=1)
    assert s.counts() == (0, 1, 0, 0)
    assert ("NoPods", "No matching pods found") in s.events()


def test_an_evicted_pod_is_not_healthy_until_it_is_overdue(s: Setup) -> None:
    s.pods(3)
    s.budget(minAvailable=1)
    stamp = format_timestamp(s.cluster.clock.seconds())

    def evicted(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["status"]["disruptedPods"] = {"web-0": stamp}
        return existing

    s.cluster.run(s.cluster.stores[PDBS].update(NS, "keep", evicted, subresource="status"))
    s.wait(0.1)
    assert s.counts() == (3, 1, 2, 1) and s.status()["disruptedPods"] == {"web-0": stamp}
    s.wait(121)
    assert s.counts() == (3, 1, 3, 2) and "disruptedPods" not in s.status()
    assert any(reason == "NotDeleted" for reason, _ in s.events())


def test_a_stale_disruption_target_is_taken_back(s: Setup) -> None:
    s.pods(1)
    stamp = format_timestamp(s.cluster.clock.seconds())
    mark = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "EvictionByEvictionAPI",
        "message": "Eviction API: evicting",
        "lastTransitionTime": stamp,
    }

    def marked(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["status"]["conditions"].append(mark)
        return existing

    s.cluster.run(s.cluster.stores[PODS].update(NS, "web-0", marked, subresource="status"))
    s.wait(60)
    pod = s.get(PODS, "web-0", NS)
    assert pod is not None and pod["status"]["conditions"][-1]["status"] == "True"
    s.wait(61)
    pod = s.get(PODS, "web-0", NS)
    assert pod is not None
    condition = pod["status"]["conditions"][-1]
    assert (condition["type"], condition["status"]) == ("DisruptionTarget", "False")
    assert "reason" not in condition
