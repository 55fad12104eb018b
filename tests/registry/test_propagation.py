"""Which finalizers a delete adds: kube's shouldOrphanDependents and
shouldDeleteDependents, the kind's DefaultGarbageCollectionPolicy last."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.deletion import deletion_finalizers
from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme


def obj(*finalizers: str) -> dict[str, Any]:
    return {"metadata": {"name": "x", "finalizers": list(finalizers)}}


@pytest.mark.parametrize(
    ("finalizers", "propagation", "orphan", "default", "expected"),
    [
        ((), None, None, "Background", []),
        ((), None, None, "Orphan", ["orphan"]),  # a v1 Job's or RC's
        ((), "Background", None, "Orphan", []),
        ((), "Foreground", None, "Orphan", ["foregroundDeletion"]),
        ((), None, False, "Orphan", []),
        ((), None, True, "Background", ["orphan"]),
        (("foregroundDeletion",), None, None, "Orphan", ["foregroundDeletion"]),
        (("orphan", "a/b"), "Background", None, "Background", ["a/b"]),
        (("a/b",), None, None, "Orphan", ["a/b", "orphan"]),
        # an Event's: nothing is added, whatever is asked, and what it carried goes
        ((), "Foreground", None, "Unsupported", []),
        ((), None, True, "Unsupported", []),
        (("orphan", "a/b", "foregroundDeletion"), None, None, "Unsupported", ["a/b"]),
    ],
)
def test_the_policy_named_then_the_finalizers_then_the_kinds_default(
    finalizers: tuple[str, ...],
    propagation: str | None,
    orphan: bool | None,
    default: str,
    expected: list[str],
) -> None:
    assert deletion_finalizers(obj(*finalizers), propagation, orphan, default) == expected


@pytest.mark.parametrize(
    ("group", "plural", "default"),
    [
        ("batch", "jobs", "Orphan"),
        ("", "replicationcontrollers", "Orphan"),
        ("apps", "replicasets", "Background"),
        ("apps", "deployments", "Background"),
        ("batch", "cronjobs", "Background"),
        ("", "pods", "Background"),
        ("", "events", "Unsupported"),
        ("events.platform.io", "events", "Unsupported"),
    ],
)
def test_kinds_that_kept_v1s_old_default_orphan(group: str, plural: str, default: str) -> None:
    rt = builtin_scheme().lookup(group, "v1", plural)
    assert rt is not None
    strategy = strategy_for(rt)
    assert strategy.default_propagation == default
    assert (strategy.default_propagation_warning is not None) == (plural == "jobs")
