"""Stock kubectl against the server: the commands a user types on day one."""

from __future__ import annotations

import json

from platform_api.fieldmanager.lastapplied import LAST_APPLIED
from tests.e2e.conftest import Server

MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  labels: {app: web}
data:
  mode: "{mode}"
"""


def test_get_namespaces(server: Server) -> None:
    out = server.kubectl("get", "namespaces").stdout.splitlines()
    assert out[0].split() == ["NAME", "STATUS", "AGE"]
    assert {line.split()[0] for line in out[1:]} >= {
        "default",
        "platform-system",
        "platform-public",
    }


def test_create_get_yaml_apply_delete(server: Server) -> None:
    manifest = MANIFEST.replace("{mode}", "a")
    assert (
        "configmap/web-config created" in server.kubectl("create", "-f", "-", stdin=manifest).stdout
    )
    got = json.loads(server.kubectl("get", "configmap", "web-config", "-o", "json").stdout)
    assert got["data"] == {"mode": "a"} and got["metadata"]["labels"] == {"app": "web"}
    yaml_out = server.kubectl("get", "cm", "web-config", "-o", "yaml").stdout
    assert "name: web-config" in yaml_out and "mode: a" in yaml_out
    listed = server.kubectl("get", "cm", "-l", "app=web", "-o", "name").stdout.split()
    assert listed == ["configmap/web-config"]
    # apply creates what does not exist yet
    second = manifest.replace("web-config", "web-config-2")
    assert (
        "configmap/web-config-2 created" in server.kubectl("apply", "-f", "-", stdin=second).stdout
    )
    applied = json.loads(server.kubectl("get", "cm", "web-config-2", "-o", "json").stdout)
    assert "kubectl.kubernetes.io/last-applied-configuration" in applied["metadata"]["annotations"]
    assert "unchanged" in server.kubectl("apply", "-f", "-", stdin=second).stdout
    result = server.kubectl("delete", "configmap", "web-config", "web-config-2")
    assert 'configmap "web-config" deleted' in result.stdout
    missing = server.kubectl("get", "cm", "web-config", check=False)
    assert missing.returncode == 1
    assert 'configmaps "web-config" not found' in missing.stderr


def test_errors_are_shown_as_kube_does(server: Server) -> None:
    bad = server.kubectl(
        "create",
        "-f",
        "-",
        stdin=MANIFEST.replace("web-config", "Bad_Name").replace("{mode}", "x"),
        check=False,
    )
    assert bad.returncode == 1
    assert (
        'The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"'
        in bad.stderr
    )


def test_api_resources(server: Server) -> None:
    lines = server.kubectl("api-resources").stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["configmaps"][1:] == ["cm", "v1", "true", "ConfigMap"]
    assert rows["roles"][1:] == ["rbac.authorization.platform.io/v1", "true", "Role"]
    assert rows["deployments"][1:] == ["deploy", "apps/v1", "true", "Deployment"]


def test_explain(server: Server) -> None:
    out = server.kubectl("explain", "deployment.spec.replicas").stdout
    assert "KIND:       Deployment" in out and "FIELD: replicas <integer>" in out
    out = server.kubectl(
        "explain", "roles.rules", "--api-version", "rbac.authorization.platform.io/v1"
    ).stdout
    assert "FIELD: rules <[]PolicyRule>" in out


def test_explain_from_openapi_v2(server: Server) -> None:
    """``plaintext-openapiv2`` reads /openapi/v2 as Protobuf, as client-go's discovery
    ``OpenAPISchema()`` does (Argo CD, Helm): references resolve, descriptions join."""
    out = server.kubectl(
        "explain", "deployment.spec.strategy", "--output=plaintext-openapiv2"
    ).stdout
    assert out.splitlines()[:9] == [
        "KIND:     Deployment",
        "VERSION:  apps/v1",
        "",
        "RESOURCE: strategy <Object>",
        "",
        "DESCRIPTION:",
        "     The deployment strategy to use to replace existing pods with new ones.",
        "",
        "     DeploymentStrategy describes how to replace existing pods with new ones.",
    ]
    assert "   rollingUpdate\t<Object>" in out and "   type\t<string>" in out


def test_server_side_field_validation(server: Server) -> None:
    manifest = (
        MANIFEST.replace("{mode}", "a")
        .replace("data:", "bogus: 1\ndata:")
        .replace("web-config", "strict-cm")
    )
    result = server.kubectl("create", "-f", "-", stdin=manifest, check=False)
    assert result.returncode == 1
    assert 'strict decoding error: unknown field "bogus"' in result.stderr


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.0
      - name: side
        image: busybox:1.0
"""


