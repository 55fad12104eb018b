"""CustomResourceDefinitions: status, discovery, OpenAPI, naming conflicts, deletion."""

from __future__ import annotations

import copy
import json
import threading
import uuid
from pathlib import Path
from typing import Any

import requests

from platform_api.codec.goshape import set_revision
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import (
    CRDS,
    MERGE,
    condition,
    crd_manifest,
    create_crd,
    crontab,
    delete_crd,
    eventually,
    namespace,
    ns_path,
)
from tests.storage.test_lmdb_store import ManualWriter

CRD_KEY = b"/apiextensions.platform.io/customresourcedefinitions/"


def test_a_new_crd_is_established_and_served(server: Server, admin: requests.Session) -> None:
    group = "life.example.com"
    crd = create_crd(admin, server, crd_manifest(group, short=["ct"]))
    status = crd["status"]
    assert status["acceptedNames"] == {
        "plural": "crontabs",
        "singular": "crontab",
        "shortNames": ["ct"],
        "kind": "CronTab",
        "listKind": "CronTabList",
    }
    assert status["storedVersions"] == ["v1"]
    named = condition(crd, "NamesAccepted")
    assert named is not None and named["reason"] == "NoConflicts"
    assert named["message"] == "no conflicts found"
    established = condition(crd, "Established")
    assert established is not None
    assert (established["reason"], established["message"]) == (
        "InitialNamesAccepted",
        "the initial names have been accepted",
    )
    assert crd["metadata"]["generation"] == 1
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    ns = namespace(admin, server, "life")
    r = admin.post(server.url + ns_path(group, ns), json=crontab("one", group))
    assert r.status_code == 201, r.text
    assert r.json()["metadata"]["generation"] == 1
    listed = admin.get(server.url + ns_path(group, ns)).json()
    assert listed["kind"] == "CronTabList" and listed["apiVersion"] == f"{group}/v1"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["one"]
    delete_crd(admin, server, crd["metadata"]["name"])


def test_conditions_written_away_come_back(server: Server, admin: requests.Session) -> None:
    """kube's naming controller compares the NamesAccepted condition as well as the names:
    a status written with no conditions (Go's null) gets both conditions again."""
    crd = create_crd(admin, server, crd_manifest("wiped.example.com"))
    url = f"{server.url}{CRDS}/{crd['metadata']['name']}"
    r = admin.put(url + "/status", json={**crd, "status": {**crd["status"], "conditions": None}})
    assert r.status_code == 200, r.text

    def established() -> dict[str, Any] | None:  # "Installing" first, as kube's controllers
        found = condition(admin.get(url).json(), "Established")
        return found if found is not None and found["status"] == "True" else None

    back = eventually(established)
    assert (back["status"], back["reason"]) == ("True", "InitialNamesAccepted")
    named = condition(admin.get(url).json(), "NamesAccepted")
    assert named is not None and named["reason"] == "NoConflicts"
    delete_crd(admin, server, crd["metadata"]["name"])


