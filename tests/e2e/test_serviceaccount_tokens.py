"""TokenRequest, service-account JWT authentication, and the issuer documents."""

from __future__ import annotations

import time
from pathlib import Path

import jwt
import requests

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.test_list import make_namespace

SELF = {"apiVersion": "authentication.platform.io/v1", "kind": "SelfSubjectReview"}
REVIEW = "/apis/authentication.platform.io/v1/selfsubjectreviews"
ISSUER = "https://platform.default.svc.cluster.local"


def fresh_review(admin: requests.Session, server: Server, token: str) -> dict:
    """A TokenReview for the API's audiences named: a lookup kube's token cache has not
    seen (the requests that used the token asked for none), so it checks the token now,
    where the token's own requests may be answered from the cache for 10 s."""
    body = {
        "apiVersion": "authentication.platform.io/v1",
        "kind": "TokenReview",
        "spec": {"token": token, "audiences": [ISSUER]},
    }
    response = admin.post(
        server.url + "/apis/authentication.platform.io/v1/tokenreviews", json=body
    )
    assert response.status_code == 201
    status: dict = response.json()["status"]
    return status


def token_for(admin: requests.Session, server: Server, ns: str, spec: dict) -> requests.Response:
    body = {"apiVersion": "authentication.platform.io/v1", "kind": "TokenRequest", "spec": spec}
    return admin.post(f"{server.url}/api/v1/namespaces/{ns}/serviceaccounts/robot/token", json=body)


def test_token_request_and_authentication(server: Server, admin: requests.Session) -> None:
    make_namespace(admin, server, "sa-tokens")
    base = f"{server.url}/api/v1/namespaces/sa-tokens"
    sa = admin.post(base + "/serviceaccounts", json={"metadata": {"name": "robot"}}).json()
    r = token_for(admin, server, "sa-tokens", {})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["spec"] == {
        "audiences": [ISSUER],
        "expirationSeconds": 3600,
        "boundObjectRef": None,
    }
    assert body["metadata"]["uid"] == sa["metadata"]["uid"]  # kube fills in the account's
    token = body["status"]["token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert (claims["iss"], claims["sub"], claims["aud"]) == (
        ISSUER,
        "system:serviceaccount:sa-tokens:robot",
        [ISSUER],
    )
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["platform.io"]["serviceaccount"] == {
        "name": "robot",
        "uid": sa["metadata"]["uid"],
    }

    robot = session_for(server, token=token)
    info = robot.post(server.url + REVIEW, json=SELF).json()["status"]["userInfo"]
    assert info["username"] == "system:serviceaccount:sa-tokens:robot"
    assert info["uid"] == sa["metadata"]["uid"]
    assert info["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:sa-tokens",
        "system:authenticated",
    ]
    assert info["extra"]["authentication.platform.io/credential-id"] == [f"JTI={claims['jti']}"]

    # Another audience is not this API's; a deleted account's tokens stop working.
    other = token_for(admin, server, "sa-tokens", {"audiences": ["vault"]}).json()
    r = session_for(server, token=other["status"]["token"]).post(server.url + REVIEW, json=SELF)
    assert r.status_code == 401
    # ... but a TokenReview asking for that audience accepts it.
    review = {
        "apiVersion": "authentication.platform.io/v1",
        "kind": "TokenReview",
        "spec": {"token": other["status"]["token"], "audiences": ["vault"]},
    }
    status = admin.post(
        server.url + "/apis/authentication.platform.io/v1/tokenreviews", json=review
    ).json()["status"]
    assert (status["authenticated"], status["audiences"]) == (True, ["vault"])
    assert admin.delete(base + "/serviceaccounts/robot").status_code == 200
    assert fresh_review(admin, server, token) == {
        "user": {},
        "error": "serviceaccount sa-tokens/robot has been deleted",
    }


