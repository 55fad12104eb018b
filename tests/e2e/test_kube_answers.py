"""Answers checked request by request against kube-apiserver v1.36 (the reference): body
format, built-in validation and bodies of another type (its routes: test_kube_routes.py)."""

from __future__ import annotations

import json

import pytest
import requests

from tests.e2e.conftest import Server
from tests.e2e.test_http import CM, configmap, status
from tests.e2e.test_kube_routes import code_and_reason

MERGE = "application/merge-patch+json"


def test_json_bodies_end_as_kubes_serializer_ends_them(
    server: Server, admin: requests.Session
) -> None:
    """A newline after every API object, list, Status and discovery document (Go's
    json.Encoder); none after pretty ones (json.MarshalIndent) or the OpenAPI and
    OpenID documents, which kube writes as they are."""
    base = server.url + "/api/v1/namespaces/default/configmaps"
    created = admin.post(base, json=configmap("newline", k="v"))
    assert created.status_code == 201
    ends_in_newline = [
        created,
        admin.get(base + "/newline"),
        admin.get(base),
        admin.get(base + "/nope"),
        admin.get(server.url + "/api"),
        admin.get(server.url + "/apis/apps/v1"),
        admin.get(base, headers={"Accept": "application/json;as=Table;v=v1;g=meta.platform.io"}),
        admin.delete(base + "/newline"),
    ]
    for r in ends_in_newline:
        assert r.content.endswith(b"}\n") and not r.content.endswith(b"\n\n"), r.url
        assert "Server" not in r.headers  # twisted.web's own; kube sends none
    for path in ("/version", "/api/v1/namespaces/default?pretty=true", "/openapi/v2"):
        r = admin.get(server.url + path)
        assert r.status_code == 200 and r.content.endswith(b"}"), path


def test_an_invalid_service_is_refused_whole_as_kube_refuses_it(
    server: Server, admin: requests.Session
) -> None:
    """Body and Status as kube-apiserver v1.36 answered the same request."""
    base = server.url + "/api/v1/namespaces/default/services"
    spec = {"ports": [{"port": 80}, {"name": "b", "port": 80}]}
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "bad-ports"}, "spec": spec}
    r = admin.post(base, json=body)
    assert r.status_code == 422
    assert r.content == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
        b'"Service \\"bad-ports\\" is invalid: [spec.ports[0].name: Required value, '
        b'spec.ports[1]: Duplicate value: {\\"Name\\":\\"\\",\\"Protocol\\":\\"TCP\\",'
        b'\\"AppProtocol\\":null,\\"Port\\":80,\\"TargetPort\\":0,\\"NodePort\\":0}]",'
        b'"reason":"Invalid","details":{"name":"bad-ports","kind":"Service","causes":['
        b'{"reason":"FieldValueRequired","message":"Required value","field":"spec.ports[0].name"},'
        b'{"reason":"FieldValueDuplicate","message":"Duplicate value: {\\"Name\\":\\"\\",'
        b'\\"Protocol\\":\\"TCP\\",\\"AppProtocol\\":null,\\"Port\\":80,\\"TargetPort\\":0,'
        b'\\"NodePort\\":0}","field":"spec.ports[1]"}]},"code":422}\n'
    )
    assert admin.get(base + "/bad-ports").status_code == 404


SCHEME = "pkg/api/legacyscheme/scheme.go:30"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


