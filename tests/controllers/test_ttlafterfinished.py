"""ttl-after-finished-controller over real storage, the hub and a Clock at the epoch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from platform_api.controllers.ttlafterfinished import TTLAfterFinished, expires_at
from platform_api.storage.interface import ListOptions
from tests.authorization.rbac_cluster import Cluster

Obj = dict[str, Any]


def job(name: str, ttl: int | None) -> Obj:
    spec: Obj = {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}],
            }
        }
    }
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def finish(condition: str, at: str) -> Any:
    def set_status(obj: Obj | None) -> Obj:
        assert obj is not None
        # kube's status rules: Complete comes with SuccessCriteriaMet and a completionTime,
        # Failed with FailureTarget, and a finished Job has a startTime
        first = "SuccessCriteriaMet" if condition == "Complete" else "FailureTarget"
        obj["status"] = {
            "conditions": [
                {"type": first, "status": "True", "lastTransitionTime": at},
                {"type": condition, "status": "True", "lastTransitionTime": at},
            ],
            "startTime": at,
        }
        if condition == "Complete":
            obj["status"]["completionTime"] = at
        return obj

    return set_status


def test_expiry_is_the_finish_time_plus_ttl() -> None:
    finished = job("j", 30)
    finished["status"] = {
        "conditions": [
            {"type": "Failed", "status": "True", "lastTransitionTime": "1970-01-01T00:01:00Z"}
        ]
    }
    assert expires_at(finished) == 90.0
    finished["status"]["conditions"][0]["status"] = "False"
    assert expires_at(finished) is None


def test_finished_jobs_are_deleted_in_the_foreground_after_their_ttl(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path))
    jobs = cluster.stores[("batch", "v1", "jobs")]
    for name, ttl in (("done-at-start", 0), ("ttl-10", 10), ("no-ttl", None), ("running", 0)):
        cluster.run(jobs.create("ns", job(name, ttl)))
    cluster.run(
        jobs.update(
            "ns", "done-at-start", finish("Complete", "1970-01-01T00:00:00Z"), subresource="status"
        )
    )
    controller = TTLAfterFinished(jobs, cluster.hub, cluster.clock)
    controller.start()
    cluster.settle()
    for name in ("ttl-10", "no-ttl"):
        cluster.run(
            jobs.update("ns", name, finish("Failed", "1970-01-01T00:00:05Z"), subresource="status")
        )
    cluster.settle()

    def state() -> dict[str, list[str]]:
        items = jobs.list("ns", ListOptions()).items
        return {
            s.object["metadata"]["name"]: s.object["metadata"].get("finalizers", []) for s in items
        }

    # Foreground deletion: marked with kube's finalizer, the garbage collector finishes it.
    assert state()["done-at-start"] == ["foregroundDeletion"]
    assert jobs.get("ns", "done-at-start").object["metadata"].get("deletionTimestamp")
    cluster.clock.advance(14.5 - cluster.clock.seconds())
    cluster.settle()
    assert state()["ttl-10"] == []
    cluster.clock.advance(0.5)  # 5 s finish + 10 s TTL
    cluster.settle()
    assert state()["ttl-10"] == ["foregroundDeletion"]
    assert state()["no-ttl"] == [] and state()["running"] == []
    controller.stop()
