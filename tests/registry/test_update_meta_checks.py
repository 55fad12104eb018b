"""Which metadata checks a kind's update runs itself, as kube-apiserver v1.36 reported
them (reference, 2026-12-08: causes counted per kind)."""

from __future__ import annotations

import pytest

from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme


@pytest.mark.parametrize(
    ("plural", "group", "found"),
    [
        ("configmaps", "", 2),
        ("persistentvolumeclaims", "", 2),
        ("endpoints", "", 2),
        ("poddisruptionbudgets", "policy", 0),
        ("leases", "coordination.platform.io", 0),
    ],
)
def test_core_finalizer_rules_follow_each_metadata_check_of_an_update(
    plural: str, group: str, found: int
) -> None:
    """A ConfigMap's update checks its metadata as an update's and as a create's, each
    through core's wrapper with its finalizer rules (a bad finalizer is two causes, as
    kube's answer had); a PodDisruptionBudget's checks none of it itself, a Lease's
    with apimachinery's checks, which have no finalizer rules."""
    rt = builtin_scheme().lookup(group, "v1", plural)
    assert rt is not None
    old = {"metadata": {"name": "x", "namespace": "ns", "resourceVersion": "1", "uid": "u"}}
    new = {"metadata": {**old["metadata"], "finalizers": ["bad"]}}
    errs = strategy_for(rt).validate_meta_update(new, old, strategy_for(rt).update_meta_checks)
    assert [e.field for e in errs] == ["metadata.finalizers[0]"] * found