def test_bound_tokens_and_rules(server: Server, admin: requests.Session) -> None:
    make_namespace(admin, server, "sa-bound")
    base = f"{server.url}/api/v1/namespaces/sa-bound"
    admin.post(base + "/serviceaccounts", json={"metadata": {"name": "robot"}})
    containers = [{"name": "c", "image": "i"}]
    pod = {
        "metadata": {"name": "p"},
        "spec": {"serviceAccountName": "robot", "containers": containers},
    }
    uid = admin.post(base + "/pods", json=pod).json()["metadata"]["uid"]
    ref = {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": uid}
    r = token_for(admin, server, "sa-bound", {"boundObjectRef": ref, "expirationSeconds": 600})
    assert r.status_code == 201, r.text
    # kube's create handler records the request, as an Update of the sub-resource.
    (entry,) = r.json()["metadata"]["managedFields"]
    assert (entry["operation"], entry["subresource"], entry["apiVersion"]) == (
        "Update",
        "token",
        "authentication.platform.io/v1",
    )
    assert entry["fieldsV1"] == {
        "f:spec": {
            "f:boundObjectRef": {"f:apiVersion": {}, "f:kind": {}, "f:name": {}, "f:uid": {}},
            "f:expirationSeconds": {},
        }
    }
    token = r.json()["status"]["token"]
    robot = session_for(server, token=token)
    info = robot.post(server.url + REVIEW, json=SELF).json()["status"]["userInfo"]
    assert info["extra"]["authentication.platform.io/pod-name"] == ["p"]
    assert info["extra"]["authentication.platform.io/pod-uid"] == [uid]
    admin.delete(base + "/pods/p?gracePeriodSeconds=0")
    assert fresh_review(admin, server, token) == {
        "user": {},
        "error": "pod sa-bound/p has been deleted",
    }

    # Validation names no object; the URL's names must be the body's.
    r = token_for(admin, server, "sa-bound", {"expirationSeconds": 599})
    assert (r.status_code, r.json()["message"], r.json()["details"]) == (
        422,
        'TokenRequest.authentication.platform.io "" is invalid: spec.expirationSeconds: '
        "Invalid value: 599: may not specify a duration less than 10 minutes",
        {
            "group": "authentication.platform.io",
            "kind": "TokenRequest",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: 599: may not specify a duration less than 10 "
                    "minutes",
                    "field": "spec.expirationSeconds",
                }
            ],
        },
    )
    url = f"{base}/serviceaccounts/robot/token"
    body = {"apiVersion": "authentication.platform.io/v1", "kind": "TokenRequest"}
    r = admin.post(url, json={**body, "metadata": {"name": "other"}})
    assert (r.status_code, r.json()["message"]) == (
        422,
        'TokenRequest.authentication.platform.io "robot" is invalid: metadata.name: Invalid '
        'value: "other": must match the service account name if specified',
    )
    r = admin.post(url, json={**body, "metadata": {"namespace": "other"}})
    assert (r.status_code, r.json()["message"]) == (
        400,
        "the namespace of the provided object does not match the namespace sent on the request",
    )
    r = token_for(admin, server, "sa-bound", {"boundObjectRef": {"kind": "ConfigMap", "name": "n"}})
    assert (r.status_code, r.json()["message"]) == (
        400,
        "cannot bind token to object of type /, Kind=ConfigMap",
    )
    r = token_for(admin, server, "sa-bound", {"boundObjectRef": {"kind": "Secret"}})
    assert (r.status_code, r.json()["message"]) == (400, "Name parameter required.")
    wrong = {"kind": "Pod", "apiVersion": "v2", "name": "p"}  # kube looks at the kind only
    r = token_for(admin, server, "sa-bound", {"boundObjectRef": wrong})
    assert (r.status_code, r.json()["message"]) == (404, 'pods "p" not found')
    pod["metadata"]["name"] = "q"
    pod["spec"]["serviceAccountName"] = "default"
    admin.post(base + "/pods", json=pod)
    other = {"kind": "Pod", "apiVersion": "v1", "name": "q"}
    r = token_for(admin, server, "sa-bound", {"boundObjectRef": other})
    assert (r.status_code, r.json()["message"]) == (
        400,
        'cannot bind token for serviceaccount "robot" to pod running with different '
        "serviceaccount name.",
    )
    r = admin.post(
        base + "/serviceaccounts/ghost/token",
        json={"apiVersion": "authentication.platform.io/v1", "kind": "TokenRequest"},
    )
    assert (r.status_code, r.json()["message"]) == (404, 'serviceaccounts "ghost" not found')


