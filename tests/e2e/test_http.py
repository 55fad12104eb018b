"""The resource API over real HTTPS, asserting kube's exact status codes and Status bodies."""

from __future__ import annotations

import httpx
import requests

from tests.e2e.answers import status
from tests.e2e.conftest import Server, session_for
from tests.e2e.crds import eventually

CM = "/api/v1/namespaces/default/configmaps"


def configmap(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_create_get_update_delete_round_trip(server: Server, admin: requests.Session) -> None:
    r = admin.post(server.url + CM, json=configmap("rt", a="1"))
    assert r.status_code == 201, r.text
    created = r.json()
    meta = created["metadata"]
    assert (
        meta["namespace"] == "default" and meta["uid"] and meta["creationTimestamp"].endswith("Z")
    )
    r = admin.get(server.url + CM + "/rt")
    assert r.status_code == 200 and r.json() == created
    updated = dict(created, data={"a": "2"})
    r = admin.put(server.url + CM + "/rt", json=updated)
    assert r.status_code == 200
    assert int(r.json()["metadata"]["resourceVersion"]) > int(meta["resourceVersion"])
    # A stale resourceVersion is a conflict and changes nothing.
    r = admin.put(server.url + CM + "/rt", json=dict(created, data={"a": "3"}))
    assert r.status_code == 409
    assert r.json() == status(
        409,
        "Conflict",
        'Operation cannot be fulfilled on configmaps "rt": the object has been modified; '
        "please apply your changes to the latest version and try again",
        {"name": "rt", "kind": "configmaps"},
    )
    assert admin.get(server.url + CM + "/rt").json()["data"] == {"a": "2"}
    r = admin.delete(server.url + CM + "/rt")
    assert r.status_code == 200
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "rt", "kind": "configmaps", "uid": meta["uid"]},
    }
    r = admin.get(server.url + CM + "/rt")
    assert r.status_code == 404
    assert r.json() == status(
        404, "NotFound", 'configmaps "rt" not found', {"name": "rt", "kind": "configmaps"}
    )


def test_no_op_update_keeps_resource_version(server: Server, admin: requests.Session) -> None:
    created = admin.post(server.url + CM, json=configmap("noop", a="1")).json()
    r = admin.put(server.url + CM + "/noop", json=created)
    assert r.status_code == 200
    assert r.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_already_exists_and_generate_name(server: Server, admin: requests.Session) -> None:
    assert admin.post(server.url + CM, json=configmap("dup")).status_code == 201
    r = admin.post(server.url + CM, json=configmap("dup"))
    assert r.status_code == 409
    assert r.json() == status(
        409,
        "AlreadyExists",
        'configmaps "dup" already exists',
        {"name": "dup", "kind": "configmaps"},
    )
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}}
    r = admin.post(server.url + CM, json=body)
    assert r.status_code == 201
    assert (
        r.json()["metadata"]["name"].startswith("gen-") and len(r.json()["metadata"]["name"]) == 9
    )


def test_invalid_name_is_422_with_causes(server: Server, admin: requests.Session) -> None:
    r = admin.post(server.url + CM, json=configmap("Bad_Name"))
    assert r.status_code == 422
    assert r.reason == "Unprocessable Entity"  # Go's status text, not twisted's "Unknown Status"
    body = r.json()
    detail = (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
        "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
        "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    assert body == status(
        422,
        "Invalid",
        f'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {detail}',
        {
            "name": "Bad_Name",
            "kind": "ConfigMap",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": f'Invalid value: "Bad_Name": {detail}',
                    "field": "metadata.name",
                }
            ],
        },
    )
    r = admin.post(server.url + CM, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    assert r.status_code == 422
    assert (
        r.json()["message"]
        == 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    )


def test_strict_field_validation_names_the_kind(server: Server, admin: requests.Session) -> None:
    cm = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"strict"},'
    json_type = {"Content-Type": "application/json"}
    r = admin.post(
        server.url + CM + "?fieldValidation=Strict", data=cm + b'"bogus":1}', headers=json_type
    )
    assert r.json() == status(
        400,
        "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "bogus"',
    )
    assert (
        admin.post(server.url + CM, data=cm + b'"data":{}}', headers=json_type).status_code == 201
    )
    r = admin.put(
        server.url + CM + "/strict?fieldValidation=Strict",
        data=cm + b'"data":{"a":"b","a":"c"},"bogus":1}',
        headers=json_type,
    )
    assert r.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'duplicate field "data.a", unknown field "bogus"'
    )
    r = admin.put(
        server.url + CM + "/strict?fieldValidation=Warn",
        data=cm + b'"data":{"a":"b","a":"c"},"bogus":1}',
        headers=json_type,
    )
    assert r.status_code == 200
    assert (
        r.headers["Warning"]
        == '299 - "duplicate field \\"data.a\\"", 299 - "unknown field \\"bogus\\""'
    )