def test_apply_updates_existing_objects_with_strategic_merge(server: Server) -> None:
    server.kubectl("apply", "-f", "-", stdin=DEPLOYMENT)
    changed = DEPLOYMENT.replace("nginx:1.0", "nginx:2.0").replace("replicas: 1", "replicas: 3")
    changed = changed.replace("      - name: side\n        image: busybox:1.0\n", "")
    assert (
        "deployment.apps/web configured" in server.kubectl("apply", "-f", "-", stdin=changed).stdout
    )
    got = json.loads(server.kubectl("get", "deployment", "web", "-o", "json").stdout)
    assert got["spec"]["replicas"] == 3
    assert [(c["name"], c["image"]) for c in got["spec"]["template"]["spec"]["containers"]] == [
        ("main", "nginx:2.0")
    ]
    assert got["metadata"]["generation"] == 2
    cm = MANIFEST.replace("{mode}", "one").replace("web-config", "applied-cm")
    server.kubectl("apply", "-f", "-", stdin=cm)
    cm2 = cm.replace('mode: "one"', 'mode: "two"\n  extra: "x"').replace(
        "{app: web}", "{app: web, tier: front}"
    )
    assert "configmap/applied-cm configured" in server.kubectl("apply", "-f", "-", stdin=cm2).stdout
    applied = json.loads(server.kubectl("get", "cm", "applied-cm", "-o", "json").stdout)
    assert applied["data"] == {"mode": "two", "extra": "x"}
    assert applied["metadata"]["labels"] == {"app": "web", "tier": "front"}


def test_patch_types(server: Server) -> None:
    server.kubectl(
        "apply", "-f", "-", stdin=DEPLOYMENT.replace("name: web\n", "name: patched\n", 1)
    )
    patch = '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox:2.0"}]}}}}'
    server.kubectl("patch", "deployment", "patched", "--type=strategic", "-p", patch)
    got = json.loads(server.kubectl("get", "deployment", "patched", "-o", "json").stdout)
    images = {c["name"]: c["image"] for c in got["spec"]["template"]["spec"]["containers"]}
    assert images == {"main": "nginx:1.0", "side": "busybox:2.0"}
    server.kubectl(
        "patch", "deployment", "patched", "--type=merge", "-p", '{"spec":{"replicas":5}}'
    )
    server.kubectl(
        "patch",
        "deployment",
        "patched",
        "--type=json",
        "-p",
        '[{"op":"replace","path":"/spec/replicas","value":4}]',
    )
    got = json.loads(server.kubectl("get", "deployment", "patched", "-o", "json").stdout)
    assert got["spec"]["replicas"] == 4
    bad = server.kubectl(
        "patch",
        "deployment",
        "patched",
        "--type=json",
        "-p",
        '[{"op":"test","path":"/spec/replicas","value":9}]',
        check=False,
    )
    assert bad.returncode == 1
    assert "the server rejected our request due to an error in our request" in bad.stderr
    label = server.kubectl("label", "deployment", "patched", "team=blue")
    assert "deployment.apps/patched labeled" in label.stdout


def test_server_side_apply_takes_over_from_client_side_apply(server: Server) -> None:
    """As with kube-apiserver v1.36: no conflict with the last client-side apply, the
    annotation follows the server-side configuration, and a client-side apply after it
    still works from the right base."""
    first = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved}\ndata: {a: '1'}\n"
    second = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved}\ndata: {a: '2', b: '3'}\n"
    server.kubectl("apply", "-f", "-", stdin=first)
    out = server.kubectl("apply", "--server-side", "-f", "-", stdin=second).stdout
    assert out == "configmap/moved serverside-applied\n"
    got = json.loads(server.kubectl("get", "cm", "moved", "-o", "json").stdout)
    assert got["data"] == {"a": "2", "b": "3"}
    assert json.loads(got["metadata"]["annotations"][LAST_APPLIED])["data"] == {"a": "2", "b": "3"}
    managers = json.loads(
        server.kubectl("get", "cm", "moved", "-o", "json", "--show-managed-fields").stdout
    )["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"]) for m in managers] == [
        ("kubectl-last-applied", "Apply"),
        ("kubectl", "Apply"),
    ]
    server.kubectl("apply", "-f", "-", stdin=first)  # back to client-side: b goes
    again = json.loads(server.kubectl("get", "cm", "moved", "-o", "json").stdout)
    assert again["data"] == {"a": "1"}
    # a field changed since that apply (another writer's now) is a conflict again
    server.kubectl("patch", "cm", "moved", "--field-manager", "editor", "-p", '{"data":{"a":"7"}}')
    taken = server.kubectl("apply", "--server-side", "-f", "-", stdin=second, check=False)
    assert taken.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a' in taken.stderr
    server.kubectl("delete", "cm", "moved")
