"""What kube-apiserver v1.36 lets through that a strict reader would refuse: query
booleans read as anything but "0"/"false", JSON indented for people (curl, browsers,
``?pretty``), a created object's resourceVersion, and how it words a DeleteOptions body
that is not JSON.  Each answer is the one the reference gave to the same request."""

from __future__ import annotations

import json

import requests

from tests.e2e.answers import status
from tests.e2e.conftest import Server

CM = "/api/v1/namespaces/default/configmaps"


def configmap(name: str, **meta: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}


def test_a_query_boolean_is_true_unless_it_says_false(
    server: Server, admin: requests.Session
) -> None:
    assert admin.post(server.url + CM, json=configmap("lenient-orphaned")).status_code == 201
    deleted = admin.delete(
        server.url + CM + "/lenient-orphaned", params={"orphanDependents": "maybe"}
    )
    assert deleted.status_code == 200  # kept for the orphan finalizer
    assert deleted.json()["metadata"]["finalizers"] == ["orphan"]
    listed = admin.get(server.url + CM, params={"sendInitialEvents": "x"})
    assert listed.json() == status(
        422,
        "Invalid",
        'ListOptions.meta.platform.io "" is invalid: sendInitialEvents: Forbidden: '
        "sendInitialEvents is forbidden for list",
        {
            "group": "meta.platform.io",
            "kind": "ListOptions",
            "causes": [
                {
                    "reason": "FieldValueForbidden",
                    "message": "Forbidden: sendInitialEvents is forbidden for list",
                    "field": "sendInitialEvents",
                }
            ],
        },
    )
    bookmarks = {"watch": "1", "allowWatchBookmarks": "x", "timeoutSeconds": "1"}
    with admin.get(server.url + CM, params=bookmarks, stream=True) as watched:
        assert watched.status_code == 200
    for off in ("0", "FALSE", "false"):
        assert admin.get(server.url + CM, params={"watch": off}).json()["kind"] == "ConfigMapList"


def test_json_is_indented_for_people(server: Server, admin: requests.Session) -> None:
    """kube's isPrettyPrint: a non-empty ``pretty`` as Go's ParseBool reads it (false
    when it cannot), else curl, wget and browsers get indented JSON, errors included."""
    url = server.url + "/api/v1/namespaces/default"
    cases = [
        ({"User-Agent": "curl/8.5.0"}, "", True),
        ({"User-Agent": "Wget/1.21"}, "", True),
        ({"User-Agent": "Mozilla/5.0 (X11)"}, "?pretty=", True),
        ({"User-Agent": "curl/8.5.0"}, "?pretty=0", False),
        ({}, "?pretty=t", True),
        ({}, "?pretty=tRuE", False),  # not Go's spelling of true
        ({}, "", False),
    ]
    for headers, query, indented in cases:
        got = admin.get(url + query, headers=headers)
        assert got.status_code == 200
        assert got.content.startswith(b'{\n  "') is indented, (headers, query)
    missing = admin.get(url + "x", headers={"User-Agent": "curl/8.5.0"})
    assert missing.status_code == 404 and missing.content.startswith(b'{\n  "kind": "Status"')
    groups = admin.get(server.url + "/apis", headers={"User-Agent": "curl/8.5.0"})
    assert groups.content.startswith(b'{\n  "kind": "APIGroupList"')


def test_a_created_object_may_carry_a_resource_version_kube_cannot_read(
    server: Server, admin: requests.Session
) -> None:
    """kube's storage refuses a create carrying a resourceVersion it reads as a revision,
    with a plain 500 and no reason, after validation; anything else it replaces."""
    refused = admin.post(server.url + CM, json=configmap("lenient-numbered", resourceVersion="5"))
    assert refused.status_code == 500
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "resourceVersion should not be set on objects to be created",
        "code": 500,
    }
    assert admin.get(server.url + CM + "/lenient-numbered").status_code == 404
    invalid = admin.post(server.url + CM, json=configmap("BAD", resourceVersion="5"))
    assert invalid.status_code == 422  # validation first
    dry = admin.post(
        server.url + CM + "?dryRun=All", json=configmap("lenient-dry", resourceVersion="5")
    )
    assert (dry.status_code, dry.json()["metadata"]["resourceVersion"]) == (201, "5")
    for name, version in (
        ("lenient-wordy", "abc"),
        ("lenient-zero", "0"),
        ("lenient-huge", "99999999999999999999"),
    ):
        created = admin.post(server.url + CM, json=configmap(name, resourceVersion=version))
        assert created.status_code == 201, version
        assert created.json()["metadata"]["resourceVersion"].isdigit()
        assert created.json()["metadata"]["resourceVersion"] not in (version, "0")


def test_a_delete_body_that_is_no_json_is_named_as_kube_names_it(
    server: Server, admin: requests.Session
) -> None:
    assert admin.post(server.url + CM, json=configmap("lenient-kept")).status_code == 201
    lead = "couldn't get version/kind; json parse error: "
    cases = [
        (
            b"not json",
            "application/json",
            lead + "invalid character 'o' in literal null (expecting 'u')",
        ),
        (b"{} x", "application/json", lead + "invalid character 'x' after top-level value"),
        (
            json.dumps({"kind": 5}).encode(),
            "application/json",
            lead + "json: cannot unmarshal number into Go struct field .kind of type string",
        ),
        (b"a: b: c", "application/yaml", "yaml: mapping values are not allowed in this context"),
    ]
    for body, media, message in cases:
        refused = admin.delete(
            server.url + CM + "/lenient-kept", data=body, headers={"Content-Type": media}
        )
        assert refused.json() == status(400, "BadRequest", message), body
    assert admin.get(server.url + CM + "/lenient-kept").status_code == 200


def test_metadata_of_the_other_shape_is_refused_once_read(
    server: Server, admin: requests.Session
) -> None:
    """kube takes the first entry it can render, then refuses metadata of the other shape
    with a 406 naming the Go type it holds; a missing object is 404 first."""
    one = "application/json;as=PartialObjectMetadata;g=meta.platform.io;v=v1"
    many = "application/json;as=PartialObjectMetadataList;g=meta.platform.io;v=v1"
    listed = admin.get(server.url + CM, headers={"Accept": one + ",application/json"})
    message = "you requested PartialObjectMetadata, but the requested object is a list "
    assert listed.json() == status(406, "NotAcceptable", message + "(*core.ConfigMapList)")
    missing = admin.get(server.url + CM + "/lenient-missing", headers={"Accept": many})
    assert missing.status_code == 404
    deployments = server.url + "/apis/apps/v1/namespaces/default/deployments"
    refused = admin.get(deployments, headers={"Accept": one})
    assert refused.json()["message"] == message + "(*apps.DeploymentList)"


def test_an_error_no_accepted_type_can_carry_is_indented_json(
    server: Server, admin: requests.Session
) -> None:
    """kube's WriteRawJSON: when no Accept entry can carry a Status, it is indented JSON."""
    for accept in (
        "application/xml",
        "text/plain",
        "application/vnd.platform.protobuf;as=Table;g=meta.platform.io;v=v1",
    ):
        refused = admin.get(server.url + CM + "/lenient-missing", headers={"Accept": accept})
        assert refused.headers["Content-Type"] == "application/json"
        assert refused.content.startswith(b'{\n  "kind": "Status"') and refused.content.endswith(
            b"}"
        )