def _config_maps(server: Server, admin: requests.Session) -> list[tuple[str, str]]:
    """The ConfigMaps in default by name and version: the list's own version moves with any
    write in the cluster (the leader's Lease renewals), the items only with ConfigMap writes."""
    items = admin.get(server.url + CM).json()["items"]
    return [(i["metadata"]["name"], i["metadata"]["resourceVersion"]) for i in items]


def test_bad_bodies_are_400_and_change_nothing(server: Server, admin: requests.Session) -> None:
    before = _config_maps(server, admin)
    r = admin.post(server.url + CM, data=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
    assert r.json()["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error:"
    )
    r = admin.post(
        server.url + CM,
        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}, "data": {"a": 5}},
    )
    assert r.status_code == 400
    assert r.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number '
        "into Go struct field ConfigMap.data of type string"
    )
    r = admin.post(
        server.url + CM, json={"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "t"}}
    )
    assert r.status_code == 400
    assert r.json()["message"] == (  # as kube-apiserver v1.36 words it (reference)
        'ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind "ConfigMap" is '
        'registered for version "v2" in scheme "pkg/api/legacyscheme/scheme.go:30"'
    )
    r = admin.post(server.url + CM, data=b"a: b", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    assert r.json() == status(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.platform.protobuf",
    )
    r = admin.post(
        server.url + CM,
        data=b"x" * (3 * 1024 * 1024 + 1),
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 413
    assert r.json() == status(
        413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728"
    )
    assert _config_maps(server, admin) == before


def test_the_kubernetes_service(server: Server, admin: requests.Session) -> None:
    """kube's bootstrap Service in default: in-cluster clients find the server by it."""
    svc = admin.get(server.url + "/api/v1/namespaces/default/services/kubernetes").json()
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"] == {
        "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": server.port}],
        "clusterIP": "10.0.0.1",
        "clusterIPs": ["10.0.0.1"],
        "type": "ClusterIP",
        "sessionAffinity": "None",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    }
    assert svc["status"] == {"loadBalancer": {}}


def test_namespace_rules(server: Server, admin: requests.Session) -> None:
    r = admin.post(server.url + "/api/v1/namespaces/nope/configmaps", json=configmap("x"))
    assert r.status_code == 404
    assert r.json() == status(
        404, "NotFound", 'namespaces "nope" not found', {"name": "nope", "kind": "namespaces"}
    )
    body = configmap("x")
    body["metadata"]["namespace"] = "platform-system"
    r = admin.post(server.url + CM, json=body)
    assert r.status_code == 400
    assert (
        r.json()["message"]
        == "the namespace of the provided object does not match the namespace sent on the request"
    )
    r = admin.delete(server.url + "/api/v1/namespaces/default")
    assert r.status_code == 403
    assert (
        r.json()["message"]
        == 'namespaces "default" is forbidden: this namespace may not be deleted'
    )
    names = {
        n["metadata"]["name"] for n in admin.get(server.url + "/api/v1/namespaces").json()["items"]
    }
    assert {"default", "platform-system", "platform-public", "platform-node-lease"} <= names


