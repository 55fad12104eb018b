"""Which kinds take a PUT without a resourceVersion (kube's AllowUnconditionalUpdate):
the kinds whose kube strategy says false refuse one, as kube-apiserver v1.36 did for
Leases, PodDisruptionBudgets and the CSI kinds (reference, 2026-12-08)."""

from __future__ import annotations

import pytest

from platform_api import errors
from platform_api.registry import prepare
from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme

# kube's strategies that return false, of the kinds served by default
REFUSED = {
    "mutatingadmissionpolicies",
    "mutatingadmissionpolicybindings",
    "mutatingwebhookconfigurations",
    "validatingadmissionpolicies",
    "validatingadmissionpolicybindings",
    "validatingwebhookconfigurations",
    "leases",
    "runtimeclasses",
    "poddisruptionbudgets",
    "csidrivers",
    "csinodes",
    "csistoragecapacities",
    "volumeattachments",
    "customresourcedefinitions",
    "apiservices",
}
TYPES = {rt.plural: rt for rt in builtin_scheme().all()}


@pytest.mark.parametrize("plural", sorted(TYPES))
def test_a_put_without_a_resource_version(plural: str) -> None:
    assert strategy_for(TYPES[plural]).allow_unconditional_update is (plural not in REFUSED)


def test_a_lease_put_without_one_is_invalid_in_the_resources_name() -> None:
    rt = TYPES["leases"]
    old = {"metadata": {"name": "l", "namespace": "ns", "resourceVersion": "7"}, "spec": {}}
    new = {"metadata": {"name": "l", "namespace": "ns"}, "spec": {"holderIdentity": "me"}}
    with pytest.raises(errors.StatusError) as raised:
        prepare.prepare_update(rt, strategy_for(rt), True, ("ns", "l"), new, old)
    assert raised.value.message == (
        'leases.coordination.platform.io "l" is invalid: metadata.resourceVersion: '
        "Invalid value: 0: must be specified for an update"
    )
