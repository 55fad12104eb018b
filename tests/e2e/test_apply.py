"""Server-side apply over HTTP and with ``kubectl apply --server-side``."""

from __future__ import annotations

import json

import pytest
import requests
import yaml

from tests.e2e.answers import status as status_body
from tests.e2e.conftest import Server
from tests.e2e.test_http import status
from tests.e2e.test_list import make_namespace
from tests.e2e.test_patch_races import in_parallel

APPLY = {"Content-Type": "application/apply-patch+yaml"}


def cm(name: str, data: dict[str, str]) -> str:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}
    return yaml.safe_dump(body)


def test_apply_creates_then_conflicts_then_forces(server: Server, admin: requests.Session) -> None:
    base = server.url + make_namespace(admin, server, "ssa-http")
    url = base + "/one"
    r = admin.patch(url + "?fieldManager=alice", data=cm("one", {"a": "1"}), headers=APPLY)
    assert r.status_code == 201, r.text
    entry = r.json()["metadata"]["managedFields"][0]
    assert {k: entry[k] for k in ("manager", "operation", "apiVersion", "fieldsType")} == {
        "manager": "alice",
        "operation": "Apply",
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
    }
    assert entry["fieldsV1"] == {"f:data": {"f:a": {}}}
    version = r.json()["metadata"]["resourceVersion"]
    # ObjectMeta's fields in Go's order, as for a create (kube v1.36's answer)
    order = ["name", "namespace", "uid", "resourceVersion", "creationTimestamp", "managedFields"]
    assert list(r.json()["metadata"]) == order
    assert list(admin.get(url).json()["metadata"]) == order

    r = admin.patch(url + "?fieldManager=bob", data=cm("one", {"a": "2"}), headers=APPLY)
    assert r.status_code == 409
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "alice": .data.a',
        "reason": "Conflict",
        "details": {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "alice"',
                    "field": ".data.a",
                }
            ]
        },
        "code": 409,
    }
    r = admin.patch(url + "?fieldManager=alice", data=cm("one", {"a": "1"}), headers=APPLY)
    assert r.status_code == 200 and r.json()["metadata"]["resourceVersion"] == version  # no-op

    r = admin.patch(url + "?fieldManager=bob&force=true", data=cm("one", {"a": "2"}), headers=APPLY)
    assert r.status_code == 200 and r.json()["data"] == {"a": "2"}
    assert [e["manager"] for e in r.json()["metadata"]["managedFields"]] == ["bob"]


