"""Reviews answered as kube-apiserver v1.36 answered the same requests: access reviews
validated as pkg/apis/authorization/validation does (no kind in the Invalid, Go's
values), their writer's managedFields entry, selectors it could not read named in
``evaluationError``, token reviews and token requests as kube's REST builds them, and
no zero ``creationTimestamp`` anywhere (metav1's omitzero)."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.answers import status
from tests.e2e.conftest import Server

AUTHZ = "/apis/authorization.platform.io/v1"
INVALID = '.authorization.platform.io "" is invalid: '


def ssar(admin: requests.Session, server: Server, body: dict[str, Any]) -> requests.Response:
    return admin.post(server.url + AUTHZ + "/selfsubjectaccessreviews", json=body)


def test_an_access_review_is_refused_in_kubes_words(
    server: Server, admin: requests.Session
) -> None:
    both = {
        "spec": {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x"}}
    }
    refused = ssar(admin, server, both)
    message = (
        'spec.nonResourceAttributes: Invalid value: {"Path":"/x","Verb":""}: cannot be '
        "specified in combination with resourceAttributes"
    )
    assert refused.json() == status(
        422,
        "Invalid",
        INVALID + message,
        {
            "group": "authorization.platform.io",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": message.split(": ", 1)[1],
                    "field": "spec.nonResourceAttributes",
                }
            ],
        },
    )
    neither = admin.post(server.url + AUTHZ + "/subjectaccessreviews", json={"spec": {}})
    assert neither.json()["message"] == INVALID + (
        "[spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or "
        'resourceAttributes must be specified, spec.user: Invalid value: "": at least one of '
        "user or group must be specified]"
    )
    empty_selector = {"verb": "list", "resource": "pods", "labelSelector": {}}
    refused = ssar(admin, server, {"spec": {"resourceAttributes": empty_selector}})
    assert refused.json()["message"] == INVALID + (
        "spec.resourceAttributes.labelSelector.requirements: Required value: when "
        "spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required"
    )
    named = ssar(admin, server, {"metadata": {"name": "x"}, "spec": {"nonResourceAttributes": {}}})
    assert named.status_code == 422 and named.json()["message"].endswith(": must be empty")
    local = server.url + AUTHZ + "/namespaces/default/localsubjectaccessreviews"
    spec = {"user": "u", "nonResourceAttributes": {"path": "/x"}}
    refused = admin.post(local, json={"spec": spec})
    assert refused.json()["message"] == INVALID + (
        'spec.nonResourceAttributes: Invalid value: {"Path":"/x","Verb":""}: disallowed on this '
        "kind of request"
    )


def test_an_access_review_answer_carries_its_writer_and_selector_problems(
    server: Server, admin: requests.Session
) -> None:
    attributes = {
        "verb": "list",
        "resource": "pods",
        "fieldSelector": {
            "requirements": [
                {"key": "a", "operator": "In", "values": ["x"]},
                {"key": "b", "operator": "Exists"},
            ]
        },
        "labelSelector": {"rawSelector": "a in ("},
    }
    answered = ssar(admin, server, {"spec": {"resourceAttributes": attributes}})
    assert answered.status_code == 201
    body = answered.json()
    assert body["status"] == {
        "allowed": True,
        "evaluationError": "spec.resourceAttributes.fieldSelector partially ignored due to parse "
        "error; spec.resourceAttributes.labelSelector ignored due to parse error",
    }
    [entry] = body["metadata"]["managedFields"]
    assert (entry["operation"], entry["apiVersion"]) == ("Update", "authorization.platform.io/v1")
    assert "creationTimestamp" not in body["metadata"]


def test_token_review_and_request_as_kubes_rest_builds_them(
    server: Server, admin: requests.Session
) -> None:
    review = {"spec": {"token": "garbage"}}
    answered = admin.post(
        server.url + "/apis/authentication.platform.io/v1/tokenreviews", json=review
    )
    assert answered.json()["status"] == {"user": {}, "error": "invalid bearer token"}
    assert [e["manager"] for e in answered.json()["metadata"]["managedFields"]] == [
        "python-requests"
    ]
    rules = admin.post(
        server.url + AUTHZ + "/selfsubjectrulesreviews", json={"spec": {"namespace": "default"}}
    )
    assert (rules.json()["metadata"], rules.json()["spec"]) == ({}, {})
    account = admin.get(server.url + "/api/v1/namespaces/default/serviceaccounts/default").json()
    token = server.url + "/api/v1/namespaces/default/serviceaccounts/default/token"
    other = admin.post(token, json={"metadata": {"uid": "x"}, "spec": {}})
    uid = account["metadata"]["uid"]
    assert other.json() == status(
        409,
        "Conflict",
        'Operation cannot be fulfilled on TokenRequest.authentication.platform.io "default": the '
        f"UID in the token request (x) does not match the UID of the service account ({uid})",
        {"name": "default", "group": "authentication.platform.io", "kind": "TokenRequest"},
    )
    issued = admin.post(token, json={"spec": {}}).json()
    assert issued["metadata"]["uid"] == uid and issued["metadata"]["creationTimestamp"]
    assert issued["spec"]["boundObjectRef"] is None


def test_aggregated_discovery_names_groups_without_a_timestamp(
    server: Server, admin: requests.Session
) -> None:
    accept = "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
    groups = admin.get(server.url + "/apis", headers={"Accept": accept}).json()["items"]
    assert all(list(group["metadata"]) == ["name"] for group in groups)
