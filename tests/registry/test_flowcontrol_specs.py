"""FlowSchema and PriorityLevelConfiguration specs refused as the reference kube-apiserver
v1.36 refused them (dry-run creates): its order for a limited level (the limit
response before the percentages) and its internal struct for a distinguisher."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api import errors
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.flowcontrol import validate_flow_schema, validate_priority_level

GROUP = "flowcontrol.apiserver.platform.io"


def test_a_limited_level_reads_as_kubes() -> None:
    queuing = {"queues": 0, "handSize": 100, "queueLengthLimit": 0}
    limited = {
        "nominalConcurrencyShares": -1,
        "lendablePercent": 101,
        "limitResponse": {"type": "Queue", "queuing": queuing},
    }
    obj = {"metadata": {"name": "plc1"}, "spec": {"type": "Limited", "limited": limited}}
    apply_defaults(GROUP, "PriorityLevelConfiguration", obj)  # queues 0 is 64, as kube's
    message = errors.invalid(
        "PriorityLevelConfiguration", GROUP, "plc1", validate_priority_level(obj)
    )
    assert message.message == (
        f'PriorityLevelConfiguration.{GROUP} "plc1" is invalid: '
        "[spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative "
        "integer, spec.limited.limitResponse.queuing.handSize: Invalid value: 100: should not "
        "be greater than queues (64), spec.limited.lendablePercent: Invalid value: 101: must "
        "be between 0 and 100, inclusive]"
    )


@pytest.mark.parametrize(("method", "shown"), [({"type": "Bogus"}, "Bogus"), ({}, "")])
def test_a_distinguisher_shows_as_kubes_struct(method: dict[str, Any], shown: str) -> None:
    spec = {"priorityLevelConfiguration": {"name": "x"}, "distinguisherMethod": method}
    obj = {"metadata": {"name": "fsx"}, "spec": spec}
    apply_defaults(GROUP, "FlowSchema", obj)
    errs = validate_flow_schema(obj)
    assert [str(e) for e in errs] == [
        f'spec.distinguisherMethod.type: Unsupported value: {{"Type":"{shown}"}}: '
        'supported values: "ByNamespace", "ByUser"'
    ]