def test_apply_option_errors(server: Server, admin: requests.Session) -> None:
    base = server.url + make_namespace(admin, server, "ssa-options")
    r = admin.patch(base + "/x", data=cm("x", {}), headers=APPLY)
    assert r.status_code == 422
    assert r.json()["message"] == (
        'PatchOptions.meta.platform.io "" is invalid: fieldManager: Required value: '
        "is required for apply patch"
    )
    r = admin.patch(
        base + "/x?force=true",
        json={"data": {}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 422 and r.json()["reason"] == "Invalid"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "managedFields": []}}
    r = admin.patch(base + "/x?fieldManager=m", data=json.dumps(body), headers=APPLY)
    assert (r.status_code, r.json()["message"]) == (400, "metadata.managedFields must be nil")
    # a configuration of another type: kube's field manager names the type it got
    for version, kind, named in (
        ("v1", "Secret", "/v1, Kind=Secret"),
        ("v2", "ConfigMap", "/v2, Kind=ConfigMap"),
        ("apps/v1", "ConfigMap", "apps/v1, Kind=ConfigMap"),
        (None, "ConfigMap", "/, Kind=ConfigMap"),
        ("v1", None, "/v1, Kind="),
        ("a/b/c", "ConfigMap", "/, Kind="),
    ):
        other = {"apiVersion": version, "kind": kind, "metadata": {"name": "x"}}
        other = {k: v for k, v in other.items() if v is not None}
        r = admin.patch(base + "/x?fieldManager=m", data=json.dumps(other), headers=APPLY)
        assert (r.status_code, r.json()["message"]) == (400, f"invalid object type: {named}")
    # kube v1.36's field manager refuses a field the schema lacks whatever the level: a
    # bare 500 (no reason), the path as structured-merge-diff prints it.
    for level in ("Strict", "Ignore"):
        r = admin.patch(
            base + f"/x?fieldManager=m&fieldValidation={level}",
            data=cm("x", {}) + "bogus: 1\n",
            headers=APPLY,
        )
        assert (r.status_code, r.json()) == (
            500,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "failed to create typed patch object (/x; /v1, Kind=ConfigMap): "
                ".bogus: field not declared in schema",
                "code": 500,
            },
        )
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": base.rsplit("/", 2)[-2]},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "x", "foo": 1}]},
            },
        },
    }
    deployments = base.replace("/api/v1/", "/apis/apps/v1/").replace("configmaps", "deployments")
    r = admin.patch(deployments + "/d?fieldManager=m", json=deployment, headers=APPLY)
    assert r.json()["message"] == (
        f"failed to create typed patch object ({deployment['metadata']['namespace']}/d; "
        'apps/v1, Kind=Deployment): .spec.template.spec.containers[name="c"].foo: field not '
        "declared in schema"
    )
    assert admin.get(base + "/x").status_code == 404  # nothing half-written


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # each as kube-apiserver v1.36 answered it: no object at all is one of no type;
        # another JSON value is Go's refusal to read it into a map
        (b"", "invalid object type: /, Kind="),
        (b"# only a comment\n", "invalid object type: /, Kind="),
        (b"null", "invalid object type: /, Kind="),
        (b"- a", "array"),
        (b"5", "number"),
        (b'"x"', "string"),
        (b"true", "bool"),
    ],
)
def test_a_configuration_that_is_no_object(
    server: Server, admin: requests.Session, body: bytes, message: str
) -> None:
    base = server.url + "/api/v1/namespaces/default/configmaps"
    r = admin.patch(base + "/none?fieldManager=m", data=body, headers=APPLY)
    if not message.startswith("invalid"):
        message = (
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot "
            f"unmarshal {message} into Go value of type map[string]interface {{}}"
        )
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (400, "BadRequest", message)


def test_an_applied_configuration_must_name_what_it_creates(
    server: Server, admin: requests.Session
) -> None:
    base = server.url + make_namespace(admin, server, "ssa-names")
    unnamed = "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n"
    r = admin.patch(base + "/new?fieldManager=m", data=unnamed, headers=APPLY)
    assert (r.status_code, r.json()["message"]) == (
        400,
        "the name of the object (new based on URL) was undeterminable: name must be provided",
    )
    assert admin.get(base + "/new").status_code == 404
    made = admin.post(base, json={"metadata": {"name": "old"}})
    assert made.status_code == 201
    r = admin.patch(base + "/old?fieldManager=m", data=unnamed, headers=APPLY)
    assert (r.status_code, r.json()["data"]) == (200, {"a": "b"})  # the live object's name
    # a configuration naming a uid is for an object that exists: kube's 409, before the
    # name is looked at; an existing object's uid cannot change (422)
    r = admin.patch(
        base + "/new?fieldManager=m", data=unnamed + "metadata: {uid: abc}\n", headers=APPLY
    )
    why = "uid mismatch: the provided object specified uid abc, and no existing object was found"
    assert (r.status_code, r.json()) == (
        409,
        status_body(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on configmaps "new": {why}',
            {"name": "new", "kind": "configmaps"},
        ),
    )
    assert admin.get(base + "/new").status_code == 404
    # a name that is no string is none in the field manager's words
    numbered = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 5}\n"
    r = admin.patch(base + "/old?fieldManager=m", data=numbered, headers=APPLY)
    assert r.json()["message"] == (
        "failed to create typed patch object (/; /v1, Kind=ConfigMap): .metadata.name: "
        "expected string, got &value.valueUnstructured{Value:5}"
    )


