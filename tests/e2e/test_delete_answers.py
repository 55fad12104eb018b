"""What a DELETE answers, through the kubernetes client: the deleted object for the kinds
whose kube store says so (ReturnDeletedObject: pods, services, namespaces, service
accounts, volumes and claims, pod templates, quotas, the storage.k8s.io kinds, DRA),
a Status for the others; the reference kube-apiserver v1.36 answered these alike."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

SG = "storage.platform.io"


def test_core_kinds_answer_the_deleted_object_or_a_status(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    container = client.V1Container(name="c", image="i")
    template = client.V1PodTemplate(
        metadata=client.V1ObjectMeta(name="e2e-deleted"),
        template=client.V1PodTemplateSpec(spec=client.V1PodSpec(containers=[container])),
    )
    core.create_namespaced_pod_template("default", template)
    deleted = core.delete_namespaced_pod_template("e2e-deleted", "default")
    assert (deleted.kind, deleted.metadata.name) == ("PodTemplate", "e2e-deleted")
    quota = client.V1ResourceQuota(metadata=client.V1ObjectMeta(name="e2e-deleted"))
    core.create_namespaced_resource_quota("default", quota)
    deleted = core.delete_namespaced_resource_quota("e2e-deleted", "default")
    assert (deleted.kind, deleted.metadata.name) == ("ResourceQuota", "e2e-deleted")
    core.create_namespaced_config_map("default", {"metadata": {"name": "e2e-deleted"}})
    status = core.delete_namespaced_config_map("e2e-deleted", "default")  # typed "object"
    assert (status["kind"], status["status"], status["details"]["name"]) == (
        "Status",
        "Success",
        "e2e-deleted",
    )


@pytest.mark.parametrize(
    ("plural", "kind", "rest"),
    [
        ("storageclasses", "StorageClass", {"provisioner": "example.com/x"}),
        ("csidrivers", "CSIDriver", {"spec": {}}),
        ("csinodes", "CSINode", {"spec": {"drivers": []}}),
        (
            "volumeattachments",
            "VolumeAttachment",
            {
                "spec": {
                    "attacher": "example.com",
                    "nodeName": "n1",
                    "source": {"persistentVolumeName": "pv1"},
                }
            },
        ),
    ],
)
def test_storage_kinds_answer_the_deleted_object(
    api: client.ApiClient, plural: str, kind: str, rest: dict[str, Any]
) -> None:
    objects = client.CustomObjectsApi(api)
    name = "e2e-deleted.example.com"
    body = {"apiVersion": f"{SG}/v1", "kind": kind, "metadata": {"name": name}, **rest}
    objects.create_cluster_custom_object(SG, "v1", plural, body)
    deleted = objects.delete_cluster_custom_object(SG, "v1", plural, name)
    assert (deleted["kind"], deleted["metadata"]["name"]) == (kind, name)
    assert "deletionTimestamp" not in deleted["metadata"]  # gone, not waiting for finalizers