def test_discovery_and_openapi_follow_the_crd(server: Server, admin: requests.Session) -> None:
    group = "disco.example.com"
    crd = create_crd(admin, server, crd_manifest(group, short=["dt"]))
    groups = admin.get(server.url + "/apis").json()["groups"]
    entry = next(g for g in groups if g["name"] == group)
    assert entry["preferredVersion"] == {"groupVersion": f"{group}/v1", "version": "v1"}
    resources = admin.get(f"{server.url}/apis/{group}/v1").json()["resources"]
    main = next(r for r in resources if r["name"] == "crontabs")
    assert main["shortNames"] == ["dt"] and main["kind"] == "CronTab"
    # kube's CRD discovery lists the verbs in its own order, not sorted
    assert main["verbs"] == [
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "create",
        "update",
        "watch",
    ]
    assert main["storageVersionHash"]
    aggregated = admin.get(
        server.url + "/apis",
        headers={
            "Accept": "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
        },
    ).json()
    assert any(item["metadata"]["name"] == group for item in aggregated["items"])
    listed = admin.get(server.url + "/").json()["paths"]
    assert f"/apis/{group}" in listed and f"/apis/{group}/v1" in listed
    index = admin.get(server.url + "/openapi/v3").json()["paths"]
    doc = admin.get(server.url + index[f"apis/{group}/v1"]["serverRelativeURL"]).json()
    schema = doc["components"]["schemas"]["com.example.disco.v1.CronTab"]
    assert set(schema["properties"]) == {"apiVersion", "kind", "metadata", "spec", "status"}
    # the paths as kube's CRD handler publishes them, operation IDs included
    base = f"/apis/{group}/v1"
    listing = doc["paths"][f"{base}/namespaces/{{namespace}}/crontabs"]["get"]
    assert listing["operationId"] == "listDiscoExampleComV1NamespacedCronTab"
    listed = listing["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert listed == "#/components/schemas/com.example.disco.v1.CronTabList"
    assert listed.rsplit("/", 1)[1] in doc["components"]["schemas"]
    patch = doc["paths"][f"{base}/namespaces/{{namespace}}/crontabs/{{name}}"]["patch"]
    assert sorted(patch["requestBody"]["content"]) == [
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
    ]
    # kube's CRD builder makes no watch paths and no group version path
    assert f"{base}/watch/crontabs" not in doc["paths"] and f"{base}/" not in doc["paths"]
    assert list(listing["responses"]["200"]["content"]) == ["application/json", "application/yaml"]
    # /openapi/v2 lists the same operations in Swagger 2.0's words
    v2 = admin.get(server.url + "/openapi/v2").json()
    create = v2["paths"][f"{base}/namespaces/{{namespace}}/crontabs"]["post"]
    assert create["operationId"] == "createDiscoExampleComV1NamespacedCronTab"
    assert create["parameters"][0] == {
        "in": "body",
        "name": "body",
        "required": True,
        "schema": {"$ref": "#/definitions/com.example.disco.v1.CronTab"},
    }
    assert create["x-kubernetes-group-version-kind"] == {
        "group": group,
        "kind": "CronTab",
        "version": "v1",
    }
    v2_patch = v2["paths"][f"{base}/namespaces/{{namespace}}/crontabs/{{name}}"]["patch"]
    assert "application/strategic-merge-patch+json" not in v2_patch["consumes"]
    assert v2_patch["produces"] == ["application/json", "application/yaml"]
    delete_crd(admin, server, crd["metadata"]["name"])
    assert admin.get(f"{server.url}/apis/{group}/v1").status_code == 404
    assert f"/apis/{group}" not in admin.get(server.url + "/").json()["paths"]
    assert f"apis/{group}/v1" not in admin.get(server.url + "/openapi/v3").json()["paths"]

    def v2_lists_it() -> bool:
        paths = admin.get(server.url + "/openapi/v2").json()["paths"]
        return f"{base}/namespaces/{{namespace}}/crontabs" in paths

    assert eventually(lambda: not v2_lists_it())


def test_a_kind_taken_in_the_group_is_not_accepted(server: Server, admin: requests.Session) -> None:
    group = "clash.example.com"
    first = create_crd(admin, server, crd_manifest(group))
    second = crd_manifest(group, kind="CronTab", plural="others")
    r = admin.post(server.url + CRDS, json=second)
    assert r.status_code == 201, r.text

    def refused() -> dict | None:
        crd = admin.get(f"{server.url}{CRDS}/others.{group}").json()
        cond = condition(crd, "NamesAccepted")
        return cond if cond and cond["status"] == "False" else None

    cond = eventually(refused)
    # kind and listKind both clash; as in kube, the last check's reason stands.
    assert (cond["reason"], cond["message"]) == (
        "ListKindConflict",
        '"CronTabList" is already in use',
    )
    crd = admin.get(f"{server.url}{CRDS}/others.{group}").json()
    established = condition(crd, "Established")
    assert established is not None and established["status"] == "False"
    assert established["reason"] == "NotAccepted"
    assert admin.get(f"{server.url}/apis/{group}/v1/namespaces/default/others").status_code == 404
    delete_crd(admin, server, f"others.{group}")
    delete_crd(admin, server, first["metadata"]["name"])


def test_deleting_a_crd_deletes_its_instances_first(
    server: Server, admin: requests.Session
) -> None:
    group = "gone.example.com"
    crd = create_crd(admin, server, crd_manifest(group))
    path = server.url + ns_path(group, namespace(admin, server, "gone"))
    held = crontab("held", group)
    held["metadata"]["finalizers"] = ["example.com/hold"]
    assert admin.post(path, json=held).status_code == 201
    assert admin.post(path, json=crontab("free", group)).status_code == 201
    r = admin.delete(f"{server.url}{CRDS}/{crd['metadata']['name']}")
    assert r.status_code == 200
    body = r.json()
    assert body["metadata"]["deletionTimestamp"]
    assert body["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.platform.io"]
    pending = condition(body, "Terminating")
    assert pending is not None and pending["reason"] == "InstanceDeletionPending"

    def in_progress() -> dict | None:
        current = admin.get(f"{server.url}{CRDS}/{crd['metadata']['name']}").json()
        cond = condition(current, "Terminating")
        return current if cond and cond["reason"] == "InstanceDeletionInProgress" else None

    eventually(in_progress)
    eventually(lambda: admin.get(f"{path}/free").status_code == 404)
    # Discovery lists what a terminating definition's resource still takes.
    listed = admin.get(f"{server.url}/apis/{group}/v1").json()["resources"]
    assert next(r for r in listed if r["name"] == "crontabs")["verbs"] == [
        "delete",
        "deletecollection",
        "get",
        "list",
        "watch",
    ]
    # The held instance keeps the CRD (and its routes) until its finalizer goes.
    assert admin.get(f"{path}/held").status_code == 200
    refused = admin.post(path, json=crontab("late", group))
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        f'crontabs.{group} "late" is forbidden: '
        "create not allowed while custom resource definition is terminating"
    )
    r = admin.patch(f"{path}/held", json={"metadata": {"finalizers": None}}, headers=MERGE)
    assert r.status_code == 200, r.text
    eventually(
        lambda: admin.get(f"{server.url}{CRDS}/{crd['metadata']['name']}").status_code == 404
    )
    # The routes go when the deletion's watch event reaches the installer, a moment after
    # the CRD is gone from storage (kube's handler also drops them asynchronously).
    eventually(lambda: admin.get(path).status_code == 404)