def test_updates_record_ownership_and_reset(server: Server, admin: requests.Session) -> None:
    base = server.url + make_namespace(admin, server, "ssa-update")
    created = admin.post(
        base,
        json={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "u"},
            "data": {"a": "1"},
        },
        headers={"User-Agent": "maker/1.0"},
    ).json()
    assert created["metadata"]["managedFields"][0]["manager"] == "maker"
    assert created["metadata"]["managedFields"][0]["fieldsV1"] == {"f:data": {".": {}, "f:a": {}}}
    merge = {"Content-Type": "application/merge-patch+json"}
    r = admin.patch(base + "/u?fieldManager=patcher", json={"data": {"b": "2"}}, headers=merge)
    assert [e["manager"] for e in r.json()["metadata"]["managedFields"]] == ["maker", "patcher"]
    r = admin.patch(base + "/u", json={"metadata": {"managedFields": [{}]}}, headers=merge)
    assert r.status_code == 200 and "managedFields" not in r.json()["metadata"]
    # kube's skipNonAppliedManager: later Updates record nothing, until an Apply
    server.kubectl("label", "configmap", "u", "-n", "ssa-update", "l=v")
    server.kubectl("patch", "configmap", "u", "-n", "ssa-update", "-p", '{"data":{"c":"3"}}')
    assert "managedFields" not in admin.get(base + "/u").json()["metadata"]
    applied = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: u, namespace: ssa-update}\n"
    server.kubectl("apply", "--server-side", "-f", "-", stdin=applied + "data: {d: '4'}\n")
    entries = admin.get(base + "/u").json()["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"], e["fieldsV1"]) for e in entries] == [
        ("kubectl", "Apply", {"f:data": {"f:d": {}}}),
        (
            "before-first-apply",
            "Update",
            {
                "f:data": {".": {}, "f:a": {}, "f:b": {}, "f:c": {}},
                "f:metadata": {"f:labels": {".": {}, "f:l": {}}},
            },
        ),
    ]
    # a built-in kind's empty list is a reset too (Go decodes it as an empty slice)
    r = admin.patch(base + "/u", json={"metadata": {"managedFields": []}}, headers=merge)
    assert r.status_code == 200 and "managedFields" not in r.json()["metadata"]


def test_a_writer_owns_what_it_sent_not_what_the_server_filled_in(
    server: Server, admin: requests.Session
) -> None:
    """kube records ownership before admission and the kind's preparation: a Service's
    allocated cluster IPs and families are nobody's (kube's answer to ``kubectl create
    service clusterip s1 --tcp=80:8080``)."""
    base = server.url + make_namespace(admin, server, "ssa-owners").replace(
        "configmaps", "services"
    )
    spec = {"ports": [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}]}
    spec |= {"selector": {"app": "s1"}, "type": "ClusterIP"}
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s1"}, "spec": spec}
    body["metadata"]["labels"] = {"app": "s1"}
    made = admin.post(base + "?fieldManager=kubectl-create", json=body)
    assert made.status_code == 201
    assert made.json()["spec"]["clusterIPs"]  # filled in by the server
    [entry] = made.json()["metadata"]["managedFields"]
    port = 'k:{"port":80,"protocol":"TCP"}'
    assert entry["fieldsV1"] == {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:internalTrafficPolicy": {},
            "f:ports": {
                ".": {},
                port: {".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}},
            },
            "f:selector": {},
            "f:sessionAffinity": {},
            "f:type": {},
        },
    }


def test_concurrent_applies_lose_nothing(server: Server, admin: requests.Session) -> None:
    base = server.url + make_namespace(admin, server, "ssa-race")
    bare = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "r"}})
    assert admin.patch(base + "/r?fieldManager=init", data=bare, headers=APPLY).ok
    failures: list[int] = []

    def worker(session: requests.Session, i: int) -> None:
        for j in range(5):
            r = session.patch(
                f"{base}/r?fieldManager=w{i}", data=cm("r", {f"k{i}": str(j)}), headers=APPLY
            )
            if r.status_code != 200:
                failures.append(r.status_code)

    in_parallel(server, 6, worker)
    assert failures == []
    final = admin.get(base + "/r").json()
    assert final["data"] == {f"k{i}": "4" for i in range(6)}


