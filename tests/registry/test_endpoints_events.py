"""v1 Endpoints and old-style v1 Events refused as kube-apiserver v1.36 refused each
(reference: dry-run creates); "" where kube accepted."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.defaults import apply_defaults
from platform_api.registry.discovery import validate_endpoints
from platform_api.registry.events import CoreEventStrategy
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.field import aggregate

INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


@pytest.mark.parametrize(
    ("subsets", "message"),
    [
        (
            [{"addresses": [{"ip": "nope"}], "ports": [{"port": 0}]}],
            f'[subsets[0].addresses[0].ip: Invalid value: "nope": {INVALID_IP}, '
            'subsets[0].addresses[0].ip: Invalid value: "nope": must be a valid IP address, '
            "subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive]",
        ),
        (
            [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}, {"port": 81}]}],
            "[subsets[0].ports[0].name: Required value, subsets[0].ports[1].name: Required value]",
        ),
        (
            [{"notReadyAddresses": [{"ip": "0.0.0.0"}], "ports": [{"port": 80, "name": "a"}]}],
            'subsets[0].notReadyAddresses[0].ip: Invalid value: "0.0.0.0": may not be '
            "unspecified (0.0.0.0)",
        ),
        ([{"addresses": [{"ip": "10.0.0.1"}]}], ""),
        ([{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}], ""),
    ],
)
def test_endpoints(subsets: list[Any], message: str) -> None:
    obj = {"kind": "Endpoints", "subsets": subsets}
    apply_defaults("", "Endpoints", obj)
    errs = validate_endpoints(obj["subsets"])
    assert (aggregate(errs) if errs else "") == message


@pytest.mark.parametrize(
    ("namespace", "involved", "message"),
    [
        ("kp1", "", 'involvedObject.namespace: Invalid value: "": does not match event.namespace'),
        (
            "kp1",
            "other",
            'involvedObject.namespace: Invalid value: "other": does not match event.namespace',
        ),
        ("kp1", "kp1", ""),
        ("default", "", ""),
    ],
)
def test_old_style_events_name_their_namespace(namespace: str, involved: str, message: str) -> None:
    rt = builtin_scheme().lookup("", "v1", "events")
    assert rt is not None
    event = {
        "metadata": {"name": "e", "namespace": namespace},
        "involvedObject": {"name": "x", "namespace": involved},
        "reason": "R",
    }
    errs = CoreEventStrategy(rt).validate(event)
    assert (aggregate(errs) if errs else "") == message


def test_loopback_endpoints_pass_for_local_webhooks() -> None:
    """kube refuses 127.0.0.1 ("may not be in the loopback range"); here a Service routes
    webhook calls to a local process through it, so it passes (a documented difference)."""
    obj = {
        "kind": "Endpoints",
        "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 9443}]}],
    }
    apply_defaults("", "Endpoints", obj)
    assert validate_endpoints(obj["subsets"]) == []
