"""The resource API over real HTTPS, asserting kube's exact status codes and Status bodies."""

from __future__ import annotations

import httpx
import requests

from tests.e2e.answers import status
from tests.e2e.conftest import Server
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


def test_new_namespaces_get_a_default_service_account(
    server: Server, admin: requests.Session
) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "sa-default"}}
    assert admin.post(server.url + "/api/v1/namespaces", json=ns).status_code == 201
    url = server.url + "/api/v1/namespaces/sa-default/serviceaccounts/default"
    eventually(lambda: admin.get(url).status_code == 200)
    assert admin.delete(url).status_code == 200
    eventually(lambda: admin.get(url).status_code == 200)  # created again


def test_a_table_refuses_an_unknown_include_object_once_the_object_is_read(
    server: Server, admin: requests.Session
) -> None:
    """kube's response writer checks the TableOptions: after the read (an absent
    object is a 404 first), in the words it refuses a watch's Table with."""
    table = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    base = server.url + "/api/v1/namespaces/default/configmaps"
    made = admin.post(base, json={"metadata": {"name": "include-object"}})
    assert made.status_code == 201
    refusal = status(
        400,
        "BadRequest",
        "Unable to convert to Table as requested: includeObject: Invalid value: "
        "\"Bogus\": must be 'Metadata', 'Object', 'None', or empty",
    )
    for url in (base, base + "/include-object"):
        answer = admin.get(url, params={"includeObject": "Bogus"}, headers=table)
        assert answer.json() == refusal, url
    absent = admin.get(base + "/absent", params={"includeObject": "Bogus"}, headers=table)
    assert (absent.status_code, absent.json()["reason"]) == (404, "NotFound")
    plain = admin.get(base, params={"includeObject": "Bogus"})  # no Table asked for
    assert plain.status_code == 200