def test_an_applied_empty_map_is_owned_and_conflicts(
    server: Server, admin: requests.Session
) -> None:
    """kube v1.36 (reference): ``data: {}`` applied is owned as ``f:data`` though Go
    stores no empty map, and another manager's first key conflicts with it."""
    base = server.url + make_namespace(admin, server, "ssa-empty")
    first = admin.patch(base + "/e?fieldManager=init", data=cm("e", {}), headers=APPLY)
    assert first.status_code == 201 and "data" not in first.json()
    assert [m["fieldsV1"] for m in first.json()["metadata"]["managedFields"]] == [{"f:data": {}}]
    second = admin.patch(base + "/e?fieldManager=w0", data=cm("e", {"k0": "0"}), headers=APPLY)
    assert second.status_code == 409
    assert second.json()["message"] == 'Apply failed with 1 conflict: conflict with "init": .data'
    assert second.json()["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "init"', "field": ".data"}
    ]


def test_kubectl_server_side_apply(server: Server, admin: requests.Session) -> None:
    make_namespace(admin, server, "ssa-kubectl")
    manifest = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ssa-kubectl}\n"
        "spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n"
        "    metadata: {labels: {app: web}}\n    spec:\n      containers:\n"
        "      - {name: c, image: nginx}\n      - {name: side, image: busybox}\n"
    )
    out = server.kubectl("apply", "--server-side", "-f", "-", stdin=manifest)
    assert out.stdout.strip() == "deployment.apps/web serverside-applied"
    changed = manifest.replace("replicas: 2", "replicas: 5")
    conflict = server.kubectl(
        "apply", "--server-side", "--field-manager", "ci", "-f", "-", stdin=changed, check=False
    )
    assert conflict.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' in (
        conflict.stderr
    )
    server.kubectl(
        "apply",
        "--server-side",
        "--field-manager",
        "ci",
        "--force-conflicts",
        "-f",
        "-",
        stdin=changed,
    )
    fewer = manifest.replace("      - {name: side, image: busybox}\n", "").replace(
        "  replicas: 2\n", ""
    )
    server.kubectl("apply", "--server-side", "-f", "-", stdin=fewer)
    got = json.loads(
        server.kubectl(
            "get", "deploy", "web", "-n", "ssa-kubectl", "-o", "json", "--show-managed-fields"
        ).stdout
    )
    assert got["spec"]["replicas"] == 5
    # "ci" applied the side container too, so it stays.
    assert [c["name"] for c in got["spec"]["template"]["spec"]["containers"]] == ["c", "side"]
    managers = {e["manager"]: e for e in got["metadata"]["managedFields"]}
    # (and, as in kube, the deployment controller's status and revision writes)
    assert set(managers) - {"kube-controller-manager"} == {"kubectl", "ci"}
    assert "f:replicas" not in managers["kubectl"]["fieldsV1"]["f:spec"]


def test_status_apply_owns_status_and_what_metadata_it_may_change(
    server: Server, admin: requests.Session
) -> None:
    make_namespace(admin, server, "ssa-status")
    base = server.url + "/apis/apps/v1/namespaces/ssa-status/deployments"
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    missing = admin.patch(base + "/d/status?fieldManager=ctl", data=json.dumps(body), headers=APPLY)
    assert (missing.status_code, missing.json()["reason"]) == (404, "NotFound")
    assert admin.patch(base + "/d?fieldManager=me", data=json.dumps(body), headers=APPLY).ok
    status = {**body, "status": {"replicas": 3, "observedGeneration": 1}}
    r = admin.patch(base + "/d/status?fieldManager=ctl", data=json.dumps(status), headers=APPLY)
    assert r.status_code == 200, r.text
    entries = {e["manager"]: e for e in r.json()["metadata"]["managedFields"]}
    assert entries["ctl"]["subresource"] == "status"
    assert entries["ctl"]["fieldsV1"] == {
        "f:status": {"f:observedGeneration": {}, "f:replicas": {}}
    }
    assert r.json()["status"]["replicas"] == 3
    # The metadata a kind's /status may change is its writer's (kube's reset fields):
    # a Deployment's status keeps the old labels, its annotations are the writer's.
    status["metadata"] = {"name": "d", "labels": {"x": "1"}, "annotations": {"y": "2"}}
    r = admin.patch(base + "/d/status?fieldManager=ctl", data=json.dumps(status), headers=APPLY)
    entries = {e["manager"]: e for e in r.json()["metadata"]["managedFields"]}
    assert entries["ctl"]["fieldsV1"] == {
        "f:metadata": {"f:annotations": {"f:y": {}}},
        "f:status": {"f:observedGeneration": {}, "f:replicas": {}},
    }
    assert "labels" not in r.json()["metadata"]


