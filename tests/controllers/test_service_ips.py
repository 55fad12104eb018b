"""The service-cidr-controller and the IPAddress repair loop over real storage, the hub
and a test clock: finalizers and Ready, deletions held while addresses would be
orphaned and let go a grace period later, missing addresses made, leaked ones removed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.clusterip import address_object
from platform_api.controllers.ipaddressrepair import IPAddressRepair
from platform_api.controllers.servicecidr import BLOCKED, READY, ServiceCIDRController
from platform_api.registry.servicecidr import FINALIZER
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
NET = "networking.platform.io"
CIDRS, ADDRESSES, SERVICES = (
    (NET, "v1", "servicecidrs"),
    (NET, "v1", "ipaddresses"),
    ("", "v1", "services"),
)


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.cluster.clock.advance(time.time())  # timestamps are wall-clock times
        stores, hub, clock = self.cluster.stores, self.cluster.hub, self.cluster.clock
        self.start(
            ServiceCIDRController(stores[CIDRS], stores[ADDRESSES], hub, clock),
            IPAddressRepair(stores[SERVICES], stores[ADDRESSES], stores[CIDRS], hub, clock),
        )


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    setup = Setup(str(tmp_path))
    setup.create(CIDRS, cidr("kubernetes", "10.0.0.0/24"))
    return setup


def cidr(name: str, *cidrs: str) -> Obj:
    return {"metadata": {"name": name}, "spec": {"cidrs": list(cidrs)}}


def service(name: str, ip: str) -> Obj:
    spec = {"type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip], "ports": [{"port": 80}]}
    return {"metadata": {"name": name}, "spec": spec}


def ready(obj: Obj | None) -> tuple[str, str, str]:
    assert obj is not None
    condition = obj["status"]["conditions"][0]
    return condition["status"], condition["reason"], condition["message"]


def test_every_service_cidr_gets_its_finalizer_and_ready(s: Setup) -> None:
    extra = s.get(CIDRS, "kubernetes")
    assert extra is not None and extra["metadata"]["finalizers"] == [FINALIZER]
    assert ready(extra) == ("True", "", READY)


def test_a_deletion_waits_for_the_addresses_only_it_holds(s: Setup) -> None:
    s.create(CIDRS, cidr("extra", "10.7.0.0/28"))
    s.create(SERVICES, service("web", "10.7.0.5"), namespace="default")
    assert s.get(ADDRESSES, "10.7.0.5") is not None  # the repair loop made it
    s.delete(CIDRS, "extra")
    assert ready(s.get(CIDRS, "extra")) == ("False", "Terminating", BLOCKED)
    s.wait(30)
    assert s.get(CIDRS, "extra") is not None
    s.delete(SERVICES, "web", namespace="default")
    s.delete(ADDRESSES, "10.7.0.5")
    s.wait(0.1)
    assert s.get(CIDRS, "extra") is None  # the deletion began over 10 s ago


def test_a_range_inside_another_goes_after_the_grace_period(s: Setup) -> None:
    s.create(CIDRS, cidr("inner", "10.0.0.0/28"))
    s.create(SERVICES, service("web", "10.0.0.5"), namespace="default")
    s.delete(CIDRS, "inner")
    s.wait(5)
    assert s.get(CIDRS, "inner") is not None  # still within kube's 10 s
    s.wait(6)
    assert s.get(CIDRS, "inner") is None


def test_missing_and_wrong_addresses_are_made_again(s: Setup) -> None:
    s.create(SERVICES, service("web", "10.0.0.9"), namespace="default")
    made = s.get(ADDRESSES, "10.0.0.9")
    assert made is not None and made["spec"]["parentRef"]["name"] == "web"
    s.delete(ADDRESSES, "10.0.0.9")
    assert s.get(ADDRESSES, "10.0.0.9") is not None
    s.create(SERVICES, service("outside", "10.9.9.9"), namespace="default")
    assert s.get(ADDRESSES, "10.9.9.9") is None  # in no ServiceCIDR: only logged


def test_an_address_whose_service_never_came_goes_after_a_minute(s: Setup) -> None:
    s.create(ADDRESSES, address_object("10.0.0.30", "default", "never"))
    s.wait(30)
    assert s.get(ADDRESSES, "10.0.0.30") is not None
    s.wait(31)
    assert s.get(ADDRESSES, "10.0.0.30") is None


def test_an_address_its_service_no_longer_has_goes(s: Setup) -> None:
    s.create(SERVICES, service("old", "10.0.0.8"), namespace="default")
    assert s.get(ADDRESSES, "10.0.0.8") is not None

    def external(current: Obj | None) -> Obj:
        assert current is not None
        current["spec"] = {"type": "ExternalName", "externalName": "x.example.com"}
        return current

    s.cluster.run(s.cluster.stores[SERVICES].update("default", "old", external))
    s.cluster.settle()
    assert s.get(ADDRESSES, "10.0.0.8") is None  # older than the Service's change: at once
    s.create(SERVICES, service("web", "10.0.0.9"), namespace="default")
    s.create(ADDRESSES, address_object("10.0.0.31", "default", "web"))
    s.wait(2)
    assert s.get(ADDRESSES, "10.0.0.31") is not None  # newer: the update may be coming
    s.wait(60)
    assert s.get(ADDRESSES, "10.0.0.31") is None
    assert s.get(ADDRESSES, "10.0.0.9") is not None


def test_addresses_of_others_are_left_alone(s: Setup) -> None:
    mine = {
        "metadata": {"name": "10.0.0.40"},
        "spec": {"parentRef": {"resource": "gateways", "name": "g"}},
    }
    s.create(ADDRESSES, mine)
    s.wait(120)
    assert s.get(ADDRESSES, "10.0.0.40") is not None