@pytest.mark.parametrize(
    ("path", "api_version", "kind", "message"),
    [
        (
            CM,
            "v1",
            "Secret",
            'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) '
            "to (core.ConfigMap): unknown conversion",
        ),
        (
            CM,
            "apps/v1",
            "ConfigMap",
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" '
            f'is registered for version "apps/v1" in scheme "{SCHEME}"',
        ),
        (
            CM,
            "v1",
            "Bogus",
            'Bogus in version "v1" cannot be handled as a ConfigMap: no kind "Bogus" is '
            f'registered for version "v1" in scheme "{SCHEME}"',
        ),
        (
            DEPLOYMENTS,
            "apps/v1",
            "ReplicaSet",
            'ReplicaSet in version "v1" cannot be handled as a Deployment: converting '
            "(v1.ReplicaSet) to (apps.Deployment): unknown conversion",
        ),
        (
            DEPLOYMENTS,
            "apps/v1beta1",
            "Deployment",
            "the API version in the data (apps/v1beta1) does not match the expected API "
            "version (apps/v1)",
        ),
        (
            DEPLOYMENTS,
            "v1",
            "Deployment",
            'Deployment in version "v1" cannot be handled as a Deployment: no kind '
            f'"Deployment" is registered for version "v1" in scheme "{SCHEME}"',
        ),
        # an older group's kind converts into the same internal type
        (
            DEPLOYMENTS,
            "extensions/v1beta1",
            "Deployment",
            "the API version in the data (extensions/v1beta1) does not match the expected "
            "API version (apps/v1)",
        ),
        # versions the scheme registers, each with or without the kind
        (
            "/apis/apps/v1/namespaces/default/daemonsets",
            "apps/v1beta2",
            "DaemonSet",
            "the API version in the data (apps/v1beta2) does not match the expected API "
            "version (apps/v1)",
        ),
        (
            "/apis/apps/v1/namespaces/default/daemonsets",
            "apps/v1beta1",
            "DaemonSet",
            'DaemonSet in version "v1beta1" cannot be handled as a DaemonSet: no kind '
            f'"DaemonSet" is registered for version "apps/v1beta1" in scheme "{SCHEME}"',
        ),
        (
            DEPLOYMENTS,
            "apps/v2",
            "Deployment",
            'Deployment in version "v2" cannot be handled as a Deployment: no kind '
            f'"Deployment" is registered for version "apps/v2" in scheme "{SCHEME}"',
        ),
        # the kind as it came, then quoted as Go's %q quotes it (reference, 2026-12-06)
        (
            CM,
            "v1",
            "Secr\t",
            'Secr\t in version "v1" cannot be handled as a ConfigMap: no kind "Secr\\t" is '
            f'registered for version "v1" in scheme "{SCHEME}"',
        ),
    ],
)
def test_a_body_of_another_type_is_refused_in_kubes_words(
    server: Server, admin: requests.Session, path: str, api_version: str, kind: str, message: str
) -> None:
    """As kube-apiserver v1.36 answered each (reference)."""
    body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "other-type"}}
    r = admin.post(server.url + path, json=body)
    assert r.status_code == 400
    assert r.json() == status(400, "BadRequest", message)


def test_secret_types_and_ingresses_are_checked_as_kube_checks_them(
    server: Server, admin: requests.Session
) -> None:
    """Messages as kube-apiserver v1.36 gave them (its type names branded here)."""
    tls = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "t"},
        "type": "platform.io/tls",
    }
    r = admin.post(server.url + "/api/v1/namespaces/default/secrets", json=tls)
    assert r.status_code == 422 and r.json()["message"] == (
        'Secret "t" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]'
    )
    ingress = {
        "apiVersion": "networking.platform.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "i"},
    }
    r = admin.post(
        server.url + "/apis/networking.platform.io/v1/namespaces/default/ingresses", json=ingress
    )
    assert r.status_code == 422 and r.json()["message"] == (
        'Ingress.networking.platform.io "i" is invalid: spec: Invalid value: null: '
        "either `defaultBackend` or `rules` must be specified"
    )
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    ingress["spec"] = {"defaultBackend": backend, "tls": [{"secretName": "Web_TLS"}]}
    r = admin.post(
        server.url + "/apis/networking.platform.io/v1/namespaces/default/ingresses", json=ingress
    )
    assert r.status_code == 422 and r.json()["message"].startswith(
        'Ingress.networking.platform.io "i" is invalid: spec.tls[0].secretName: Invalid value: '
        '"Web_TLS": a lowercase RFC 1123 subdomain must consist of'
    )