def test_repeated_keys_in_a_configuration_are_reported_by_line(
    server: Server, admin: requests.Session
) -> None:
    """As kube's apply: yaml.v2's strict wording, for YAML and JSON configurations."""
    url = server.url + make_namespace(admin, server, "ssa-dups") + "/dup"
    body = (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\n  name: dup\n"
        b"data:\n  foo: a\n  foo: b\n"
    )
    r = admin.patch(url + "?fieldManager=m&fieldValidation=Strict", data=body, headers=APPLY)
    assert r.status_code == 400
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal "
        'errors:\n  line 5: key "name" already set in map\n  line 8: key "foo" already set in map',
        "reason": "BadRequest",
        "code": 400,
    }
    r = admin.patch(url + "?fieldManager=m&fieldValidation=Warn", data=body, headers=APPLY)
    assert r.status_code == 201, r.text
    assert r.headers["Warning"] == (
        '299 - "line 5: key \\"name\\" already set in map", '
        '299 - "line 8: key \\"foo\\" already set in map"'
    )
    assert r.json()["data"] == {"foo": "b"}
    as_json = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},\n"data":{"foo":"a","foo":"c"}}'
    r = admin.patch(url + "?fieldManager=m&fieldValidation=Strict", data=as_json, headers=APPLY)
    assert r.json()["message"] == (
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
        '  line 2: key "foo" already set in map'
    )
    r = admin.patch(url + "?fieldManager=m&fieldValidation=Ignore", data=as_json, headers=APPLY)
    assert r.status_code == 200
    assert "Warning" not in r.headers


def test_configurations_json_refuses_are_read_as_yaml(
    server: Server, admin: requests.Session
) -> None:
    """kube reads every apply configuration as YAML: a JSON-looking body with a trailing
    comma, a stray closing brace or a bare word applies (upstream's e2e ServerSideApply
    cases send trailing commas); one that is not YAML either gets go-yaml's error."""
    base = server.url + make_namespace(admin, server, "ssa-yaml")
    head = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s"}'
    accepted = {
        "comma": (head + ', "data": {"a": "b",},}', {"a": "b"}),
        "brace": (head + ', "data": {"a": "b"}}}', {"a": "b"}),
        "word": (head + ', "data": {"a": tru}}', {"a": "tru"}),
    }
    for name, (body, data) in accepted.items():
        r = admin.patch(f"{base}/{name}?fieldManager=m", data=body % name, headers=APPLY)
        assert (r.status_code, r.json().get("data")) == (201, data), r.text
    refused = {
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name" "bad"}}': "",
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"}': "line 1: ",
    }
    for body, where in refused.items():
        r = admin.patch(base + "/bad?fieldManager=m", data=body, headers=APPLY)
        assert r.status_code == 400
        message = f"error decoding YAML: error converting YAML to JSON: yaml: {where}"
        assert r.json() == status(400, "BadRequest", message + "did not find expected ',' or '}'")
    assert admin.get(base + "/bad").status_code == 404


