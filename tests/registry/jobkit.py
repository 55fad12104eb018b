"""Shared builders of the Job update and status tests: a Job as a create stores it, a merge
patch, and kube's answer to an update or a status write of it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from platform_api.patch.merge import merge_patch
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.strategy import StatusStrategy, Strategy, strategy_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.field import aggregate

Obj = dict[str, Any]
# kube's longer answers (a pod template printed whole), by case name
KUBE: dict[str, str] = json.loads(
    (Path(__file__).parent / "fixtures" / "job_update_kube.json").read_text()
)
UID = "6b5c0d3e-1f2a-4b3c-8d4e-5f6a7b8c9d0e"
T0, T1, T2 = "2024-01-01T00:00:00Z", "2024-01-01T00:10:00Z", "2024-01-01T00:20:00Z"
CONTAINER = {"name": "c", "image": "busybox"}
INDEXED = {"completionMode": "Indexed", "completions": 3, "parallelism": 3}
PER_INDEX = {**INDEXED, "backoffLimitPerIndex": 1}


def cond(type_: str, status: str = "True") -> Obj:
    return {
        "type": type_,
        "status": status,
        "lastProbeTime": T0,
        "lastTransitionTime": T0,
        "reason": "R",
        "message": "m",
    }


def new_job(spec: Obj) -> Obj:
    pod = {"restartPolicy": "Never", "containers": [dict(CONTAINER)]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "job"},
        "spec": {"template": {"spec": pod}, **copy.deepcopy(spec)},
    }


def merge(target: Any, patch: Any) -> Any:
    """``target`` with an RFC 7386 merge patch applied (both left as they were)."""
    return merge_patch(copy.deepcopy(target), copy.deepcopy(patch))


def pod_patch(**pod: Any) -> Obj:
    return {"spec": {"template": {"spec": pod}}}


def container_patch(**fields: Any) -> Obj:
    return pod_patch(containers=[{**CONTAINER, **fields}])


def job_strategy(kind: str) -> Strategy:
    rt = builtin_scheme().by_kind("batch", "v1", kind)
    assert rt is not None
    return strategy_for(rt)


def stored(spec: Obj, status: Obj) -> Obj:
    """A Job as a create stores it, then ``status`` written."""
    job = new_job(spec)
    apply_defaults("batch", "Job", job)
    job["metadata"].update(namespace="ns", uid=UID, resourceVersion="1")
    job_strategy("Job").prepare_for_create(job)
    if status:
        job["status"] = copy.deepcopy(status)
    return job


def update_message(old: Obj, new: Obj) -> str:
    strategy = job_strategy("Job")
    apply_defaults("batch", "Job", new)
    strategy.prepare_for_update(new, old)
    errs = strategy.validate_update(new, old)
    return aggregate(errs) if errs else ""


def status_message(old: Obj, new: Obj) -> str:
    strategy = StatusStrategy(job_strategy("Job"))
    strategy.prepare_for_update(new, old)
    errs = strategy.validate_update(new, old)
    return aggregate(errs) if errs else ""