def test_pod_logs_answer_as_for_a_pod_no_node_started(
    server: Server, admin: requests.Session
) -> None:
    """No pod runs here: kube answers a valid log request for such a pod with 204 and
    checks the options and the container first (answers as the reference gave them)."""
    base = server.url + "/api/v1/namespaces/default/pods"
    containers = [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx"}]
    spec = {"containers": containers, "initContainers": [{"name": "i", "image": "busybox"}]}
    for name, pod_spec in (("one", {"containers": containers[:1]}), ("two", spec)):
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": pod_spec}
        assert admin.post(base, json=body).status_code == 201
    for query in ("one/log", "one/log?follow=true&previous=true", "two/log?container=i"):
        empty = admin.get(f"{base}/{query}")
        assert (empty.status_code, empty.content) == (204, b""), query
        assert "Content-Type" not in empty.headers
    for query, code, message in (
        ("two/log", 400, "a container name must be specified for pod two, choose one of: [i a b]"),
        ("one/log?container=x", 400, "container x is not valid for pod one"),
        ("one/log?tailLines=x", 400, 'strconv.ParseInt: parsing "x": invalid syntax'),
        (
            "one/log?tailLines=-1",
            422,
            'PodLogOptions "one" is invalid: tailLines: Invalid value: -1: '
            "must be greater than or equal to 0",
        ),
        (
            "one/log?sinceSeconds=1&sinceTime=2020-01-01T00:00:00Z",
            422,
            'PodLogOptions "one" is invalid: []: Forbidden: at most one of `sinceTime` or '
            "`sinceSeconds` may be specified",
        ),
        ("nope/log", 404, 'pods "nope" not found'),
        # the query is read before the pod: Go's parsers' words, then the rules
        ("nope/log?tailLines=1_0", 400, 'strconv.ParseInt: parsing "1_0": invalid syntax'),
        ("nope/log?tailLines=", 400, 'strconv.ParseInt: parsing "": invalid syntax'),
        (
            "nope/log?limitBytes=99999999999999999999",
            400,
            'strconv.ParseInt: parsing "99999999999999999999": value out of range',
        ),
        (
            "nope/log?sinceTime=garbage",
            400,
            'parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as '
            '"2006"',
        ),
        (
            "one/log?sinceSeconds=1&sinceTime=",
            422,
            'PodLogOptions "one" is invalid: []: Forbidden: at most one of `sinceTime` or '
            "`sinceSeconds` may be specified",
        ),
    ):
        refused = admin.get(f"{base}/{query}")
        assert (refused.status_code, refused.json()["message"]) == (code, message), query
    assert admin.post(f"{base}/one/log").status_code == 405
    logs = server.kubectl("logs", "one")
    assert (logs.returncode, logs.stdout) == (0, "")
    for name in ("one", "two"):
        admin.delete(f"{base}/{name}?gracePeriodSeconds=0")


def test_pods_are_validated_and_updated_as_kubes(server: Server, admin: requests.Session) -> None:
    """A pod spec is checked as kube's ValidatePodSpec checks it (volumes, mounts, probes:
    the full table is in tests/registry/test_podspec.py), and an update may change only
    what kube lets change (images, a shorter deadline, added tolerations)."""
    base = server.url + "/api/v1/namespaces/default/pods"
    container = {
        "name": "c",
        "image": "nginx:1",
        "volumeMounts": [{"name": "data", "mountPath": "/d"}],
    }
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "checked"}}
    refused = admin.post(base, json={**body, "spec": {"containers": [container]}})
    assert code_and_reason(refused) == (422, "Invalid")
    assert refused.json()["message"] == (
        'Pod "checked" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "data"'
    )
    spec = {"containers": [container], "volumes": [{"name": "data"}]}  # an emptyDir by default
    created = admin.post(base, json={**body, "spec": spec})
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["volumes"][0] == {"name": "data", "emptyDir": {}}
    patch = {"Content-Type": "application/strategic-merge-patch+json"}
    image = {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}
    assert admin.patch(f"{base}/checked", json=image, headers=patch).status_code == 200
    env = {"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}]}]}}
    forbidden = admin.patch(f"{base}/checked", json=env, headers=patch)
    assert code_and_reason(forbidden) == (422, "Invalid")
    assert forbidden.json()["message"].startswith(
        'Pod "checked" is invalid: spec: Forbidden: pod updates may not change fields other '
        "than `spec.containers[*].image`,"
    )
    assert admin.get(f"{base}/checked").json()["spec"]["containers"][0]["image"] == "nginx:2"

    # Resources that allow no overcommit: huge pages in whole pages, beside cpu or memory;
    # an extended resource's request equal to its limit.
    plain = {"name": "c", "image": "nginx:1"}
    pages = {"limits": {"hugepages-2Mi": "3Mi"}}
    r = admin.post(base, json={**body, "spec": {"containers": [{**plain, "resources": pages}]}})
    assert r.json()["message"] == (
        'Pod "checked" is invalid: [spec.containers[0].resources.limits[hugepages-2Mi]: Invalid '
        'value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi, '
        'spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not '
        "positive integer multiple of hugepages-2Mi, spec.containers[0].resources: Forbidden: "
        "HugePages require cpu or memory]"
    )
    extended = {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}}
    r = admin.post(base, json={**body, "spec": {"containers": [{**plain, "resources": extended}]}})
    assert (r.status_code, r.json()["message"]) == (
        422,
        'Pod "checked" is invalid: spec.containers[0].resources.requests: Invalid value: "1": '
        "must be equal to example.com/gpu limit of 2",
    )