def test_watches_end_when_the_crd_goes(server: Server, admin: requests.Session) -> None:
    group = "watchend.example.com"
    crd = create_crd(admin, server, crd_manifest(group))
    url = f"{server.url}/apis/{group}/v1/crontabs?watch=1"
    lines: list[dict] = []
    done = threading.Event()

    def watch() -> None:
        with admin.get(url, stream=True, timeout=20) as r:
            for line in r.iter_lines():
                if line:
                    lines.append(json.loads(line))
        done.set()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    path = server.url + ns_path(group, namespace(admin, server, "watchend"))
    assert admin.post(path, json=crontab("seen", group)).status_code == 201
    eventually(lambda: any(e["type"] == "ADDED" for e in lines))
    delete_crd(admin, server, crd["metadata"]["name"])
    assert done.wait(10), "the watch did not end"


def test_openapi_documents_show_the_kind_as_kube_publishes_it(
    server: Server, admin: requests.Session
) -> None:
    """/openapi/v3 describes a root that keeps unknown fields (TypeMeta and ObjectMeta
    beside the flag) and an embedded resource's TypeMeta; /openapi/v2 shows such a root
    as a bare object, as kube's CRD OpenAPI builder does (kubectl's v2 validation then
    lets anything through). Selectable fields are named in both."""
    group = "published.example.com"
    embedded = {"type": "object", "x-kubernetes-embedded-resource": True}
    embedded["properties"] = {"spec": {"type": "object"}}
    spec = {"type": "object", "properties": {"template": embedded, "color": {"type": "string"}}}
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"spec": spec},
    }
    v1 = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    v1["selectableFields"] = [{"jsonPath": ".spec.color"}]
    manifest = crd_manifest(group, versions=[v1])
    crd = create_crd(admin, server, manifest)
    name = "com.example.published.v1.CronTab"
    index = admin.get(server.url + "/openapi/v3").json()["paths"]
    doc = admin.get(server.url + index[f"apis/{group}/v1"]["serverRelativeURL"]).json()
    v3 = doc["components"]["schemas"][name]
    assert set(v3["properties"]) == {"apiVersion", "kind", "metadata", "spec"}
    assert v3["x-kubernetes-preserve-unknown-fields"] is True
    assert v3["x-kubernetes-selectable-fields"] == [{"fieldPath": "spec.color"}]
    template = v3["properties"]["spec"]["properties"]["template"]
    assert set(template["properties"]) == {"apiVersion", "kind", "metadata", "spec"}
    assert template["required"] == ["kind", "apiVersion"]
    v2 = eventually(lambda: admin.get(server.url + "/openapi/v2").json()["definitions"].get(name))
    assert v2 == {
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": group, "version": "v1", "kind": "CronTab"}],
        "x-kubernetes-selectable-fields": [{"fieldPath": "spec.color"}],
    }
    # other tests' CRDs on this server name CronTab too: the group says which
    explained = server.kubectl(
        "explain", "crontabs.spec.template", f"--api-version={group}/v1"
    ).stdout
    assert "apiVersion\t<string>" in explained and "metadata\t<ObjectMeta>" in explained
    delete_crd(admin, server, crd["metadata"]["name"])


def test_a_kind_another_worker_defined_a_moment_ago_is_served(tmp_path: Path) -> None:
    """Another worker (or replica) may commit a definition this server has not taken in
    yet when a request for its kind arrives (kube holds creates in the 2 s after a
    definition is established for this).  Here that worker is this test, committing to
    the server's database itself; a server alone never polls its log, so before the
    request took in the storage's state first the kind stayed unknown for good."""
    running = start_server(tmp_path / "data", "--storage-backend=lmdb")
    try:
        admin = session_for(running, cert=running.admin_cert)
        made = create_crd(admin, running, crd_manifest("seen.example.com"))
        crd = copy.deepcopy(made)
        group = "unseen.example.com"
        crd["metadata"] = {"name": f"crontabs.{group}", "uid": str(uuid.uuid4())}
        crd["spec"]["group"] = group
        set_revision(crd, "")
        env = open_environment(str(tmp_path / "data" / "db"), 8 << 30)
        writer = ManualWriter()
        storage = LMDBStorage(env, writer)
        done = storage.create(CRD_KEY + crd["metadata"]["name"].encode(), crd)
        writer.run_all()
        assert done.called
        env.close()
        r = admin.get(running.url + ns_path(group, "default"))
        assert r.status_code == 200, r.text
        assert r.json()["kind"] == "CronTabList"
        r = admin.post(running.url + ns_path(group, "default"), json=crontab("c", group))
        assert r.status_code == 201, r.text
        missing = admin.get(running.url + ns_path("never.example.com", "default"))
        assert missing.status_code == 404
    finally:
        running.stop()