def test_unknown_paths_and_methods(server: Server, admin: requests.Session) -> None:
    r = admin.get(server.url + "/api/v1/widgets")
    assert r.status_code == 404
    assert r.json() == status(
        404, "NotFound", "the server could not find the requested resource", {}
    )
    r = admin.post(server.url + "/api/v1/configmaps", json=configmap("x"))
    assert r.status_code == 405 and r.json()["reason"] == "MethodNotAllowed"
    r = admin.get(server.url + "/apis/nosuch.platform.io/v1/things")
    assert r.status_code == 404


def test_media_types(server: Server, admin: requests.Session) -> None:
    # go-restful's 406 first (kube-apiserver v1.36's answer): the route produces no text/plain
    r = admin.get(server.url + CM, headers={"Accept": "text/plain"})
    assert r.status_code == 406
    assert r.json() == status(
        406,
        "NotAcceptable",
        "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, "
        "application/vnd.platform.protobuf, application/json;stream=watch, "
        "application/vnd.platform.protobuf;stream=watch",
        {},
    )
    for accept in ("application/*", "text/html"):  # go-restful takes no application/*
        r = admin.get(server.url + CM + "/x", headers={"Accept": accept})
        assert r.json() == status(
            406,
            "NotAcceptable",
            "406: Not Acceptable\n\nAvailable representations: application/json, "
            "application/yaml, application/vnd.platform.protobuf",
            {},
        )
    r = admin.get(server.url + "/version", headers={"Accept": "text/html"})
    assert (
        r.json()["message"] == "406: Not Acceptable\n\nAvailable representations: application/json"
    )
    # Discovery: /api, /api/v1 and a group's version are go-restful routes; /apis and
    # /apis/<group> are plain handlers, whose 406 is the negotiation's (recorded from kube).
    for path in ("/api", "/api/v1", "/apis/apps/v1"):
        r = admin.get(server.url + path, headers={"Accept": "application/xml"})
        assert r.json()["message"].startswith("406: Not Acceptable\n\n"), path
    for path in ("/apis", "/apis/apps"):
        r = admin.get(server.url + path, headers={"Accept": "application/xml"})
        assert r.json() == status(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json, application/yaml, "
            "application/vnd.platform.protobuf",
        ), path
    # kube's negotiation then: q=0 is no refusal, and a Table it cannot give is its 406 (in JSON)
    r = admin.get(server.url + CM, headers={"Accept": "application/json;q=0"})
    assert r.status_code == 200 and r.json()["kind"] == "ConfigMapList"
    r = admin.get(
        server.url + CM,
        headers={"Accept": "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1"},
    )
    assert (r.status_code, r.headers["Content-Type"]) == (406, "application/json")
    assert r.json() == status(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.platform.protobuf",
    )
    r = admin.get(server.url + CM, headers={"Accept": "text/plain, application/json"})
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
    # kube has no Protobuf Table: it falls back to the next entry, here plain JSON objects.
    table = "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1"
    r = admin.get(server.url + CM, headers={"Accept": table + ", application/json"})
    assert r.headers["Content-Type"] == "application/json" and r.json()["kind"] == "ConfigMapList"
    assert admin.get(server.url + CM, headers={"Accept": table}).status_code == 406
    r = admin.get(server.url + "/api/v1/namespaces/default", headers={"Accept": "application/yaml"})
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/yaml"
    assert "name: default" in r.text
    yaml_body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n"
    r = admin.post(server.url + CM, data=yaml_body, headers={"Content-Type": "application/yaml"})
    assert r.status_code == 201 and r.json()["data"] == {"k": "v"}


def test_yaml_answers_quote_as_kube_does(server: Server, admin: requests.Session) -> None:
    """What go-yaml would read as another type is double-quoted, line breaks make a
    literal block, letters stay letters (kube-apiserver v1.36's answer, reference)."""
    data = {"n": "123", "on": "on", "text": "line1\nline2\n", "word": "日本語", "t": "- x"}
    assert admin.post(server.url + CM, json=configmap("yaml-quoting", **data)).status_code == 201
    r = admin.get(server.url + CM + "/yaml-quoting", headers={"Accept": "application/yaml"})
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/yaml"
    assert r.text.startswith(
        'apiVersion: v1\ndata:\n  "n": "123"\n  "on": "on"\n  t: \'- x\'\n'
        "  text: |\n    line1\n    line2\n  word: 日本語\nkind: ConfigMap\n"
    )


