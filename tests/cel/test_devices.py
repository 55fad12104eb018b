"""DRA device selectors compiled as kube's DRA compiler compiles them: compile errors,
result types and cost limits, each as the reference kube-apiserver v1.36 answered a
DeviceClass holding the selector (fixtures/device_selectors_kube.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from platform_api import errors
from platform_api.cel.devices import compile_selector
from platform_api.registry.deviceselectors import validate_device_selector

CASES = json.loads((Path(__file__).parent / "fixtures" / "device_selectors_kube.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["expression"][:50] for c in CASES])
def test_selectors_are_taken_or_refused_as_kube_did(case: dict[str, Any]) -> None:
    errs = validate_device_selector(case["expression"], "spec.selectors[0].cel", stored=False)
    kind = "DeviceClass.resource.k8s.io"
    message = errors.invalid(kind, "", "dc", errs).message if errs else ""
    assert message == case["message"]


def test_costs_near_kubes_limit() -> None:
    """Three nested loops over one attribute map stay under kube's 1,000,000; a fourth
    level, or a loop over every domain's attributes, does not."""
    one = 'device.attributes["d"]'
    three = f'{one}.all(a, {one}.all(b, {one}.all(c, a + b + c == "x")))'
    assert 700_000 < compile_selector(three).max_cost < 1_000_000
    four = f"{one}.all(a, {one}.all(b, {one}.all(c, {one}.all(e, true))))"
    assert compile_selector(four).max_cost > 1_000_000


def test_a_device_has_the_fields_kube_declares() -> None:
    compiled = compile_selector("device.allowMultipleAllocations && device.driver != ''")
    assert (compiled.error, compiled.max_cost > 0) == ("", True)
    assert compile_selector("device.name == 'x'").error.startswith(
        "compilation failed: ERROR: <input>:1:7: undefined field 'name'"
    )