def test_an_applier_leaving_a_rolling_update_releases_it_whole(
    server: Server, admin: requests.Session
) -> None:
    """As the reference answered: moving a Deployment from ``rollingUpdate.maxSurge`` to
    ``Recreate`` removes ``rollingUpdate`` with the ``maxUnavailable`` the server
    defaulted in it; a list item released goes whole though another owns a field in it."""
    base = server.url + make_namespace(admin, server, "ssa-prune").replace(
        "configmaps", "deployments"
    ).replace("/api/v1/", "/apis/apps/v1/")
    container = {"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]}
    template = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [container]}}
    spec = {"selector": {"matchLabels": {"app": "a"}}, "template": template}
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    rolling = {**spec, "strategy": {"rollingUpdate": {"maxSurge": 1}}}
    r = admin.patch(base + "/d?fieldManager=a", json={**body, "spec": rolling}, headers=APPLY)
    assert r.status_code == 201, r.text
    env = [{"name": "A", "value": "2"}]
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "env": env}]}}}}
    r = admin.patch(
        base + "/d?fieldManager=b",
        json=patch,
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    plain = {"name": "c", "image": "i"}
    recreate = {**spec, "strategy": {"type": "Recreate"}}
    recreate["template"] = {**template, "spec": {"containers": [plain]}}
    r = admin.patch(base + "/d?fieldManager=a", json={**body, "spec": recreate}, headers=APPLY)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["strategy"] == {"type": "Recreate"}
    assert "env" not in r.json()["spec"]["template"]["spec"]["containers"][0]


def test_an_applier_leaving_a_template_takes_it_whole(
    server: Server, admin: requests.Session
) -> None:
    """An image another manager changed lies in a container the applier releases: the
    container goes whole with it, so the template holds nothing anyone owns and goes
    whole too (the reference's answer, word for word)."""
    make_namespace(admin, server, "ssa-template")
    base = server.url + "/api/v1/namespaces/ssa-template/replicationcontrollers"
    template = {
        "metadata": {"labels": {"app": "s"}},
        "spec": {"containers": [{"name": "b", "image": "x:1"}]},
    }
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "r"}}
    body = {**rc, "spec": {"selector": {"app": "s"}, "template": template}}
    assert admin.patch(base + "/r?fieldManager=m", json=body, headers=APPLY).status_code == 201
    image = {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "x:2"}]}}}}
    smp = {"Content-Type": "application/strategic-merge-patch+json"}
    assert admin.patch(base + "/r?fieldManager=smp", json=image, headers=smp).ok
    r = admin.patch(base + "/r?fieldManager=m", json={**rc, "spec": {}}, headers=APPLY)
    assert (r.status_code, r.json()["message"]) == (
        422,
        'ReplicationController "r" is invalid: [spec.selector: Required value, '
        "spec.template: Required value]",
    )


def test_an_applied_quantity_is_compared_as_written(
    server: Server, admin: requests.Session
) -> None:
    """kube's field manager reads an applied configuration as written: "1024Mi" changes
    a "1Gi" (a conflict with its owner), though the object keeps the canonical form."""
    make_namespace(admin, server, "ssa-quantity")
    base = server.url + "/api/v1/namespaces/ssa-quantity/persistentvolumeclaims"
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "q"}}
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    assert admin.post(base + "?fieldManager=cr", json={**pvc, "spec": spec}).status_code == 201
    config = {**pvc, "spec": {"resources": {"requests": {"storage": "1024Mi"}}}}
    r = admin.patch(base + "/q?fieldManager=m", json=config, headers=APPLY)
    assert (r.status_code, r.json()["message"]) == (
        409,
        'Apply failed with 1 conflict: conflict with "cr" using v1: '
        ".spec.resources.requests.storage",
    )
    r = admin.patch(base + "/q?fieldManager=m&force=true", json=config, headers=APPLY)
    assert r.json()["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    owners = {e["manager"]: e["fieldsV1"] for e in r.json()["metadata"]["managedFields"]}
    assert owners["m"] == {"f:spec": {"f:resources": {"f:requests": {"f:storage": {}}}}}
    assert owners["cr"]["f:spec"]["f:resources"] == {"f:requests": {}}
