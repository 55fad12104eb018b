"""kube's cluster admission plugins on a real server, through the kubernetes client:
default StorageClass and IngressClass, protection finalizers, the not-ready taint, a
refused resize, and AlwaysDeny (texts as the reference kube-apiserver answers them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from tests.e2e.conftest import start_server

SG = "storage.platform.io/v1"


def custom(api: client.ApiClient, group: str, plural: str, body: dict[str, Any]) -> Any:
    version = body["apiVersion"].split("/")[1]
    return client.CustomObjectsApi(api).create_cluster_custom_object(group, version, plural, body)


def status_of(caught: pytest.ExceptionInfo[ApiException]) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(caught.value.body)
    return body


def test_claim_gets_default_class_and_finalizer(api: client.ApiClient) -> None:
    default = {"storageclass.platform.io/is-default-class": "true"}
    custom(api, "storage.platform.io", "storageclasses", {
        "apiVersion": SG, "kind": "StorageClass", "provisioner": "example.com/x",
        "metadata": {"name": "e2e-default", "annotations": default},
    })  # fmt: skip
    core = client.CoreV1Api(api)
    claim = client.V1PersistentVolumeClaim(
        metadata=client.V1ObjectMeta(name="e2e-claim"),
        spec=client.V1PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"}),
        ),
    )
    created = core.create_namespaced_persistent_volume_claim("default", claim)
    assert created.spec.storage_class_name == "e2e-default"
    assert created.metadata.finalizers == ["platform.io/pvc-protection"]
    volume = client.V1PersistentVolume(
        metadata=client.V1ObjectMeta(name="e2e-volume"),
        spec=client.V1PersistentVolumeSpec(
            capacity={"storage": "1Gi"},
            access_modes=["ReadWriteOnce"],
            host_path=client.V1HostPathVolumeSource(path="/tmp/e2e"),
        ),
    )
    assert core.create_persistent_volume(volume).metadata.finalizers == [
        "platform.io/pv-protection"
    ]


def test_resize_refused_without_expansion(api: client.ApiClient) -> None:
    custom(api, "storage.platform.io", "storageclasses", {
        "apiVersion": SG, "kind": "StorageClass", "provisioner": "example.com/x",
        "metadata": {"name": "e2e-fixed"},
    })  # fmt: skip
    core = client.CoreV1Api(api)
    claim = client.V1PersistentVolumeClaim(
        metadata=client.V1ObjectMeta(name="e2e-fixed-claim"),
        spec=client.V1PersistentVolumeClaimSpec(
            storage_class_name="e2e-fixed",
            access_modes=["ReadWriteOnce"],
            resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"}),
        ),
    )
    core.create_namespaced_persistent_volume_claim("default", claim)
    core.patch_namespaced_persistent_volume_claim_status(
        "e2e-fixed-claim", "default", {"status": {"phase": "Bound"}}
    )
    grow = {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}
    with pytest.raises(ApiException) as caught:
        core.patch_namespaced_persistent_volume_claim("e2e-fixed-claim", "default", grow)
    assert caught.value.status == 403
    assert status_of(caught) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'persistentvolumeclaims "e2e-fixed-claim" is forbidden: only dynamically '
        "provisioned pvc can be resized and the storageclass that provisions the pvc must "
        "support resize",
        "reason": "Forbidden",
        "details": {"name": "e2e-fixed-claim", "kind": "persistentvolumeclaims"},
        "code": 403,
    }


def test_ingress_gets_default_class(api: client.ApiClient) -> None:
    # The client's NetworkingV1Api speaks the upstream group: the branded one is custom here.
    group, version = "networking.platform.io", "v1"
    default = {"ingressclass.platform.io/is-default-class": "true"}
    custom(api, group, "ingressclasses", {
        "apiVersion": f"{group}/{version}", "kind": "IngressClass",
        "metadata": {"name": "e2e-ingress", "annotations": default},
        "spec": {"controller": "example.com/ingress"},
    })  # fmt: skip
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    ingress = {
        "apiVersion": f"{group}/{version}", "kind": "Ingress",
        "metadata": {"name": "e2e-web"}, "spec": {"defaultBackend": backend},
    }  # fmt: skip
    objects = client.CustomObjectsApi(api)
    created = objects.create_namespaced_custom_object(
        group, version, "default", "ingresses", ingress
    )
    assert created["spec"]["ingressClassName"] == "e2e-ingress"


def test_node_gets_not_ready_taint(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    node = core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name="e2e-node")))
    assert [(t.key, t.effect, t.value) for t in node.spec.taints or []] == [
        ("node.platform.io/not-ready", "NoSchedule", None)
    ]


def test_always_deny_refuses_writes(tmp_path: Path) -> None:
    denying = start_server(tmp_path / "data", "--enable-admission-plugins=AlwaysDeny")
    try:
        api = config.new_client_from_config(config_file=str(denying.kubeconfig))
        core = client.CoreV1Api(api)
        body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="denied"), data={"k": "v"})
        with pytest.raises(ApiException) as caught:
            core.create_namespaced_config_map("default", body)
        assert caught.value.status == 403
        assert status_of(caught) == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'configmaps "denied" is forbidden: admission control is denying all '
            "modifications",
            "reason": "Forbidden",
            "details": {"name": "denied", "kind": "configmaps"},
            "code": 403,
        }
        assert core.list_namespaced_config_map("default").items is not None  # reads pass
        api.close()
    finally:
        denying.stop()