def test_node_bound_tokens(server: Server, admin: requests.Session) -> None:
    """A token bound to a Node names it, and lives only as long as that node."""
    make_namespace(admin, server, "sa-node")
    base = f"{server.url}/api/v1/namespaces/sa-node"
    admin.post(base + "/serviceaccounts", json={"metadata": {"name": "robot"}})
    node = admin.post(server.url + "/api/v1/nodes", json={"metadata": {"name": "sa-node-1"}})
    uid = node.json()["metadata"]["uid"]
    missing = {"kind": "Node", "apiVersion": "v1", "name": "sa-node-2"}
    r = token_for(admin, server, "sa-node", {"boundObjectRef": missing})
    assert (r.status_code, r.json()["message"]) == (404, 'nodes "sa-node-2" not found')
    ref = {"kind": "Node", "apiVersion": "v1", "name": "sa-node-1"}
    r = token_for(admin, server, "sa-node", {"boundObjectRef": ref})
    assert r.status_code == 201, r.text
    token = r.json()["status"]["token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["platform.io"]["node"] == {"name": "sa-node-1", "uid": uid}
    robot = session_for(server, token=token)
    info = robot.post(server.url + REVIEW, json=SELF).json()["status"]["userInfo"]
    assert info["extra"]["authentication.platform.io/node-name"] == ["sa-node-1"]
    assert info["extra"]["authentication.platform.io/node-uid"] == [uid]
    assert admin.delete(server.url + "/api/v1/nodes/sa-node-1").status_code == 200
    assert fresh_review(admin, server, token) == {
        "user": {},
        "error": "node /sa-node-1 has been deleted",
    }


def test_issuer_documents_verify_tokens(server: Server, admin: requests.Session) -> None:
    document = admin.get(server.url + "/.well-known/openid-configuration")
    config = document.json()
    assert config["issuer"] == ISSUER
    # The server's own address, the port it listens on (port 0: the kernel's pick).
    assert config["jwks_uri"] == f"https://127.0.0.1:{server.port}/openid/v1/jwks"
    assert config["id_token_signing_alg_values_supported"] == ["RS256"]
    keys = admin.get(server.url + "/openid/v1/jwks")
    # kube's: keys read from files may be cached for an hour.
    assert [r.headers["cache-control"] for r in (document, keys)] == ["public, max-age=3600"] * 2
    # with a trailing slash too, as kube serves them and its OpenAPI names them
    slashed = [
        admin.get(server.url + p + "/")
        for p in ("/.well-known/openid-configuration", "/openid/v1/jwks")
    ]
    assert [(r.status_code, r.content) for r in slashed] == [
        (200, document.content),
        (200, keys.content),
    ]
    assert slashed[1].headers["content-type"] == "application/jwk-set+json"
    jwks = keys.json()
    make_namespace(admin, server, "sa-jwks")
    admin.post(
        server.url + "/api/v1/namespaces/sa-jwks/serviceaccounts",
        json={"metadata": {"name": "robot"}},
    )
    token = token_for(admin, server, "sa-jwks", {}).json()["status"]["token"]
    key = jwt.PyJWKSet.from_dict(jwks)[jwt.get_unverified_header(token)["kid"]]
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=ISSUER)
    assert claims["sub"] == "system:serviceaccount:sa-jwks:robot"


def test_the_discovery_document_names_the_jwks_uri_given(tmp_path: Path) -> None:
    """--service-account-jwks-uri: relying parties fetch the keys from elsewhere."""
    uri = "https://keys.example.com/openid/v1/jwks"
    server = start_server(tmp_path / "data", f"--service-account-jwks-uri={uri}")
    try:
        admin = session_for(server, cert=server.admin_cert)
        config = admin.get(server.url + "/.well-known/openid-configuration").json()
        assert (config["issuer"], config["jwks_uri"]) == (ISSUER, uri)
    finally:
        server.stop()


def _claims(reply: requests.Response) -> dict:
    assert reply.status_code == 201, reply.text
    claims: dict = jwt.decode(reply.json()["status"]["token"], options={"verify_signature": False})
    return claims


