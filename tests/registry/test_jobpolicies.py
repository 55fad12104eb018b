"""A Job's pod failure, success and pod replacement policies and ``managedBy``, refused
as kube-apiserver v1.36 refused each (recorded: dry-run creates of the fixture's specs;
"" where kube accepted).  kube defaults a condition pattern's status to True first."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.registry.apps import JobStrategy
from platform_api.registry.defaults import apply_defaults
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.field import aggregate

CASES = json.loads((Path(__file__).parent / "fixtures" / "job_policies_kube.json").read_text())
PREFIX = 'Job.batch "{}" is invalid: '


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_policies_as_kube_refused_them(case: dict[str, Any]) -> None:
    rt = builtin_scheme().lookup("batch", "v1", "jobs")
    assert rt is not None
    meta = {"name": "x", "namespace": "d", "uid": "8b4d3c1e-0000-4000-8000-000000000001"}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta}
    job["spec"] = copy.deepcopy(case["spec"])
    apply_defaults("batch", "Job", job)
    strategy = JobStrategy(rt)
    strategy.prepare_for_create(job)
    errs = strategy.validate(job)
    expected = case["message"]
    if expected:
        expected = expected.removeprefix(PREFIX.format(_name(expected)))
    assert (aggregate(errs) if errs else "") == expected


def _name(message: str) -> str:
    return message.split('"')[1]
