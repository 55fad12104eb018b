"""A pod's annotation rules that need no server: the deletion cost as Go parses it, the
AppArmor version skew."""

from __future__ import annotations

import pytest

from platform_api.registry.podannotations import APPARMOR_CONTAINER, deletion_cost, sync_apparmor


@pytest.mark.parametrize(
    ("text", "cost"),
    [
        ("5", 5),
        ("-5", -5),
        ("0", 0),
        ("2147483647", 2**31 - 1),
        ("-2147483648", -(2**31)),
        ("2147483648", None),  # past int32
        ("+5", None),  # kube's validFirstDigit: no plus sign
        ("05", None),  # nor leading zeros
        ("", None),
        ("1_0", None),  # Python's int() would take it; Go's ParseInt does not
        ("5 ", None),
        ("--5", None),
    ],
)
def test_deletion_cost_reads_as_kubes(text: str, cost: int | None) -> None:
    assert deletion_cost({"controller.kubernetes.io/pod-deletion-cost": text}) == cost
    assert deletion_cost({}) == 0


def test_the_apparmor_version_skew() -> None:
    key = APPARMOR_CONTAINER
    pod = {
        "metadata": {
            "annotations": {
                key + "a": "runtime/default",
                key + "b": "localhost/",
                key + "c": "unconfined",
            }
        },
        "spec": {
            "securityContext": {"appArmorProfile": {"type": "Unconfined"}},
            "containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        },
    }
    warnings = sync_apparmor(pod)
    containers = pod["spec"]["containers"]
    # copied where it says something the pod does not; no field from an invalid one
    assert containers[0]["securityContext"] == {"appArmorProfile": {"type": "RuntimeDefault"}}
    assert "securityContext" not in containers[1] and "securityContext" not in containers[2]
    deprecated = 'deprecated since v1.30; use the "appArmorProfile" field instead'
    assert warnings == [
        f"metadata.annotations[{key}a]: {deprecated}",
        f"metadata.annotations[{key}b]: {deprecated}",
    ]
    pod["spec"]["os"] = {"name": "windows"}
    assert sync_apparmor(pod) == []