def test_a_cluster_ip_that_is_no_ip_is_refused_as_kube(
    server: Server, admin: requests.Session
) -> None:
    """kube's Service validation names the item of clusterIPs (as the reference did)."""
    body = {"metadata": {"name": "badip"}, "spec": {"ports": [{"port": 80}], "clusterIP": "1.2.3"}}
    refused = admin.post(server.url + "/api/v1/namespaces/default/services", json=body)
    assert code_and_reason(refused) == (422, "Invalid")
    assert refused.json()["message"] == (
        'Service "badip" is invalid: spec.clusterIPs[0]: Invalid value: "1.2.3": must be a '
        "valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
    )


def test_objects_are_written_in_go_field_order(server: Server, admin: requests.Session) -> None:
    """kube encodes its Go structs: TypeMeta first, each struct's fields in declaration
    order (ObjectMeta's resourceVersion after uid), a map's keys sorted, whatever order
    the writer used; custom resources are Go maps, sorted throughout."""
    base = server.url + "/api/v1/namespaces/default/configmaps"
    body = '{"data":{"z":"1","a":"2"},"metadata":{"labels":{"y":"1","b":"2"},"name":"go-order"}}'
    created = admin.post(base, data=body, headers={"Content-Type": "application/json"})
    meta = created.json()["metadata"]
    expected = (
        '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"go-order","namespace":'
        f'"default","uid":"{meta["uid"]}","resourceVersion":"{meta["resourceVersion"]}",'
        f'"creationTimestamp":"{meta["creationTimestamp"]}","labels":{{"b":"2","y":"1"}},'
        f'"managedFields":{json.dumps(meta["managedFields"], separators=(",", ":"))}}},'
        '"data":{"a":"2","z":"1"}}\n'
    )
    assert created.text == expected
    assert admin.get(base + "/go-order").text == expected
    held = {"metadata": {"finalizers": ["example.com/hold"]}}
    admin.patch(base + "/go-order", json=held, headers={"Content-Type": MERGE})
    deleting = admin.delete(base + "/go-order").json()["metadata"]
    assert list(deleting) == [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "finalizers",
        "managedFields",
    ]
    admin.patch(
        base + "/go-order", json={"metadata": {"finalizers": None}}, headers={"Content-Type": MERGE}
    )


def test_a_null_body_is_an_empty_object(server: Server, admin: requests.Session) -> None:
    """Go reads JSON (or YAML) null into a struct as nothing at all: kube goes on with an
    empty object, and refuses it for what it lacks."""
    base = server.url + "/api/v1/namespaces/default"
    for content_type, body in (("application/json", " null "), ("application/yaml", "~")):
        r = admin.post(base + "/configmaps", data=body, headers={"Content-Type": content_type})
        assert (r.status_code, r.json()["message"]) == (
            422,
            'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is '
            "required",
        )
    json_null = {"Content-Type": "application/json"}
    r = admin.post(base + "/pods/nopod/eviction", data="null", headers=json_null)
    assert (r.status_code, r.json()["message"]) == (
        400,
        "name in URL does not match name in Eviction object",
    )
    admin.post(base + "/configmaps", json=configmap("null-delete"))
    r = admin.delete(base + "/configmaps/null-delete", data="null", headers=json_null)
    assert r.status_code == 200


def test_json_is_html_escaped_as_gos_encoder_writes_it(
    server: Server, admin: requests.Session
) -> None:
    """Go's encoding/json writes <, >, &, U+2028 and U+2029 inside strings as \\u
    escapes: in objects, lists, Tables, Status messages, watch events and OpenAPI v3;
    kube-openapi's v2 document and YAML keep the characters (recorded from the reference)."""
    base = server.url + "/api/v1/namespaces/default/configmaps"
    raw = "x<y>&z\u2028w\u2029"
    escaped = b'"x\\u003cy\\u003e\\u0026z\\u2028w\\u2029"'
    cm = {"metadata": {"name": "html-escape", "annotations": {"a": raw}}, "data": {"k": raw}}
    created = admin.post(base, json=cm)
    assert created.status_code == 201 and created.content.count(escaped) == 2
    assert created.json()["data"]["k"] == raw
    table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    one = "?fieldSelector=metadata.name%3Dhtml-escape"
    for answer in (
        admin.get(base + "/html-escape"),
        admin.get(base + "/html-escape?pretty=true"),
        admin.get(base + one),
        admin.get(base + "/html-escape", headers={"Accept": table + ";includeObject=Object"}),
    ):
        assert answer.status_code == 200 and escaped in answer.content, answer.url
        assert b"<" not in answer.content and "\u2028".encode() not in answer.content
    watched = admin.get(base + one + "&watch=1&timeoutSeconds=1&resourceVersion=0")
    assert watched.content.startswith(b'{"type":"ADDED"') and escaped in watched.content
    yaml_answer = admin.get(base + "/html-escape", headers={"Accept": "application/yaml"})
    assert b"  k: 'x<y>&z" in yaml_answer.content
    refused = admin.post(base, json={"metadata": {"name": "a<b&c"}})
    assert refused.status_code == 422
    assert refused.content.startswith(
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
        b'"ConfigMap \\"a\\u003cb\\u0026c\\" is invalid: metadata.name: Invalid value: '
        b'\\"a\\u003cb\\u0026c\\": a lowercase RFC 1123 subdomain'
    )
    assert refused.json()["details"]["name"] == "a<b&c"
    assert b"\\u003c" in admin.get(server.url + "/openapi/v3/api/v1").content
    v2 = admin.get(server.url + "/openapi/v2").content
    assert b"<" in v2 and b"\\u003c" not in v2
    assert admin.delete(base + "/html-escape").status_code == 200