def test_a_pods_admission_sized_token_lasts_a_year(server: Server, admin: requests.Session) -> None:
    """--service-account-extend-token-expiration (on by default): a pod-bound token asked
    for 3607 s, the ServiceAccount admission plugin's figure, for the API's audiences,
    lasts a year and carries warnafter; the answer still says 3607 s.  Checked against
    kube-apiserver v1.36."""
    make_namespace(admin, server, "sa-extend")
    base = f"{server.url}/api/v1/namespaces/sa-extend"
    admin.post(base + "/serviceaccounts", json={"metadata": {"name": "robot"}})
    pod = {
        "metadata": {"name": "p"},
        "spec": {"serviceAccountName": "robot", "containers": [{"name": "c", "image": "i"}]},
    }
    uid = admin.post(base + "/pods", json=pod).json()["metadata"]["uid"]
    ref = {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": uid}
    reply = token_for(
        admin, server, "sa-extend", {"boundObjectRef": ref, "expirationSeconds": 3607}
    )
    claims = _claims(reply)
    assert claims["exp"] - claims["iat"] == 365 * 24 * 3600
    private = claims["platform.io"]
    assert list(private) == sorted(private)  # kube's order of the private claim
    assert private["warnafter"] == claims["iat"] + 3607
    status = reply.json()["status"]["expirationTimestamp"]
    assert status == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims["iat"] + 3607))
    robot = session_for(server, token=reply.json()["status"]["token"])
    assert robot.post(server.url + REVIEW, json=SELF).status_code == 201  # not stale yet
    for spec in (
        {"boundObjectRef": ref, "expirationSeconds": 3600},  # another lifetime
        {"boundObjectRef": ref, "expirationSeconds": 3607, "audiences": ["vault"]},
        {"expirationSeconds": 3607},  # not bound to a pod
    ):
        claims = _claims(token_for(admin, server, "sa-extend", spec))
        assert claims["exp"] - claims["iat"] == spec["expirationSeconds"]
        assert "warnafter" not in claims["platform.io"]


def test_the_extension_can_be_turned_off(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", "--service-account-extend-token-expiration=false")
    try:
        admin = session_for(server, cert=server.admin_cert)
        base = f"{server.url}/api/v1/namespaces/default"
        admin.post(base + "/serviceaccounts", json={"metadata": {"name": "robot"}})
        pod = {
            "metadata": {"name": "p"},
            "spec": {"serviceAccountName": "robot", "containers": [{"name": "c", "image": "i"}]},
        }
        assert admin.post(base + "/pods", json=pod).status_code == 201
        ref = {"kind": "Pod", "apiVersion": "v1", "name": "p"}
        spec = {"boundObjectRef": ref, "expirationSeconds": 3607}
        claims = _claims(token_for(admin, server, "default", spec))
        assert claims["exp"] - claims["iat"] == 3607
        assert "warnafter" not in claims["platform.io"]
    finally:
        server.stop()


def test_a_revoked_token_is_taken_from_the_cache_until_its_ttl(tmp_path: Path) -> None:
    """kube's token cache: a token that authenticated is taken for the cache's time
    (10 s in kube; 5 s here) even when its account is deleted meanwhile."""
    server = start_server(tmp_path / "data", "--authentication-token-cache-ttl=5s")
    try:
        admin = session_for(server, cert=server.admin_cert)
        make_namespace(admin, server, "sa-cache")
        account = f"{server.url}/api/v1/namespaces/sa-cache/serviceaccounts"
        assert admin.post(account, json={"metadata": {"name": "robot"}}).status_code == 201
        token = token_for(admin, server, "sa-cache", {}).json()["status"]["token"]
        robot = session_for(server, token=token)
        assert robot.post(server.url + REVIEW, json=SELF).status_code == 201
        used = time.monotonic()
        assert admin.delete(account + "/robot").status_code == 200
        assert robot.post(server.url + REVIEW, json=SELF).status_code == 201  # from the cache
        while (refused := robot.post(server.url + REVIEW, json=SELF)).status_code == 201:
            assert time.monotonic() - used < 15, "the cached token was never refused"
            time.sleep(0.2)
        assert time.monotonic() - used >= 4.9
        assert (refused.status_code, refused.json()["reason"]) == (401, "Unauthorized")
        text = admin.get(server.url + "/metrics").text
        hits = [
            line
            for line in text.splitlines()
            if line.startswith('authentication_token_cache_request_total{status="hit"}')
        ]
        assert hits and float(hits[0].split()[-1]) >= 1
    finally:
        server.stop()