def test_gzip_for_large_lists(server: Server, admin: requests.Session) -> None:
    big = "x" * 60000
    for i in range(3):
        assert admin.post(server.url + CM, json=configmap(f"big{i}", v=big)).status_code == 201
    r = admin.get(server.url + CM, headers={"Accept-Encoding": "gzip"}, stream=True)
    assert r.headers.get("Content-Encoding") == "gzip"
    assert len(r.json()["items"]) >= 3
    r = admin.get(server.url + CM + "/big0", headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in r.headers


def test_gzip_over_http2_for_get_list_and_tables(server: Server, admin: requests.Session) -> None:
    """Large get and list answers are compressed on HTTP/2 too; only the token gzip counts."""
    ns_path = "/api/v1/namespaces/default/configmaps"
    assert admin.post(server.url + ns_path, json=configmap("h2big", v="y" * 140000)).ok
    table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    with httpx.Client(http2=True, verify=server.ssl_context) as client:
        for path, accept in (
            (ns_path + "/h2big", "application/json"),
            (ns_path, "application/json"),
            (ns_path + "/h2big?includeObject=Object", table),
        ):
            r = client.get(server.url + path, headers={"Accept-Encoding": "gzip", "Accept": accept})
            assert (r.http_version, r.status_code) == ("HTTP/2", 200)
            assert r.headers["content-encoding"] == "gzip", path
            assert int(r.headers["content-length"]) < 140000
            assert r.json()  # httpx decompresses
        small = client.get(server.url + ns_path + "/missing", headers={"Accept-Encoding": "gzip"})
        assert "content-encoding" not in small.headers
        not_gzip = client.get(
            server.url + ns_path + "/h2big", headers={"Accept-Encoding": "gzip;q=0, br"}
        )
        assert "content-encoding" not in not_gzip.headers


def test_secret_string_data_and_type(server: Server, admin: requests.Session) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s1"},
        "stringData": {"pw": "hunter2"},
    }
    r = admin.post(server.url + "/api/v1/namespaces/default/secrets", json=body)
    assert r.status_code == 201
    assert r.json()["data"] == {"pw": "aHVudGVyMg=="} and r.json()["type"] == "Opaque"
    assert "stringData" not in r.json()


