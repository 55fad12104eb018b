"""Quota evaluators and scopes: what each kind costs, and which quotas track it."""

from __future__ import annotations

from typing import Any

from platform_api.admission.quota import scopes
from platform_api.admission.quota.catalog import Registry
from platform_api.admission.quota.evaluators import (
    ClaimEvaluator,
    Evaluator,
    ServiceEvaluator,
    matches,
)
from platform_api.admission.quota.pods import PodEvaluator
from platform_api.admission.quota.resources import to_object

Obj = dict[str, Any]


def pod(*containers: Obj, **spec: Any) -> Obj:
    return {"metadata": {"name": "p"}, "spec": {"containers": list(containers), **spec}}


def container(name: str = "c", **resources: dict[str, str]) -> Obj:
    return {"name": name, "image": "i", "resources": resources}


def usage(ev: Any, obj: Obj) -> dict[str, str]:
    return to_object(ev.usage(obj))


def test_pod_usage_sums_containers_against_the_largest_init_container() -> None:
    p = pod(
        container("a", requests={"cpu": "100m", "memory": "1Gi"}, limits={"cpu": "200m"}),
        container("b", requests={"cpu": "2"}, limits={"cpu": "3"}),
        initContainers=[container("i", requests={"cpu": "4"}, limits={"cpu": "1"})],
    )
    assert usage(PodEvaluator(), p) == {
        "count/pods": "1",
        "cpu": "4",
        "limits.cpu": "3200m",
        "memory": "1Gi",
        "pods": "1",
        "requests.cpu": "4",
        "requests.memory": "1Gi",
    }


def test_pod_usage_of_sidecars_overhead_hugepages_and_extended_resources() -> None:
    sidecar = {**container("s", requests={"cpu": "1"}), "restartPolicy": "Always"}
    p = pod(
        container(requests={"cpu": "1", "hugepages-2Mi": "4Mi", "example.com/gpu": "2"}),
        initContainers=[sidecar],
        overhead={"cpu": "250m"},
    )
    got = usage(PodEvaluator(), p)
    assert got["requests.cpu"] == "2250m"
    assert got["hugepages-2Mi"] == got["requests.hugepages-2Mi"] == "4Mi"
    assert got["requests.example.com/gpu"] == "2"


def test_pod_level_resources_override_the_containers() -> None:
    p = pod(container(requests={"cpu": "1"}), resources={"requests": {"cpu": "3"}})
    assert usage(PodEvaluator(), p)["requests.cpu"] == "3"
    assert PodEvaluator().constraints(["limits.cpu"], p) == ""


def test_terminal_and_expired_pods_hold_only_their_count() -> None:
    done = {**pod(container(requests={"cpu": "1"})), "status": {"phase": "Succeeded"}}
    assert usage(PodEvaluator(), done) == {"count/pods": "1"}
    gone = pod(container(requests={"cpu": "1"}))
    gone["metadata"].update(deletionTimestamp="2020-01-01T00:00:00Z", deletionGracePeriodSeconds=30)
    assert usage(PodEvaluator(), gone) == {"count/pods": "1"}
    assert usage(PodEvaluator(clock=lambda: 0.0), gone)["pods"] == "1"


def test_pod_constraints_name_each_missing_resource_and_container() -> None:
    p = pod(container("b"), container("a", requests={"cpu": "1"}))
    p["spec"]["initContainers"] = [container("i")]
    assert PodEvaluator().constraints(["requests.cpu", "limits.cpu", "pods"], p) == (
        "must specify limits.cpu for: a,b,i; requests.cpu for: b,i"
    )


def test_service_usage_counts_node_ports_and_load_balancers() -> None:
    ports = [{"port": 80, "nodePort": 30000}, {"port": 81}]
    lb = {"spec": {"type": "LoadBalancer", "ports": ports}}
    assert usage(ServiceEvaluator(), lb) == {
        "count/services": "1",
        "services": "1",
        "services.loadbalancers": "1",
        "services.nodeports": "2",
    }
    lb["spec"]["allocateLoadBalancerNodePorts"] = False
    assert usage(ServiceEvaluator(), lb)["services.nodeports"] == "1"
    assert usage(ServiceEvaluator(), {"spec": {"ports": ports}})["services.nodeports"] == "0"


