"""How a custom resource's requests are routed: kube serves them with one handler that
goes by the request's verb (customresource_handler.go), so the answers to unusual paths
and methods differ from a built-in kind's go-restful routes.  Each answer here was
recorded from kube-apiserver v1.36 with the same requests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server, session_for
from tests.e2e.crds import crd_manifest, create_crd, crontab, delete_crd, namespace, ns_path
from tests.e2e.crds import version as crd_version

GROUP = "routes.example.com"
SUBRESOURCES = {
    "status": {},
    "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
}


@pytest.fixture(scope="module")
def base(server: Server) -> Iterator[str]:
    admin = session_for(server, cert=server.admin_cert)
    manifest = crd_manifest(GROUP, versions=[crd_version("v1", subresources=SUBRESOURCES)])
    create_crd(admin, server, manifest)
    plain = crd_manifest(GROUP, kind="Plain", plural="plains")
    create_crd(admin, server, plain)
    path = server.url + ns_path(GROUP, namespace(admin, server, "routes"))
    assert admin.post(path, json=crontab("c1", GROUP)).status_code == 201
    yield path
    delete_crd(admin, server, f"crontabs.{GROUP}")
    delete_crd(admin, server, f"plains.{GROUP}")


def status(code: int, reason: str, message: str, **details: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}}
    body |= {"status": "Failure", "message": message, "reason": reason}
    if details:
        body["details"] = details
    return body | {"code": code}


def not_supported(verb: str) -> dict[str, Any]:
    message = f'{verb} is not supported on resources of kind "crontabs.{GROUP}"'
    return status(405, "MethodNotAllowed", message, group=GROUP, kind="crontabs")


@pytest.mark.parametrize(
    ("method", "suffix", "verb"),
    [
        ("POST", "/c1/status", "create"),
        ("DELETE", "/c1/status", "delete"),
        ("POST", "/c1/scale", "create"),
        ("DELETE", "/c1/scale", "delete"),
        ("POST", "/c1/status/extra", "create"),
        ("OPTIONS", "/c1", ""),
        ("OPTIONS", "", ""),
    ],
)
def test_a_verb_the_resource_does_not_take_is_405_naming_it(
    admin: requests.Session, base: str, method: str, suffix: str, verb: str
) -> None:
    r = admin.request(method, base + suffix, json={})
    assert r.status_code == 405
    assert r.json() == not_supported(verb)


def test_a_watch_of_a_subresource_is_405(admin: requests.Session, base: str) -> None:
    watch_path = base.replace(f"/{GROUP}/v1/", f"/{GROUP}/v1/watch/") + "/c1/status"
    r = admin.get(watch_path, params={"timeoutSeconds": "1"})
    assert r.status_code == 405
    assert r.json() == not_supported("watch")


@pytest.mark.parametrize("suffix", ["/c1/foo", "/c1/foo/more", "/nope/foo"])
def test_a_subresource_the_kind_lacks_is_its_object_not_found(
    admin: requests.Session, base: str, suffix: str
) -> None:
    name = suffix.split("/")[1]
    for method in ("GET", "PUT", "DELETE"):
        r = admin.request(method, base + suffix, json={})
        assert r.status_code == 404
        message = f'crontabs.{GROUP} "{name}" not found'
        assert r.json() == status(404, "NotFound", message, name=name, group=GROUP, kind="crontabs")
    plain = base.replace("/crontabs", "/plains") + "/p1/status"
    r = admin.get(plain)
    assert r.status_code == 404 and r.json()["message"] == f'plains.{GROUP} "p1" not found'


def test_a_path_past_a_subresource_is_that_subresource(admin: requests.Session, base: str) -> None:
    r = admin.get(base + "/c1/status/x")
    assert r.status_code == 200 and r.json()["metadata"]["name"] == "c1"
    r = admin.get(base + "/c1/scale/x")
    assert r.status_code == 200 and r.json()["kind"] == "Scale"


def test_a_post_naming_an_object_creates_the_bodys(admin: requests.Session, base: str) -> None:
    r = admin.post(base + "/url-name", json=crontab("body-name", GROUP))
    assert r.status_code == 201 and r.json()["metadata"]["name"] == "body-name"
    assert admin.get(base + "/body-name").status_code == 200
    assert admin.get(base + "/url-name").status_code == 404


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_a_write_to_the_collection_needs_a_name(
    admin: requests.Session, base: str, method: str
) -> None:
    headers = {"Content-Type": "application/merge-patch+json"}
    r = admin.request(method, base, data=b"{}", headers=headers)
    assert r.status_code == 400
    assert r.json() == status(400, "BadRequest", "name must be provided")


def test_head_is_a_get(admin: requests.Session, base: str) -> None:
    r = admin.head(base + "/c1")
    assert r.status_code == 200 and r.content == b""
    assert admin.head(base + "/none").status_code == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/crontabs"), ("DELETE", "/crontabs"), ("GET", "/crontabs/c1")],
)
def test_a_request_of_the_wrong_scope_is_the_plain_404(
    server: Server, admin: requests.Session, base: str, method: str, path: str
) -> None:
    r = admin.request(method, f"{server.url}/apis/{GROUP}/v1{path}", json={})
    assert r.status_code == 404
    assert r.text == "404 page not found\n"


def test_discovery_lists_status_then_scale(
    server: Server, admin: requests.Session, base: str
) -> None:
    resources = admin.get(f"{server.url}/apis/{GROUP}/v1").json()["resources"]
    names = [r["name"] for r in resources]
    assert names.index("crontabs") + 1 == names.index("crontabs/status")
    assert names.index("crontabs/status") + 1 == names.index("crontabs/scale")
    aggregated = admin.get(
        server.url + "/apis",
        headers={
            "Accept": "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
        },
    ).json()
    group = next(item for item in aggregated["items"] if item["metadata"]["name"] == GROUP)
    crontabs = next(r for r in group["versions"][0]["resources"] if r["resource"] == "crontabs")
    assert [s["subresource"] for s in crontabs["subresources"]] == ["status", "scale"]


def test_metadata_views_of_a_custom_resource_are_typed(admin: requests.Session, base: str) -> None:
    """PartialObjectMetadata and a Table row's object hold a typed ObjectMeta: its
    fields in the struct's order, not the custom resource's sorted keys."""
    typed = ["name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp"]
    typed.append("managedFields")
    partial = "application/json;as=PartialObjectMetadata;v=v1;g=meta.platform.io"
    one = admin.get(base + "/c1", headers={"Accept": partial}).json()
    assert list(one["metadata"]) == typed
    assert list(one["metadata"]["managedFields"][0]) == [
        "manager",
        "operation",
        "apiVersion",
        "time",
        "fieldsType",
        "fieldsV1",
    ]
    table = "application/json;as=Table;v=v1;g=meta.platform.io"
    rows = admin.get(base, headers={"Accept": table}).json()["rows"]
    row = next(r for r in rows if r["object"]["metadata"]["name"] == "c1")
    assert list(row["object"]["metadata"]) == typed
    whole = admin.get(base + "/c1").json()
    assert list(whole["metadata"]) == sorted(whole["metadata"])  # the object itself: a map


@pytest.mark.parametrize(
    "path",
    [
        # what kube's apiextensions handler does not serve of a CRD's group goes to the
        # server's last handler: a plain 404, where a built-in group answers a Status
        "/v9/namespaces/routes/crontabs",
        "/v9",
        "/v1/namespaces/routes/bogus",
        "/v1/bogus",
    ],
)
def test_what_a_crd_group_does_not_serve_is_the_plain_404(
    server: Server, admin: requests.Session, base: str, path: str
) -> None:
    r = admin.get(f"{server.url}/apis/{GROUP}{path}")
    assert (r.status_code, r.text) == (404, "404 page not found\n")
    builtin = admin.get(f"{server.url}/apis/apps/v9")
    assert (builtin.status_code, builtin.json()["reason"]) == (404, "NotFound")


def test_a_deprecated_versions_warning_comes_with_its_watches(
    server: Server, admin: requests.Session
) -> None:
    group = "deprecated.routes.example.com"
    old = crd_version("v1beta1", storage=False, deprecated=True, deprecationWarning="use v1")
    manifest = crd_manifest(group, versions=[crd_version("v1"), old])
    create_crd(admin, server, manifest)
    try:
        url = server.url + ns_path(group, "default").replace("/v1/", "/v1beta1/")
        for params in ({}, {"watch": "1", "timeoutSeconds": "1"}):
            r = admin.get(url, params=params)
            assert (r.status_code, r.headers.get("Warning")) == (200, '299 - "use v1"'), params
    finally:
        delete_crd(admin, server, f"crontabs.{group}")