def test_patches(server: Server, admin: requests.Session) -> None:
    admin.post(server.url + CM, json=configmap("p", a="1"))
    r = admin.patch(
        server.url + CM + "/p",
        data=b'{"data":{"b":"2","a":null}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200 and r.json()["data"] == {"b": "2"}
    ops = b'[{"op":"test","path":"/data/b","value":"2"},{"op":"add","path":"/data/c","value":"3"}]'
    r = admin.patch(
        server.url + CM + "/p", data=ops, headers={"Content-Type": "application/json-patch+json"}
    )
    assert r.status_code == 200 and r.json()["data"] == {"b": "2", "c": "3"}
    failing = b'[{"op":"test","path":"/data/b","value":"nope"}]'
    r = admin.patch(
        server.url + CM + "/p",
        data=failing,
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert r.status_code == 422
    assert r.json() == status(
        422, "Invalid", "the server rejected our request due to an error in our request", {}
    )
    r = admin.patch(
        server.url + CM + "/missing",
        data=b"{}",
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 404


def test_deletecollection_with_label_selector(server: Server, admin: requests.Session) -> None:
    for name, team in (("dc1", "a"), ("dc2", "a"), ("dc3", "b")):
        body = configmap(name)
        body["metadata"]["labels"] = {"team": team}
        assert admin.post(server.url + CM, json=body).status_code == 201
    r = admin.delete(server.url + CM + "?labelSelector=team%3Da")
    assert r.status_code == 200
    assert sorted(i["metadata"]["name"] for i in r.json()["items"]) == ["dc1", "dc2"]
    left = admin.get(server.url + CM + "?labelSelector=team").json()["items"]
    assert [i["metadata"]["name"] for i in left] == ["dc3"]
    r = admin.get(server.url + CM + "?labelSelector=team%3D%3D%3D")
    assert r.status_code == 400 and r.json()["reason"] == "BadRequest"


def test_health_and_version_without_credentials(server: Server) -> None:
    anonymous = session_for(server)
    for path in ("/livez", "/readyz", "/healthz"):
        r = anonymous.get(server.url + path)
        assert r.status_code == 200 and r.text == "ok"
    r = anonymous.get(server.url + "/readyz?verbose&exclude=ping")
    assert r.text.splitlines()[0] == "[+]ping excluded: ok"
    assert r.text.endswith("readyz check passed\n")
    assert anonymous.get(server.url + "/livez/ping").text == "ok"
    # Without credentials only the health endpoints are open (AlwaysAllow turns anonymous off).
    r = anonymous.get(server.url + "/api/v1/namespaces")
    assert r.status_code == 401
    assert r.json() == status(401, "Unauthorized", "Unauthorized")


def test_version(server: Server, admin: requests.Session) -> None:
    for path in ("/version", "/version/"):
        info = admin.get(server.url + path).json()
        for key in (
            "major",
            "minor",
            "gitVersion",
            "gitCommit",
            "gitTreeState",
            "buildDate",
            "goVersion",
            "compiler",
            "platform",
        ):
            assert isinstance(info[key], str) and info[key]


def test_discovery_documents(server: Server, admin: requests.Session) -> None:
    api = admin.get(server.url + "/api").json()
    assert api["kind"] == "APIVersions" and api["versions"] == ["v1"]
    groups = admin.get(server.url + "/apis").json()
    names = [g["name"] for g in groups["groups"]]
    assert "rbac.authorization.platform.io" in names and "apps" in names
    rbac = admin.get(server.url + "/apis/rbac.authorization.platform.io/v1").json()
    assert {r["name"] for r in rbac["resources"]} == {
        "clusterrolebindings",
        "clusterroles",
        "rolebindings",
        "roles",
    }
    aggregated = "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
    r = admin.get(server.url + "/apis", headers={"Accept": aggregated + ",application/json"})
    assert r.headers["Content-Type"] == aggregated and r.json()["kind"] == "APIGroupDiscoveryList"
    r2 = admin.get(
        server.url + "/apis", headers={"Accept": aggregated, "If-None-Match": r.headers["ETag"]}
    )
    assert r2.status_code == 304
    upstream = (
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    )
    assert (
        admin.get(server.url + "/apis", headers={"Accept": upstream}).json()["kind"]
        == "APIGroupList"
    )


def test_patches_cannot_change_immutable_fields(server: Server, admin: requests.Session) -> None:
    body = configmap("frozen", a="1")
    body["immutable"] = True
    created = admin.post(server.url + CM, json=body).json()
    merge = {"Content-Type": "application/merge-patch+json"}
    r = admin.patch(server.url + CM + "/frozen", data=b'{"data":{"a":"2"}}', headers=merge)
    assert r.status_code == 422
    assert (
        r.json()["message"]
        == 'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set'
    )
    r = admin.patch(
        server.url + CM + "/frozen", data=b'{"metadata":{"uid":"other"}}', headers=merge
    )
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0]["field"] == "metadata.uid"
    assert admin.get(server.url + CM + "/frozen").json() == created


def test_discovery_paths_with_a_trailing_slash(server: Server, admin: requests.Session) -> None:
    """As kube: upstream's Discovery conformance case reads /apis/<group>/."""
    for path, kind in (
        ("/api/", "APIVersions"),
        ("/api/v1/", "APIResourceList"),
        ("/apis/", "APIGroupList"),
        ("/apis/apps/", "APIGroup"),
        ("/apis/apps/v1/", "APIResourceList"),
    ):
        r = admin.get(server.url + path)
        assert (r.status_code, r.json()["kind"]) == (200, kind), path
    # The address clients are told is where the server listens (port 0 was asked for).
    port = server.url.rsplit(":", 1)[1]
    api = admin.get(server.url + "/api").json()
    assert api["serverAddressByClientCIDRs"] == [
        {"clientCIDR": "0.0.0.0/0", "serverAddress": f"127.0.0.1:{port}"}
    ]


def test_discovery_gives_stored_resources_a_storage_version_hash(
    server: Server, admin: requests.Session
) -> None:
    """kube lists no storageVersionHash for what it answers and never stores: bindings,
    componentstatuses and the reviews (exactly these, in the reference's discovery)."""
    unstored = set()
    for gv in (
        "/api/v1",
        "/apis/authentication.platform.io/v1",
        "/apis/authorization.platform.io/v1",
    ):
        for r in admin.get(server.url + gv).json()["resources"]:
            if "/" not in r["name"] and "storageVersionHash" not in r:
                unstored.add(r["name"])
    assert unstored == {
        "bindings",
        "componentstatuses",
        "tokenreviews",
        "selfsubjectreviews",
        "localsubjectaccessreviews",
        "selfsubjectaccessreviews",
        "selfsubjectrulesreviews",
        "subjectaccessreviews",
    }
    apps = admin.get(server.url + "/apis/apps/v1").json()["resources"]
    assert all("storageVersionHash" in r for r in apps if "/" not in r["name"])


def test_new_namespaces_get_a_default_service_account(
    server: Server, admin: requests.Session
) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "sa-default"}}
    assert admin.post(server.url + "/api/v1/namespaces", json=ns).status_code == 201
    url = server.url + "/api/v1/namespaces/sa-default/serviceaccounts/default"
    eventually(lambda: admin.get(url).status_code == 200)
    assert admin.delete(url).status_code == 200
    eventually(lambda: admin.get(url).status_code == 200)  # created again


