"""ResourceQuota on a real server through the kubernetes client: refusals with kube's
exact bodies (as the reference kube-apiserver answers them), status kept by the
controller, usage released on delete, concurrent creates and dry runs."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from tests.e2e.conftest import E2E_WORKERS, Server
from tests.e2e.crds import eventually


def namespace(api: client.ApiClient, name: str) -> str:
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    # pods need the default ServiceAccount the controller makes
    eventually(lambda: core.list_namespaced_service_account(name).items)
    return name


def quota(api: client.ApiClient, ns: str, name: str, hard: dict[str, str]) -> None:
    body = client.V1ResourceQuota(
        metadata=client.V1ObjectMeta(name=name), spec=client.V1ResourceQuotaSpec(hard=hard)
    )
    client.CoreV1Api(api).create_namespaced_resource_quota(ns, body)


def used(api: client.ApiClient, ns: str, name: str) -> dict[str, str]:
    status = client.CoreV1Api(api).read_namespaced_resource_quota(name, ns).status
    return dict(status.used or {})


def wait_used(api: client.ApiClient, ns: str, name: str, want: dict[str, str]) -> None:
    eventually(lambda: used(api, ns, name) == want, timeout=5.0)


def pod(name: str, **resources: dict[str, str]) -> client.V1Pod:
    container = client.V1Container(
        name="c", image="nginx", resources=client.V1ResourceRequirements(**resources)
    )
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name), spec=client.V1PodSpec(containers=[container])
    )


def refusal(caught: pytest.ExceptionInfo[ApiException]) -> dict[str, Any]:
    assert caught.value.status == 403
    body: dict[str, Any] = json.loads(caught.value.body)
    return body


def forbidden(plural: str, name: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{plural} "{name}" is forbidden: {message}',
        "reason": "Forbidden",
        "details": {"name": name, "kind": plural},
        "code": 403,
    }


def test_second_pod_is_refused_and_released_on_delete(api: client.ApiClient) -> None:
    ns = namespace(api, "quota-pods")
    core = client.CoreV1Api(api)
    quota(api, ns, "q", {"pods": "1"})
    wait_used(api, ns, "q", {"pods": "0"})
    hard = core.read_namespaced_resource_quota("q", ns).status.hard
    assert hard == {"pods": "1"}
    core.create_namespaced_pod(ns, pod("p1"))
    assert used(api, ns, "q") == {"pods": "1"}  # charged by admission, before the write
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod(ns, pod("p2"))
    assert refusal(caught) == forbidden(
        "pods", "p2", "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"
    )
    core.delete_namespaced_pod("p1", ns, grace_period_seconds=0)
    wait_used(api, ns, "q", {"pods": "0"})
    core.create_namespaced_pod(ns, pod("p2"))


def test_compute_quota_needs_requests_and_limits(api: client.ApiClient) -> None:
    ns = namespace(api, "quota-compute")
    core = client.CoreV1Api(api)
    quota(api, ns, "q", {"requests.cpu": "1", "limits.cpu": "2"})
    wait_used(api, ns, "q", {"requests.cpu": "0", "limits.cpu": "0"})
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod(ns, pod("bare"))
    assert refusal(caught) == forbidden(
        "pods", "bare", "failed quota: q: must specify limits.cpu for: c; requests.cpu for: c"
    )
    big = pod("big", requests={"cpu": "1500m"}, limits={"cpu": "2"})
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod(ns, big)
    assert refusal(caught) == forbidden(
        "pods",
        "big",
        "exceeded quota: q, requested: requests.cpu=1500m, used: requests.cpu=0, "
        "limited: requests.cpu=1",
    )
    core.create_namespaced_pod(ns, pod("fits", requests={"cpu": "500m"}, limits={"cpu": "1"}))
    assert used(api, ns, "q") == {"limits.cpu": "1", "requests.cpu": "500m"}


def test_count_of_configmaps(api: client.ApiClient) -> None:
    ns = namespace(api, "quota-count")
    core = client.CoreV1Api(api)
    quota(api, ns, "cm", {"count/configmaps": "2"})
    # the namespace already holds the root CA ConfigMap when the server publishes one
    start = int(eventually(lambda: used(api, ns, "cm").get("count/configmaps")))
    for i in range(2 - start):
        core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata={"name": f"c{i}"}))
    assert used(api, ns, "cm") == {"count/configmaps": "2"}
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata={"name": "over"}))
    assert refusal(caught) == forbidden(
        "configmaps",
        "over",
        "exceeded quota: cm, requested: count/configmaps=1, used: count/configmaps=2, "
        "limited: count/configmaps=2",
    )


def test_dry_run_is_checked_but_charges_nothing(api: client.ApiClient) -> None:
    ns = namespace(api, "quota-dry")
    core = client.CoreV1Api(api)
    quota(api, ns, "q", {"secrets": "1"})
    wait_used(api, ns, "q", {"secrets": "0"})
    secret = client.V1Secret(metadata=client.V1ObjectMeta(name="s1"))
    core.create_namespaced_secret(ns, secret, dry_run="All")
    assert used(api, ns, "q") == {"secrets": "0"}
    core.create_namespaced_secret(ns, secret)
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_secret(
            ns, client.V1Secret(metadata=client.V1ObjectMeta(name="s2")), dry_run="All"
        )
    assert refusal(caught) == forbidden(
        "secrets",
        "s2",
        "exceeded quota: q, requested: secrets=1, used: secrets=1, limited: secrets=1",
    )
    assert used(api, ns, "q") == {"secrets": "1"}


def test_concurrent_creates_never_exceed_the_quota(server: Server) -> None:
    setup = config.new_client_from_config(config_file=str(server.kubeconfig))
    ns = namespace(setup, "quota-race")
    quota(setup, ns, "q", {"count/configmaps": "13"})
    start = int(eventually(lambda: used(setup, ns, "q").get("count/configmaps")))
    room = 13 - start

    def create(i: int) -> tuple[int, str]:
        api = config.new_client_from_config(config_file=str(server.kubeconfig))
        try:
            body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"race-{i}"))
            client.CoreV1Api(api).create_namespaced_config_map(ns, body)
            return 201, ""
        except ApiException as e:
            return int(e.status), json.loads(e.body)["reason"]
        finally:
            api.close()

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(create, range(20)))
    created = answers.count((201, ""))
    if int(E2E_WORKERS or "1") == 1:
        assert sorted(answers) == [(201, "")] * room + [(403, "Forbidden")] * (20 - room)
    else:
        # Processes that each charge the quota race for its status: one whose write
        # loses four times running answers the last Conflict, as kube's evaluator does
        # (checkQuotas' three retries); none lets a create past the quota.
        assert 0 < created <= room
        assert set(answers) <= {(201, ""), (403, "Forbidden"), (409, "Conflict")}
    stored = client.CoreV1Api(setup).list_namespaced_config_map(ns).items
    assert len(stored) == start + created
    wait_used(setup, ns, "q", {"count/configmaps": str(start + created)})
    setup.close()


def test_invalid_quota_is_refused(api: client.ApiClient) -> None:
    body = client.V1ResourceQuota(
        metadata=client.V1ObjectMeta(name="bad"),
        spec=client.V1ResourceQuotaSpec(hard={"pods": "1.5"}),
    )
    with pytest.raises(ApiException) as caught:
        client.CoreV1Api(api).create_namespaced_resource_quota("default", body)
    assert caught.value.status == 422
    status = json.loads(caught.value.body)
    assert status["message"] == (
        'ResourceQuota "bad" is invalid: spec.hard[pods]: Invalid value: "1500m": '
        "must be an integer"
    )


def test_device_claims_are_charged_per_device_class(api: client.ApiClient) -> None:
    """kube's claimEvaluator, its answers recorded from the reference kube-apiserver: a
    claim counts once and charges its class's devices (32 for allocationMode All), also
    as the extended resources the class stands for."""
    ns = namespace(api, "quota-dra")
    custom = client.CustomObjectsApi(api)
    group, version = "resource.platform.io", "v1"
    gpu = {"apiVersion": f"{group}/{version}", "kind": "DeviceClass"}
    gpu |= {"metadata": {"name": "gpu.example.com"}}
    gpu["spec"] = {"extendedResourceName": "example.com/gpu"}
    custom.create_cluster_custom_object(group, version, "deviceclasses", gpu)
    per_class = "gpu.example.com.deviceclass.resource.platform.io/devices"
    implicit = "requests.deviceclass.resource.platform.io/gpu.example.com"
    hard = {"count/resourceclaims.resource.platform.io": "5", per_class: "3"}
    hard |= {implicit: "3", "requests.example.com/gpu": "3"}
    quota(api, ns, "q", hard)
    wait_used(api, ns, "q", dict.fromkeys(hard, "0"))

    def claim(name: str, exactly: dict[str, Any]) -> dict[str, Any]:
        request = {"name": "r", "exactly": {"deviceClassName": "gpu.example.com", **exactly}}
        return {
            "apiVersion": f"{group}/{version}",
            "kind": "ResourceClaim",
            "metadata": {"name": name},
            "spec": {"devices": {"requests": [request]}},
        }

    custom.create_namespaced_custom_object(
        group, version, ns, "resourceclaims", claim("c1", {"count": 2})
    )
    two = {per_class: "2", implicit: "2", "requests.example.com/gpu": "2"}
    assert used(api, ns, "q") == {"count/resourceclaims.resource.platform.io": "1", **two}
    with pytest.raises(ApiException) as caught:
        custom.create_namespaced_custom_object(
            group, version, ns, "resourceclaims", claim("all", {"allocationMode": "All"})
        )
    shown = ",".join(f"{k}={{}}" for k in sorted(two))
    message = (
        f"exceeded quota: q, requested: {shown.format(32, 32, 32)}, used: "
        f"{shown.format(2, 2, 2)}, limited: {shown.format(3, 3, 3)}"
    )
    assert refusal(caught)["message"] == (
        f'resourceclaims.resource.platform.io "all" is forbidden: {message}'
    )
