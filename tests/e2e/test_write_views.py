"""Writes answered as metadata alone or as a Table, as kube-apiserver v1.36 answered
them (reference, 2026-12-08): client-go's metadata client deletes and patches with
``as=PartialObjectMetadata``; a delete's Status passes through any view; metadata of
the other shape is refused once the write is done."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.test_list import make_namespace
from tests.e2e.test_workloads import deployment

META = "g=meta.platform.io;v=v1"
PARTIAL = {"Accept": f"application/json;as=PartialObjectMetadata;{META}"}
PARTIAL_LIST = {"Accept": f"application/json;as=PartialObjectMetadataList;{META}"}
TABLE = {"Accept": f"application/json;as=Table;{META}"}
MERGE = "application/merge-patch+json"


def _configmap(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"view": "yes"}}, "data": {"a": "1"}}


def test_writes_answer_metadata_or_a_table(server: Server, admin: requests.Session) -> None:
    base = server.url + make_namespace(admin, server, "write-views")
    made = admin.post(base, json=_configmap("m"), headers=PARTIAL)
    assert made.status_code == 201
    assert (made.json()["kind"], made.json()["apiVersion"]) == (
        "PartialObjectMetadata",
        "meta.platform.io/v1",
    )
    assert "data" not in made.json() and made.json()["metadata"]["labels"] == {"view": "yes"}
    patched = admin.patch(
        f"{base}/m", json={"data": {"a": "2"}}, headers={**TABLE, "Content-Type": MERGE}
    )
    assert patched.status_code == 200
    table = patched.json()
    assert table["kind"] == "Table" and [row["cells"][0] for row in table["rows"]] == ["m"]
    # a delete's Status goes out as it is
    gone = admin.delete(f"{base}/m", headers=PARTIAL)
    assert (gone.status_code, gone.json()["kind"], gone.json()["status"]) == (
        200,
        "Status",
        "Success",
    )
    # a single object asked for as a list: refused after the write, as kube does
    refused = admin.post(base, json=_configmap("n"), headers=PARTIAL_LIST)
    assert (refused.status_code, refused.json()["message"]) == (
        406,
        "you requested PartialObjectMetadataList, but the requested object is not a list "
        "(*core.ConfigMap)",
    )
    assert admin.get(f"{base}/n").status_code == 200
    listed = admin.delete(f"{base}?labelSelector=view%3Dyes", headers=PARTIAL_LIST)
    assert listed.status_code == 200
    assert listed.json()["kind"] == "PartialObjectMetadataList"
    assert [i["metadata"]["name"] for i in listed.json()["items"]] == ["n"]


def test_a_daemon_sets_metadata_has_no_template_generation(
    server: Server, admin: requests.Session
) -> None:
    """kube cuts metadata from its internal DaemonSet, where the generation is a spec
    field rather than the annotation v1 carries it in."""
    ns = make_namespace(admin, server, "ds-partial").split("/")[4]
    url = f"{server.url}/apis/apps/v1/namespaces/{ns}/daemonsets"
    body = {**deployment("d"), "apiVersion": "apps/v1", "kind": "DaemonSet"}
    body["metadata"]["annotations"] = {"kept": "yes"}
    made = admin.post(url, json=body, headers=PARTIAL)
    assert made.status_code == 201
    assert made.json()["metadata"]["annotations"] == {"kept": "yes"}
    full = admin.get(f"{url}/d").json()["metadata"]["annotations"]
    assert full == {"deprecated.daemonset.template.generation": "1", "kept": "yes"}


def test_a_scale_answers_its_metadata(server: Server, admin: requests.Session) -> None:
    """A Scale's read and write answer the Scale's metadata; the other shape is refused
    naming kube's Scale type, once the write is done."""
    ns = make_namespace(admin, server, "scale-views").split("/")[4]
    url = f"{server.url}/apis/apps/v1/namespaces/{ns}/deployments"
    assert admin.post(url, json=deployment("d")).status_code == 201
    read = admin.get(f"{url}/d/scale", headers=PARTIAL).json()
    assert (read["kind"], sorted(read["metadata"])) == (
        "PartialObjectMetadata",
        ["creationTimestamp", "name", "namespace", "resourceVersion", "uid"],
    )
    scaled = admin.patch(
        f"{url}/d/scale",
        json={"spec": {"replicas": 4}},
        headers={**PARTIAL_LIST, "Content-Type": MERGE},
    )
    assert (scaled.status_code, scaled.json()["message"]) == (
        406,
        "you requested PartialObjectMetadataList, but the requested object is not a list "
        "(*autoscaling.Scale)",
    )
    assert admin.get(f"{url}/d/scale").json()["spec"] == {"replicas": 4}
