"""Access reviews answered by the server's authorizer chain."""

from __future__ import annotations

from pathlib import Path

import requests

from tests.e2e.conftest import Server, session_for, start_server

BASE = "/apis/authorization.platform.io/v1"
RESOURCE = {"verb": "list", "resource": "configmaps", "namespace": "ns1"}


def review(kind: str, spec: dict) -> dict:
    return {"apiVersion": "authorization.platform.io/v1", "kind": kind, "spec": spec}


def test_reviews_under_always_deny(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", "--authorization-mode", "AlwaysDeny")
    try:
        admin = session_for(server, cert=server.admin_cert)
        r = admin.post(
            server.url + BASE + "/subjectaccessreviews",
            json=review("SubjectAccessReview", {"user": "carol", "resourceAttributes": RESOURCE}),
        )
        assert r.status_code == 201, r.text
        # kube's AlwaysDeny has no opinion (so the review is not "denied"), with its reason.
        assert r.json()["status"] == {"allowed": False, "reason": "Everything is forbidden."}
        r = admin.post(
            server.url + BASE + "/subjectaccessreviews",
            json=review(
                "SubjectAccessReview",
                {
                    "groups": ["system:masters"],
                    "nonResourceAttributes": {"path": "/x", "verb": "get"},
                },
            ),
        )
        assert r.json()["status"] == {"allowed": True}
        r = admin.post(
            server.url + BASE + "/selfsubjectaccessreviews",
            json=review("SelfSubjectAccessReview", {"resourceAttributes": RESOURCE}),
        )
        assert r.json()["status"]["allowed"] is True  # the admin is in system:masters
    finally:
        server.stop()


def test_review_rules(server: Server, admin: requests.Session) -> None:
    r = admin.post(
        server.url + BASE + "/subjectaccessreviews",
        json=review("SubjectAccessReview", {"resourceAttributes": RESOURCE}),
    )
    assert (r.status_code, r.json()["message"]) == (
        422,
        '.authorization.platform.io "" is invalid: spec.user: Invalid value: "": '
        "at least one of user or group must be specified",
    )
    r = admin.post(
        server.url + BASE + "/selfsubjectaccessreviews",
        json=review("SelfSubjectAccessReview", {}),
    )
    assert r.status_code == 422
    assert (
        "exactly one of nonResourceAttributes or resourceAttributes must be specified"
        in (r.json()["message"])
    )
    local = server.url + BASE + "/namespaces/ns2/localsubjectaccessreviews"
    r = admin.post(
        local,
        json=review("LocalSubjectAccessReview", {"user": "u", "resourceAttributes": RESOURCE}),
    )
    must_match = '.authorization.platform.io "" is invalid: spec.resourceAttributes.namespace: '
    assert (r.status_code, r.json()["message"]) == (
        422,
        must_match + 'Invalid value: "ns1": must match metadata.namespace',
    )
    spec = {"user": "u", "resourceAttributes": {"verb": "get", "resource": "pods"}}
    r = admin.post(local, json=review("LocalSubjectAccessReview", spec))  # kube fills none in
    assert (r.status_code, r.json()["message"]) == (
        422,
        must_match + 'Invalid value: "": must match metadata.namespace',
    )
    spec["resourceAttributes"]["namespace"] = "ns2"
    r = admin.post(local, json=review("LocalSubjectAccessReview", spec))
    assert r.status_code == 201
    body = r.json()
    assert body["spec"]["resourceAttributes"]["namespace"] == "ns2"
    assert body["status"]["allowed"] is True
    # Written in the Go structs' order, whatever the request's (recorded from kube).
    assert list(body) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(body["spec"]) == ["resourceAttributes", "user"]
    assert list(body["spec"]["resourceAttributes"]) == ["namespace", "verb", "resource"]


def test_abac_mode(tmp_path: Path) -> None:
    policy = tmp_path / "policy.jsonl"
    policy.write_text(
        '{"apiVersion": "abac.authorization.platform.io/v1beta1", "kind": "Policy", '
        '"spec": {"user": "carol", "readonly": true, "namespace": "*", "resource": "*", '
        '"apiGroup": "*"}}\n'
    )
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("t-carol,carol,uid-c\n")
    server = start_server(
        tmp_path / "data",
        "--authorization-mode",
        "ABAC",
        "--authorization-policy-file",
        str(policy),
        "--token-auth-file",
        str(tokens),
    )
    try:
        carol = session_for(server, token="t-carol")
        assert carol.get(server.url + "/api/v1/namespaces/default/configmaps").status_code == 200
        r = carol.post(
            server.url + "/api/v1/namespaces/default/configmaps",
            json={"metadata": {"name": "x"}},
        )
        assert (r.status_code, r.json()["message"]) == (
            403,
            'configmaps is forbidden: User "carol" cannot create resource "configmaps" in API '
            'group "" in the namespace "default": No policy matched.',
        )
    finally:
        server.stop()
    try:
        start_server(tmp_path / "data2", "--authorization-mode", "ABAC")
    except RuntimeError as e:
        assert "authorization-mode ABAC's authorization policy file not passed" in str(e)
    else:
        raise AssertionError("the server started without a policy file")