def test_claim_usage_by_storage_class_rounded_up() -> None:
    claim = {
        "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "1.5"}}},
        "status": {"allocatedResources": {"storage": "1Gi"}},
    }
    got = usage(ClaimEvaluator(), claim)
    assert got == {
        "count/persistentvolumeclaims": "1",
        "fast.storageclass.storage.platform.io/persistentvolumeclaims": "1",
        "fast.storageclass.storage.platform.io/requests.storage": "1Gi",
        "fast.storageclass.storage.k8s.io/persistentvolumeclaims": "1",
        "fast.storageclass.storage.k8s.io/requests.storage": "1Gi",
        "persistentvolumeclaims": "1",
        "requests.storage": "1Gi",
    }
    names = [
        "gold.storageclass.storage.platform.io/requests.storage",
        "pods",
        "requests.storage",
        "gold.storageclass.storage.k8s.io/persistentvolumeclaims",
    ]
    assert ClaimEvaluator().matching_resources(names) == [names[0], names[2], names[3]]


def test_quotas_may_name_groups_by_kubes_names() -> None:
    """Under --serve-upstream-groups clients write kube's names; both count."""
    ev = Evaluator("networking.platform.io", "ingresses")
    names = ["count/ingresses.networking.k8s.io", "count/ingresses.networking.platform.io"]
    assert ev.matching_resources(names) == names
    assert usage(ev, {}) == dict.fromkeys(names, "1")
    claim = {"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "slow"}}}
    assert (
        usage(ClaimEvaluator(), claim)["slow.storageclass.storage.k8s.io/persistentvolumeclaims"]
        == "1"
    )


def test_registry_counts_every_resource_and_ignores_reviews() -> None:
    registry = Registry()
    ev = registry.get("apps", "deployments")
    assert ev is not None and usage(ev, {}) == {"count/deployments.apps": "1"}
    cm = registry.get("", "configmaps")
    assert cm is not None and usage(cm, {}) == {"configmaps": "1", "count/configmaps": "1"}
    assert registry.get("", "events") is None
    assert registry.get("authorization.platform.io", "subjectaccessreviews") is None
    found = registry.for_names(["count/widgets.example.com", "secrets"])
    assert sorted(e.plural for e in found) == ["secrets", "widgets"]


def test_scopes_of_pods() -> None:
    best_effort = pod(container())
    guaranteed = pod(container(requests={"memory": "1Gi"}), activeDeadlineSeconds=10)
    exists = {"operator": "Exists"}
    assert scopes.pod_matches({"scopeName": "BestEffort", **exists}, best_effort)
    assert scopes.pod_matches({"scopeName": "NotBestEffort", **exists}, guaranteed)
    assert scopes.pod_matches({"scopeName": "Terminating", **exists}, guaranteed)
    assert scopes.pod_matches({"scopeName": "NotTerminating", **exists}, best_effort)
    high = pod(container(), priorityClassName="high")
    in_high = {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}
    assert scopes.pod_matches(in_high, high)
    assert not scopes.pod_matches(in_high, best_effort)
    not_in = {"scopeName": "PriorityClass", "operator": "NotIn", "values": ["high"]}
    assert scopes.pod_matches(not_in, best_effort) and not scopes.pod_matches(not_in, high)
    missing = {"scopeName": "PriorityClass", "operator": "DoesNotExist"}
    assert scopes.pod_matches(missing, best_effort) and not scopes.pod_matches(missing, high)
    term = {"labelSelector": {}, "namespaces": ["other"], "topologyKey": "k"}
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    cross = pod(container(), affinity=affinity)
    assert scopes.pod_matches({"scopeName": "CrossNamespacePodAffinity", **exists}, cross)
    assert not scopes.pod_matches({"scopeName": "CrossNamespacePodAffinity", **exists}, high)


def test_scopes_of_claims_and_quota_matching() -> None:
    claim = {"spec": {"volumeAttributesClassName": "gold"}}
    req = {"scopeName": "VolumeAttributesClass", "operator": "In", "values": ["gold"]}
    assert scopes.pvc_matches(req, claim) and not scopes.pvc_matches(req, {})
    quota = {
        "spec": {"scopes": ["BestEffort"]},
        "status": {"hard": {"pods": "1"}, "used": {"pods": "0"}},
    }
    assert matches(PodEvaluator(), quota, pod(container()))
    assert not matches(PodEvaluator(), quota, pod(container(requests={"cpu": "1"})))
    assert not matches(ServiceEvaluator(), quota, {"spec": {}})  # no scopes on services