# kube-apiserver v1.36's /healthz?verbose (the reference, on etcd), one name per line.
KUBE_HEALTHZ = [
    "ping",
    "log",
    "loopback-serving-certificate",
    "etcd",
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/priority-and-fairness-config-consumer",
    "poststarthook/priority-and-fairness-filter",
    "poststarthook/storage-object-count-tracker-hook",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/peer-endpoint-reconciler-controller",
    "poststarthook/start-cluster-authentication-info-controller",
    "poststarthook/start-kube-apiserver-identity-lease-controller",
    "poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
    "poststarthook/storage-readiness",
    "poststarthook/start-legacy-token-tracking-controller",
    "poststarthook/start-service-ip-repair-controllers",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/priority-and-fairness-config-producer",
    "poststarthook/bootstrap-controller",
    "poststarthook/start-kubernetes-service-cidr-controller",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-status-local-available-controller",
    "poststarthook/apiservice-status-remote-available-controller",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/apiservice-wait-for-first-sync",
    "poststarthook/apiservice-discovery-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
    "poststarthook/apiservice-openapi-controller",
    "poststarthook/apiservice-openapiv3-controller",
]
# Parts this server does not have: no check stands for them.
NOT_HERE = {"poststarthook/peer-endpoint-reconciler-controller"}


def test_health_checks_carry_kubes_names_in_kubes_order(
    server: Server, admin: requests.Session
) -> None:
    """Scripts and upstream's e2e health case look for kube's post-start hook names."""
    expected = ["lmdb" if n == "etcd" else n for n in KUBE_HEALTHZ if n not in NOT_HERE]
    for path in ("healthz", "livez"):
        lines = admin.get(f"{server.url}/{path}?verbose").text.splitlines()
        assert lines[-1] == f"{path} check passed"
        assert [line.removeprefix("[+]").removesuffix(" ok") for line in lines[:-1]] == expected
    ready = admin.get(server.url + "/readyz?verbose").text.splitlines()
    names = [line.removeprefix("[+]").removesuffix(" ok") for line in ready[:-1]]
    assert expected[2:4] == ["loopback-serving-certificate", "lmdb"]  # not on /readyz, as kube
    assert names == ["ping", "log", "lmdb", "informer-sync", *expected[4:], "shutdown"]
    one = admin.get(server.url + "/readyz/poststarthook/start-kube-aggregator-informers")
    assert (one.status_code, one.text) == (200, "ok")
