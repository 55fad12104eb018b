"""resourceclaim-controller over real storage and a test clock: claims made from
templates for pods, and claims released, deallocated and deleted as kube's syncClaim does."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers.resourceclaim import (
    FINALIZER,
    POD_CLAIM_NAME,
    ResourceClaimController,
    generate_name,
)
from platform_api.registry.store import Store
from platform_api.scheme.optional import OPTIONAL_TYPES
from platform_api.storage.interface import ListOptions
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
GROUP = "resource.platform.io"
PODS, EVENTS = ("", "v1", "pods"), ("", "v1", "events")
CLAIMS, TEMPLATES = (GROUP, "v1", "resourceclaims"), (GROUP, "v1", "resourceclaimtemplates")
NS = "default"
CLAIM_SPEC: Obj = {
    "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}
}
ALLOCATION: Obj = {
    "devices": {
        "results": [{"request": "gpu", "driver": "dra.example.com", "pool": "p", "device": "d0"}]
    }
}


def pod(name: str, *claims: Obj, node: str = "") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "busybox"}], "resourceClaims": list(claims)}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def from_template(name: str, template: str) -> Obj:
    return {"name": name, "resourceClaimTemplateName": template}


def template(name: str, **meta: Any) -> Obj:
    inner: Obj = {"spec": CLAIM_SPEC}
    if meta:
        inner["metadata"] = meta
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name},
        "spec": inner,
    }


def claim(
    name: str, owner: Obj | None = None, pod_claim: str = "", finalizers: tuple[str, ...] = ()
) -> Obj:
    meta: Obj = {"name": name, "finalizers": list(finalizers)}
    if owner is not None:
        uid = owner["metadata"]["uid"]
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": owner["metadata"]["name"],
                "uid": uid,
                "controller": True,
            }
        ]
    if pod_claim:
        meta["annotations"] = {POD_CLAIM_NAME: pod_claim}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": CLAIM_SPEC,
    }


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        cluster = self.cluster
        cluster.clock.advance(1_000_000)
        for rt in OPTIONAL_TYPES:
            if rt.group == GROUP and rt.version == "v1":
                store = cluster.stores[(rt.group, rt.version, rt.plural)] = Store(
                    rt, cluster.storage
                )
                connect = getattr(store.strategy, "connect", None)
                if connect is not None:
                    connect(cluster.stores, lambda: None)
        st = cluster.stores
        self.controller = ResourceClaimController(
            st[PODS], st[CLAIMS], st[TEMPLATES], st[EVENTS], cluster.hub, cluster.clock
        )

    def claims(self) -> list[Obj]:
        return [s.object for s in self.cluster.stores[CLAIMS].list(NS, ListOptions()).items]

    def events(self) -> list[Obj]:
        return [s.object for s in self.cluster.stores[EVENTS].list(NS, ListOptions()).items]

    def write_status(self, kind: tuple[str, str, str], name: str, **status: Any) -> None:
        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["status"] = {**(existing.get("status") or {}), **status}
            return existing

        store = self.cluster.stores[kind]
        self.cluster.run(store.update(NS, name, write, subresource="status"))
        self.cluster.settle()


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def test_generate_name_is_cut_as_kube_cuts_it() -> None:
    assert generate_name("web", "gpu") == "web-gpu-"
    pod_name, claim_name = "p" * 40, "c" * 30  # 72 characters with the hyphens
    assert generate_name(pod_name, claim_name) == "p" * (40 * 57 // 72) + "-" + "c" * (
        30 * 57 // 72
    )
    assert len(generate_name("a" * 63, "b" * 63)) <= 57


def test_a_claim_is_made_from_the_template_for_the_pod(s: Setup) -> None:
    s.start(s.controller)
    made_template = s.create(
        TEMPLATES, template("tmpl", labels={"app": "web"}, annotations={"note": "x"}), NS
    )
    made_pod = s.create(PODS, pod("web", from_template("gpu", "tmpl")), NS)
    (made,) = s.claims()
    meta = made["metadata"]
    assert meta["generateName"] == "web-gpu-" and meta["name"].startswith("web-gpu-")
    assert len(meta["name"]) == len("web-gpu-") + 5
    assert meta["labels"] == {"app": "web"}
    assert meta["annotations"] == {"note": "x", POD_CLAIM_NAME: "gpu"}
    uid = made_pod["metadata"]["uid"]
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": uid, "controller": True}
    ]
    assert made["spec"] == made_template["spec"]["spec"]
    current = s.get(PODS, "web", NS)
    assert current is not None
    assert current["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": meta["name"]}
    ]
    s.wait(5)
    assert len(s.claims()) == 1  # nothing more once recorded


def test_a_named_claim_is_never_made(s: Setup) -> None:
    s.start(s.controller)
    s.create(TEMPLATES, template("tmpl"), NS)
    s.create(PODS, pod("web", {"name": "shared", "resourceClaimName": "mine"}), NS)
    s.wait(1)
    assert s.claims() == []
    current = s.get(PODS, "web", NS)
    assert current is not None and "resourceClaimStatuses" not in (current.get("status") or {})


def test_an_existing_claim_of_the_pod_is_reused(s: Setup) -> None:
    s.create(TEMPLATES, template("tmpl"), NS)
    made_pod = s.create(PODS, pod("web", from_template("gpu", "tmpl")), NS)
    s.create(CLAIMS, claim("earlier", made_pod, "gpu"), NS)
    s.start(s.controller)
    s.wait(1)
    assert [c["metadata"]["name"] for c in s.claims()] == ["earlier"]
    current = s.get(PODS, "web", NS)
    assert current is not None
    assert current["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": "earlier"}
    ]


def test_a_missing_template_is_a_warning_then_the_claim_comes_with_it(s: Setup) -> None:
    s.start(s.controller)
    s.create(PODS, pod("web", from_template("gpu", "later")), NS)
    s.wait(1)
    assert s.claims() == []
    (event,) = s.events()
    assert (event["type"], event["reason"]) == ("Warning", "FailedResourceClaimCreation")
    assert event["message"] == (
        'PodResourceClaim gpu: resource claim template "later": '
        f'resourceclaimtemplate.{GROUP} "later" not found'
    )
    assert event["involvedObject"]["kind"] == "Pod" and event["source"] == {
        "component": "resource_claim"
    }
    s.create(TEMPLATES, template("later"), NS)
    s.wait(1)
    (made,) = s.claims()
    assert made["metadata"]["annotations"] == {POD_CLAIM_NAME: "gpu"}


def _reserved_claim(s: Setup, *consumers: Obj) -> None:
    s.create(CLAIMS, claim("shared", finalizers=(FINALIZER,)), NS)
    reserved = [
        {"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}
        for p in consumers
    ]
    s.write_status(CLAIMS, "shared", allocation=ALLOCATION, reservedFor=reserved)


def test_reservations_of_pods_gone_done_or_replaced_are_dropped(s: Setup) -> None:
    named = {"name": "c", "resourceClaimName": "shared"}
    running, done, gone = (s.create(PODS, pod(n, named), NS) for n in ("running", "done", "gone"))
    stranger = {"metadata": {"name": "running", "uid": str(uuid.uuid4())}}  # another "running"
    _reserved_claim(s, running, done, gone, stranger)
    s.write_status(PODS, "done", phase="Succeeded")
    s.delete(PODS, "gone", NS, grace_period=0)
    s.start(s.controller)
    s.wait(1)
    current = s.get(CLAIMS, "shared", NS)
    assert current is not None
    assert [r["name"] for r in current["status"]["reservedFor"]] == ["running"]
    assert current["status"]["allocation"] == ALLOCATION  # still in use
    assert current["metadata"]["finalizers"] == [FINALIZER]


def test_the_last_reservation_dropped_deallocates_and_drops_the_finalizer(s: Setup) -> None:
    s.start(s.controller)
    user = s.create(PODS, pod("user", {"name": "c", "resourceClaimName": "shared"}), NS)
    _reserved_claim(s, user)
    s.delete(PODS, "user", NS, grace_period=0)  # known deleted: no lookup needed
    s.wait(1)
    current = s.get(CLAIMS, "shared", NS)
    assert current is not None  # not generated for the pod: kept
    assert "reservedFor" not in current["status"] and "allocation" not in current["status"]
    assert not current["metadata"].get("finalizers")


def test_a_done_pods_unreserved_claim_is_deleted(s: Setup) -> None:
    s.start(s.controller)
    s.create(TEMPLATES, template("tmpl"), NS)
    s.create(PODS, pod("job", from_template("gpu", "tmpl")), NS)
    (made,) = s.claims()
    s.write_status(PODS, "job", phase="Succeeded")
    s.wait(1)
    assert s.claims() == []
    assert s.get(PODS, "job", NS) is not None  # the pod itself stays
    assert made["metadata"]["name"]


def test_a_done_pods_reserved_claim_waits_for_its_reservation(s: Setup) -> None:
    s.create(TEMPLATES, template("tmpl"), NS)
    made_pod = s.create(PODS, pod("job", from_template("gpu", "tmpl")), NS)
    s.start(s.controller)
    s.wait(1)
    (made,) = s.claims()
    name = made["metadata"]["name"]
    reserved = [{"resource": "pods", "name": "job", "uid": made_pod["metadata"]["uid"]}]
    s.write_status(CLAIMS, name, allocation=ALLOCATION, reservedFor=reserved)
    assert [c["metadata"]["name"] for c in s.claims()] == [name]  # running: kept
    s.write_status(PODS, "job", phase="Failed")
    s.wait(1)
    assert s.claims() == []


def test_a_bound_pods_allocated_claim_is_reserved_for_it(s: Setup) -> None:
    s.create(CLAIMS, claim("shared"), NS)
    s.write_status(CLAIMS, "shared", allocation=ALLOCATION)
    s.start(s.controller)
    made_pod = s.create(
        PODS, pod("bound", {"name": "c", "resourceClaimName": "shared"}, node="n1"), NS
    )
    s.wait(1)
    current = s.get(CLAIMS, "shared", NS)
    assert current is not None
    assert current["status"]["reservedFor"] == [
        {"resource": "pods", "name": "bound", "uid": made_pod["metadata"]["uid"]}
    ]