def test_yaml_answers_read_go_json_back_as_kube_does(
    server: Server, admin: requests.Session
) -> None:
    """kube makes YAML by reading its own JSON as YAML: a NEL folds like a line break, a
    DEL or other C1 control stops the reader and the answer is a 500 Status in YAML (its
    code in the body even where the answer's is another; recorded from the reference)."""
    base = server.url + "/api/v1/namespaces/default/configmaps"
    yaml_accept = {"Accept": "application/yaml"}
    cm = {"metadata": {"name": "yaml-nel"}, "data": {"a": "x\x85y", "b": "k\x85", "c": "p\u2028"}}
    assert admin.post(base, json=cm).status_code == 201
    got = admin.get(base + "/yaml-nel", headers=yaml_accept)
    assert got.status_code == 200
    assert "data:\n  a: x y\n  b: 'k '\n  c: 'p\u2028'\n" in got.content.decode()
    assert admin.get(base + "/yaml-nel").json()["data"]["a"] == "x\x85y"  # stored as sent
    refused_yaml = (
        b"apiVersion: v1\ncode: 500\nkind: Status\n"
        b"message: 'yaml: control characters are not allowed'\nmetadata: {}\nstatus: Failure\n"
    )
    held = {"metadata": {"name": "yaml-del"}, "data": {"k": "a\x7f"}}
    assert admin.post(base, json=held).status_code == 201
    for url in (base + "/yaml-del", base + "?fieldSelector=metadata.name%3Dyaml-del"):
        answer = admin.get(url, headers=yaml_accept)
        assert (answer.status_code, answer.content) == (500, refused_yaml)
        assert answer.headers["Content-Type"] == "application/yaml"
    invalid = admin.post(base, json={"metadata": {"name": "a\x80b"}}, headers=yaml_accept)
    assert (invalid.status_code, invalid.content) == (422, refused_yaml)
    for name in ("yaml-nel", "yaml-del"):
        assert admin.delete(base + "/" + name).status_code == 200


def test_a_watch_asked_for_in_yaml_is_refused_as_kube_refuses_it(
    server: Server, admin: requests.Session
) -> None:
    """YAML has no stream framing: when the client's first choice is YAML, kube answers
    a watch with a 406 (in YAML) naming the stream types, even if JSON is also accepted;
    asked as a Table in YAML, the 406 is kube's raw JSON (recorded from the reference)."""
    message = (
        "only the following media types are accepted: application/json;stream=watch, "
        "application/vnd.platform.protobuf;stream=watch"
    )
    for path in ("/api/v1/namespaces/default/configmaps?watch=1", "/api/v1/watch/configmaps?"):
        url = server.url + path + "&timeoutSeconds=1&resourceVersion=0"
        for accept in (
            "application/yaml",
            "application/yaml, */*",
            "application/yaml;q=0.9, */*;q=0.5",
        ):
            refused = admin.get(url, headers={"Accept": accept})
            assert (
                refused.status_code == 406 and refused.headers["Content-Type"] == "application/yaml"
            )
            assert refused.content.decode().replace("\n  ", " ") == (
                f"apiVersion: v1\ncode: 406\nkind: Status\nmessage: '{message}'\nmetadata: {{}}\n"
                "reason: NotAcceptable\nstatus: Failure\n"
            )
        table = admin.get(url, headers={"Accept": "application/yaml;as=Table;v=v1;g=meta.k8s.io"})
        assert (table.status_code, table.headers["Content-Type"]) == (406, "application/json")
        assert table.json() == status(406, "NotAcceptable", message)
        preferred = admin.get(
            url, headers={"Accept": "application/json;q=0.9, application/yaml;q=0.5"}
        )
        assert preferred.status_code == 200
        assert preferred.headers["Content-Type"] == "application/json"
