"""What a status write does with metadata, as kube-apiserver v1.36 answered the same
patches (reference): FlowSchemas' and PriorityLevelConfigurations' status strategies
take the stored ObjectMeta whole, ServiceCIDRs' (and VolumeAttachments', the DRA
kinds') reset labels, annotations, finalizers and owners (ResetObjectMetaForStatus),
and a Namespace's checks the metadata as an update's only."""

from __future__ import annotations

import requests

from tests.e2e.conftest import Server

MERGE = {"Content-Type": "application/merge-patch+json"}
FLOW = "/apis/flowcontrol.apiserver.platform.io/v1"


def test_flow_control_status_writes_keep_the_stored_metadata(
    server: Server, admin: requests.Session
) -> None:
    for path in (
        f"{FLOW}/flowschemas/catch-all/status",
        f"{FLOW}/prioritylevelconfigurations/catch-all/status",
    ):
        before = admin.get(server.url + path).json()["metadata"]
        change = {"metadata": {"labels": {"-bad": "x"}, "uid": "other"}}
        answer = admin.patch(server.url + path + "?dryRun=All", json=change, headers=MERGE)
        assert answer.status_code == 200, answer.text
        after = answer.json()["metadata"]
        assert (after.get("labels"), after["uid"]) == (before.get("labels"), before["uid"])


def test_a_service_cidr_status_write_resets_labels(server: Server, admin: requests.Session) -> None:
    path = "/apis/networking.platform.io/v1/servicecidrs/kubernetes/status?dryRun=All"
    change = {"metadata": {"labels": {"-bad": "x"}, "annotations": {"a": "b"}}}
    answer = admin.patch(server.url + path, json=change, headers=MERGE)
    assert answer.status_code == 200, answer.text
    meta = answer.json()["metadata"]
    assert "labels" not in meta and "annotations" not in meta


def test_a_namespace_status_write_checks_metadata_as_an_update(
    server: Server, admin: requests.Session
) -> None:
    path = "/api/v1/namespaces/default/status?dryRun=All"
    answer = admin.patch(
        server.url + path, json={"metadata": {"labels": {"-x": "y"}}}, headers=MERGE
    )
    body = answer.json()
    assert (answer.status_code, [c["field"] for c in body["details"]["causes"]]) == (
        422,
        ["metadata.labels"] * 3,
    )
