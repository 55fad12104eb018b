"""job-controller over real storage and a test clock; a stand-in kubelet moves pods to
Running, Succeeded or Failed when a test says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers.job import JobController
from platform_api.controllers.jobindexes import COMPLETION_INDEX, FAILURE_COUNT
from platform_api.controllers.jobstatus import TRACKING
from platform_api.storage.interface import ListOptions
from platform_api.timestamps import format_timestamp
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
PODS, EVENTS, JOBS = ("", "v1", "pods"), ("", "v1", "events"), ("batch", "v1", "jobs")
NS = "default"


def job(name: str = "pi", **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            },
            **spec,
        },
    }


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.cluster.clock.advance(1_000_000)
        st = self.cluster.stores
        self.start(
            JobController(st[JOBS], st[PODS], st[EVENTS], self.cluster.hub, self.cluster.clock)
        )

    def pods(self, *, live: bool = True) -> list[Obj]:
        items = [s.object for s in self.cluster.stores[PODS].list(NS, ListOptions()).items]
        if live:
            items = [
                p
                for p in items
                if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ]
        return sorted(items, key=lambda p: p["metadata"]["name"])

    def job(self, name: str = "pi") -> Obj:
        found = self.get(JOBS, name, NS)
        assert found is not None
        return found

    def status(self, name: str = "pi") -> Obj:
        status: Obj = self.job(name).get("status") or {}
        return status

    def conditions(self, name: str = "pi") -> list[tuple[str, str, str, str]]:
        return [
            (c["type"], c["status"], c["reason"], c["message"])
            for c in self.status(name).get("conditions") or ()
        ]

    def finish(self, pod: Obj, phase: str, exit_code: int = 0) -> None:
        """The kubelet reports the pod's end (its container's exit code too)."""
        stamp = format_timestamp(self.cluster.clock.seconds())
        terminated = {"exitCode": exit_code, "finishedAt": stamp, "reason": "Completed"}
        status = {
            "phase": phase,
            "containerStatuses": [{"name": "c", "state": {"terminated": terminated}}],
        }

        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["status"] = status
            return existing

        name = pod["metadata"]["name"]
        self.cluster.run(self.cluster.stores[PODS].update(NS, name, write, subresource="status"))
        self.cluster.settle()
        self.wait(1.1)  # kube's one-second batching of pod changes

    def events(self) -> list[tuple[str, str]]:
        items = self.cluster.stores[EVENTS].list(NS, ListOptions()).items
        return [(e.object["reason"], e.object["message"]) for e in items]


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def test_pods_until_enough_succeed_then_complete(s: Setup) -> None:
    made = s.create(JOBS, job(completions=2), NS)
    s.wait(0.1)
    (pod,) = s.pods()
    meta = pod["metadata"]
    assert meta["generateName"] == "pi-" and meta["name"].startswith("pi-")
    assert meta["finalizers"] == [TRACKING]
    uid = made["metadata"]["uid"]
    assert meta["labels"]["batch.kubernetes.io/controller-uid"] == uid
    assert meta["labels"]["batch.kubernetes.io/job-name"] == "pi"
    ref = meta["ownerReferences"][0]
    assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"]) == (
        "batch/v1",
        "Job",
        "pi",
        uid,
    )
    assert ref["controller"] is True and ref["blockOwnerDeletion"] is True
    status = s.status()
    assert status["active"] == 1 and status["ready"] == 0 and status["terminating"] == 0
    assert status["uncountedTerminatedPods"] == {}
    assert status["startTime"] == format_timestamp(s.cluster.clock.seconds() - 0.1)
    assert "succeeded" not in status and "conditions" not in status

    s.finish(pod, "Succeeded")
    done = [p for p in s.pods(live=False) if p["metadata"]["name"] == meta["name"]]
    assert done[0]["metadata"].get("finalizers") in (None, [])
    status = s.status()
    assert status["succeeded"] == 1 and status["active"] == 1
    (second,) = s.pods()
    s.finish(second, "Succeeded")
    status = s.status()
    assert status["succeeded"] == 2 and "active" not in status  # zero: left out, as Go
    assert s.conditions() == [
        (
            "SuccessCriteriaMet",
            "True",
            "CompletionsReached",
            "Reached expected number of succeeded pods",
        ),
        ("Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
    ]
    assert status["completionTime"] == s.status()["conditions"][1]["lastTransitionTime"]
    assert status["uncountedTerminatedPods"] == {}
    reasons = [r for r, _ in s.events()]
    assert reasons.count("SuccessfulCreate") == 2 and reasons[-1] == "Completed"
    assert ("Completed", "Job completed") in s.events()


def test_parallelism_without_completions_ends_at_the_first_success(s: Setup) -> None:
    s.create(JOBS, job(parallelism=3), NS)
    s.wait(0.1)
    pods = s.pods()
    assert len(pods) == 3 and "completions" not in s.job()["spec"]
    s.finish(pods[0], "Succeeded")
    assert s.status()["active"] == 2  # the others keep running
    assert "conditions" not in s.status()
    for pod in pods[1:]:
        s.finish(pod, "Succeeded")
    assert [c[0] for c in s.conditions()] == ["SuccessCriteriaMet", "Complete"]
    assert s.status()["succeeded"] == 3


def test_failures_back_off_then_exceed_the_limit(s: Setup) -> None:
    s.create(JOBS, job(backoffLimit=1), NS)
    s.wait(0.1)
    (pod,) = s.pods()
    s.finish(pod, "Failed", exit_code=1)
    assert s.status()["failed"] == 1 and s.pods() == []
    s.wait(5)
    assert s.pods() == []  # 10 s after the failure, not sooner
    s.wait(5)
    (second,) = s.pods()
    s.finish(second, "Failed", exit_code=1)
    status = s.status()
    assert status["failed"] == 2 and "active" not in status
    message = "Job has reached the specified backoff limit"
    assert s.conditions() == [
        ("FailureTarget", "True", "BackoffLimitExceeded", message),
        ("Failed", "True", "BackoffLimitExceeded", message),
    ]
    assert "completionTime" not in status
    assert ("BackoffLimitExceeded", message) in s.events()
    s.wait(30)
    assert s.pods() == []  # a failed Job makes no more pods


def test_indexed_pods_know_their_index(s: Setup) -> None:
    s.create(JOBS, job(completions=3, parallelism=2, completionMode="Indexed"), NS)
    s.wait(0.1)
    pods = s.pods()
    assert [p["metadata"]["annotations"][COMPLETION_INDEX] for p in pods] == ["0", "1"]
    first = pods[0]
    assert first["metadata"]["labels"][COMPLETION_INDEX] == "0"
    assert first["metadata"]["generateName"] == "pi-0-"
    assert first["spec"]["hostname"] == "pi-0"
    env = first["spec"]["containers"][0]["env"]
    path = f"metadata.labels['{COMPLETION_INDEX}']"
    assert env == [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {"fieldRef": {"fieldPath": path, "apiVersion": "v1"}},
        }
    ]
    s.finish(pods[1], "Succeeded")
    assert s.status()["completedIndexes"] == "1"
    (third,) = [p for p in s.pods() if p["metadata"]["annotations"][COMPLETION_INDEX] == "2"]
    s.finish(third, "Succeeded")
    assert s.status()["completedIndexes"] == "1,2"
    s.finish(pods[0], "Succeeded")
    status = s.status()
    assert status["completedIndexes"] == "0-2" and status["succeeded"] == 3
    assert [c[0] for c in s.conditions()] == ["SuccessCriteriaMet", "Complete"]


def test_a_success_policy_ends_an_indexed_job_early(s: Setup) -> None:
    policy = {"rules": [{"succeededIndexes": "0"}]}
    s.create(
        JOBS, job(completions=3, parallelism=3, completionMode="Indexed", successPolicy=policy), NS
    )
    s.wait(0.1)
    pods = s.pods()
    s.finish(pods[0], "Succeeded")
    assert s.conditions()[0] == (
        "SuccessCriteriaMet",
        "True",
        "SuccessPolicy",
        "Matched rules at index 0",
    )
    s.wait(1.1)
    assert s.pods() == []  # the rest were deleted
    assert [c[0] for c in s.conditions()] == ["SuccessCriteriaMet", "Complete"]
    assert s.status()["completedIndexes"] == "0"


def test_a_deadline_fails_the_job_and_removes_its_pods(s: Setup) -> None:
    s.create(JOBS, job(activeDeadlineSeconds=30, parallelism=2, completions=4), NS)
    s.wait(0.1)
    assert len(s.pods()) == 2
    s.wait(30)
    s.wait(1.1)
    assert s.pods() == []
    message = "Job was active longer than specified deadline"
    assert s.conditions() == [
        ("FailureTarget", "True", "DeadlineExceeded", message),
        ("Failed", "True", "DeadlineExceeded", message),
    ]
    status = s.status()
    assert status["failed"] == 2 and "active" not in status and status["terminating"] == 0
    assert ("DeadlineExceeded", message) in s.events()


def test_suspend_removes_pods_and_resume_restarts_the_clock(s: Setup) -> None:
    s.create(JOBS, job(suspend=True), NS)
    s.wait(0.1)
    assert s.pods() == [] and "startTime" not in s.status()
    assert s.conditions() == [("Suspended", "True", "JobSuspended", "Job suspended")]

    def resume(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["spec"]["suspend"] = False
        return existing

    s.cluster.run(s.cluster.stores[JOBS].update(NS, "pi", resume))
    s.wait(0.1)
    assert len(s.pods()) == 1
    assert s.conditions() == [("Suspended", "False", "JobResumed", "Job resumed")]
    assert s.status()["startTime"] == format_timestamp(s.cluster.clock.seconds() - 0.1)
    assert ("Suspended", "Job suspended") in s.events() and ("Resumed", "Job resumed") in s.events()


def test_a_failure_policy_fails_the_job_on_an_exit_code(s: Setup) -> None:
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}
    s.create(JOBS, job(podFailurePolicy=policy, backoffLimit=6), NS)
    s.wait(0.1)
    (pod,) = s.pods()
    assert s.job()["spec"]["podReplacementPolicy"] == "Failed"
    s.finish(pod, "Failed", exit_code=42)
    name = pod["metadata"]["name"]
    message = f"Container c for pod default/{name} failed with exit code 42 matching FailJob rule at index 0"
    assert s.conditions() == [
        ("FailureTarget", "True", "PodFailurePolicy", message),
        ("Failed", "True", "PodFailurePolicy", message),
    ]
    assert s.status()["failed"] == 1


def test_an_ignored_failure_is_replaced_without_counting(s: Setup) -> None:
    policy = {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]}
    s.create(JOBS, job(podFailurePolicy=policy, backoffLimit=0), NS)
    s.wait(0.1)
    (pod,) = s.pods()
    s.finish(pod, "Failed", exit_code=3)
    status = s.status()
    assert "failed" not in status and "conditions" not in status
    assert s.pods() == []  # as in kube, an ignored failure still delays the replacement
    s.wait(10)
    assert len(s.pods()) == 1
    assert "failed" not in s.status()


def test_a_per_index_backoff_limit_fails_the_index(s: Setup) -> None:
    spec = {
        "completions": 2,
        "parallelism": 2,
        "completionMode": "Indexed",
        "backoffLimitPerIndex": 1,
    }
    s.create(JOBS, job(**spec), NS)
    s.wait(0.1)
    assert s.job()["spec"]["backoffLimit"] == 2**31 - 1
    zero = next(p for p in s.pods() if p["metadata"]["annotations"][COMPLETION_INDEX] == "0")
    assert zero["metadata"]["annotations"][FAILURE_COUNT] == "0"
    s.finish(zero, "Failed", exit_code=1)
    s.wait(10)
    again = next(p for p in s.pods() if p["metadata"]["annotations"][COMPLETION_INDEX] == "0")
    assert again["metadata"]["annotations"][FAILURE_COUNT] == "1"
    s.finish(again, "Failed", exit_code=1)
    assert s.status()["failedIndexes"] == "0"
    one = next(p for p in s.pods() if p["metadata"]["annotations"][COMPLETION_INDEX] == "1")
    s.finish(one, "Succeeded")
    status = s.status()
    assert status["completedIndexes"] == "1" and status["failedIndexes"] == "0"
    assert s.conditions()[-1] == ("Failed", "True", "FailedIndexes", "Job has failed indexes")


def test_deleting_the_job_releases_its_pods_finalizers(s: Setup) -> None:
    s.create(JOBS, job(parallelism=2, completions=2), NS)
    s.wait(0.1)
    assert all(p["metadata"]["finalizers"] == [TRACKING] for p in s.pods())
    s.delete(JOBS, "pi", NS)
    s.wait(0.1)
    assert len(s.pods()) == 2  # the garbage collector deletes them; no finalizer holds them
    assert all(not p["metadata"].get("finalizers") for p in s.pods())


def test_a_job_managed_elsewhere_is_left_alone(s: Setup) -> None:
    s.create(JOBS, job(managedBy="example.com/batch"), NS)
    s.wait(2)
    assert s.pods() == [] and s.status() == {}


def test_too_many_pods_are_deleted_when_parallelism_drops(s: Setup) -> None:
    s.create(JOBS, job(parallelism=3, completions=6), NS)
    s.wait(0.1)
    assert len(s.pods()) == 3

    def shrink(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["spec"]["parallelism"] = 1
        return existing

    s.cluster.run(s.cluster.stores[JOBS].update(NS, "pi", shrink))
    s.wait(0.1)
    assert len(s.pods()) == 1
    assert s.status()["active"] == 1
    assert [r for r, _ in s.events()].count("SuccessfulDelete") == 2


def test_a_status_written_meanwhile_is_not_overwritten(s: Setup) -> None:
    """kube's UpdateStatus carries the resourceVersion the sync read: another writer's
    status (a test finishing the Job itself) wins, and the controller leaves a finished
    Job alone."""
    s.create(JOBS, job(), NS)
    s.wait(0.1)
    stamp = format_timestamp(s.cluster.clock.seconds())
    done = [
        {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": stamp},
        {"type": "Complete", "status": "True", "lastTransitionTime": stamp},
    ]

    def finish(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["status"] = {
            "conditions": done,
            "succeeded": 1,
            "startTime": stamp,
            "completionTime": stamp,
        }
        return existing

    s.cluster.run(s.cluster.stores[JOBS].update(NS, "pi", finish, subresource="status"))
    (pod,) = s.pods()
    s.finish(pod, "Failed", exit_code=1)
    status = s.status()
    assert status["conditions"] == done and status["succeeded"] == 1 and "failed" not in status
    assert not s.pods(live=False)[0]["metadata"].get("finalizers")  # released, not counted


def test_a_repeated_event_is_counted_not_repeated(s: Setup) -> None:
    """client-go's correlator: the same event again raises the count of the first."""
    s.create(JOBS, job(suspend=True), NS)
    s.wait(0.1)

    def toggle(value: bool) -> None:
        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["spec"]["suspend"] = value
            return existing

        s.cluster.run(s.cluster.stores[JOBS].update(NS, "pi", write))
        s.wait(1.0)  # event times are to the second

    for value in (False, True, False, True):
        toggle(value)
    items = [e.object for e in s.cluster.stores[EVENTS].list(NS, ListOptions()).items]
    counted = {e["reason"]: e["count"] for e in items if e["reason"] in ("Suspended", "Resumed")}
    assert counted == {"Suspended": 3, "Resumed": 2}
    (suspended,) = [e for e in items if e["reason"] == "Suspended"]
    assert suspended["lastTimestamp"] > suspended["firstTimestamp"]
