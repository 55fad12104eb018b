"""Who may write a ResourceClaim's allocation and device status: kube's
AuthorizedForBinding and AuthorizedForDeviceStatus (their words recorded from the
reference kube-apiserver v1.36, which answered the same writes by the same user)."""

from __future__ import annotations

from typing import Any

import pytest_twisted

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.registry.claimauthz import NODE_NAME, status_denials

ALICE = UserInfo("alice", groups=("system:authenticated",))
ALLOCATION = {
    "devices": {
        "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": "d0"}]
    }
}
ON_NODE = {
    **ALLOCATION,
    "nodeSelector": {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
        ]
    },
}
DEVICE = {"driver": "gpu.example.com", "pool": "p", "device": "d0"}


class Granting:
    """Allows exactly the (verb, resource/subresource, name) it holds; records what it
    was asked."""

    def __init__(self, *allowed: tuple[str, str, str]) -> None:
        self.allowed = set(allowed)
        self.asked: list[tuple[str, str, str, str]] = []

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        key = (attrs.verb, f"{attrs.resource}/{attrs.subresource}", attrs.name)
        self.asked.append((*key, attrs.namespace))
        return (Decision.ALLOW if key in self.allowed else Decision.NO_OPINION), ""


async def _denials(authorizer: Any, user: UserInfo, verb: str, new: Any, old: Any) -> list[str]:
    return [str(e) for e in await status_denials(authorizer, user, verb, "g1", new, old)]


@pytest_twisted.ensureDeferred
async def test_allocating_needs_the_binding_subresource() -> None:
    denied = await _denials(Granting(), ALICE, "patch", {"allocation": ALLOCATION}, {})
    assert denied == [
        "status.allocation: Forbidden: changing status.allocation or status.reservedFor "
        'requires resource="resourceclaims/binding", verb="patch" permission: '
        'resourceclaims.resource.platform.io is forbidden: User "alice" cannot patch resource '
        '"resourceclaims/binding" in API group "resource.platform.io" at the cluster scope'
    ]
    binder = Granting(("patch", "resourceclaims/binding", ""))
    assert await _denials(binder, ALICE, "patch", {"allocation": ALLOCATION}, {}) == []
    same = {"allocation": ALLOCATION}
    assert await _denials(Granting(), ALICE, "update", same, same) == []  # nothing changed


@pytest_twisted.ensureDeferred
async def test_device_status_needs_the_driver_subresource_named_for_the_driver() -> None:
    new = {"allocation": ALLOCATION, "devices": [DEVICE]}
    old = {"allocation": ALLOCATION}
    denied = await _denials(Granting(), ALICE, "patch", new, old)
    assert denied == [
        'status.devices: Forbidden: changing status.devices requires resource="resourceclaims'
        '/driver", verb="[arbitrary-node:patch]" permission: resourceclaims.resource.platform.io'
        ' "gpu.example.com" is forbidden: User "alice" cannot arbitrary-node:patch resource '
        '"resourceclaims/driver" in API group "resource.platform.io" in the namespace "g1"'
    ]
    driver = Granting(("arbitrary-node:patch", "resourceclaims/driver", "gpu.example.com"))
    assert await _denials(driver, ALICE, "patch", new, old) == []
    # removing an entry is a change too; an unallocated claim's devices are not checked
    assert await _denials(Granting(), ALICE, "patch", old, new) != []
    assert await _denials(Granting(), ALICE, "patch", {"devices": [DEVICE]}, {}) == []


@pytest_twisted.ensureDeferred
async def test_a_service_account_on_the_allocated_node_may_use_associated_node() -> None:
    agent = UserInfo("system:serviceaccount:drivers:agent", extra={NODE_NAME: ("node-1",)})
    granting = Granting(("associated-node:update", "resourceclaims/driver", "gpu.example.com"))
    new = {"allocation": ON_NODE, "devices": [DEVICE]}
    assert await _denials(granting, agent, "update", new, {"allocation": ON_NODE}) == []
    assert [a[0] for a in granting.asked] == ["associated-node:update"]
    elsewhere = UserInfo(agent.name, extra={NODE_NAME: ("node-2",)})
    denied = await _denials(granting, elsewhere, "update", new, {"allocation": ON_NODE})
    assert len(denied) == 1 and 'verb="[arbitrary-node:update]"' in denied[0]
