"""The order in which a delete is refused, as kube-apiserver v1.36 answered the same
deletes (reference): a kind's REST storage first (a system PriorityClass, before it is
read), then the object's existence and preconditions (a Namespace's and a CRD's in
their storages' own words), then admission (an immortal namespace)."""

from __future__ import annotations

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import crd_manifest, create_crd, version

SYSTEM = "/apis/scheduling.platform.io/v1/priorityclasses/system-node-critical"


def _answer(r: requests.Response) -> tuple[int, str, str]:
    body = r.json()
    return r.status_code, body.get("reason", ""), body["message"]


def test_a_system_priority_class_is_refused_before_its_preconditions(
    server: Server, admin: requests.Session
) -> None:
    wrong = {"preconditions": {"uid": "wrong"}}
    answer = admin.delete(server.url + SYSTEM + "?dryRun=All", json=wrong)
    assert _answer(answer) == (
        403,
        "Forbidden",
        'priorityclasses.scheduling.platform.io "system-node-critical" is forbidden: this is '
        "a system priority class and cannot be deleted",
    )


def test_an_immortal_namespace_checks_its_preconditions_first(
    server: Server, admin: requests.Session
) -> None:
    path = server.url + "/api/v1/namespaces/default?dryRun=All"
    uid = admin.get(server.url + "/api/v1/namespaces/default").json()["metadata"]["uid"]
    answer = admin.delete(path, json={"preconditions": {"uid": "wrong"}})
    assert _answer(answer) == (
        409,
        "Conflict",
        'Operation cannot be fulfilled on namespaces "default": Precondition failed: UID '
        f"in precondition: wrong, UID in object meta: {uid}",
    )
    assert _answer(admin.delete(path)) == (
        403,
        "Forbidden",
        'namespaces "default" is forbidden: this namespace may not be deleted',
    )


def test_a_crds_preconditions_are_checked_in_its_storages_words(
    server: Server, admin: requests.Session
) -> None:
    manifest = crd_manifest("order.example.com", versions=[version("v1")])
    create_crd(admin, server, manifest)
    name = manifest["metadata"]["name"]
    path = f"{server.url}/apis/apiextensions.platform.io/v1/customresourcedefinitions/{name}"
    current = admin.get(path).json()["metadata"]["resourceVersion"]
    answer = admin.delete(path + "?dryRun=All", json={"preconditions": {"resourceVersion": "1"}})
    assert _answer(answer) == (
        409,
        "Conflict",
        f'Operation cannot be fulfilled on customresourcedefinitions.apiextensions.platform.io "{name}": '
        f"Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object "
        f"meta: {current}",
    )
