"""Stock clients on custom resources: kubectl's everyday commands and the Python DynamicClient."""

from __future__ import annotations

import json
import time

import requests
import yaml
from kubernetes import config, dynamic
from kubernetes.client import api_client

from tests.e2e.conftest import Server
from tests.e2e.crds import CRDS, crd_manifest, delete_crd, version

WIDGET_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "description": "How big the widget is."},
                "color": {"type": "string"},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "port": {"type": "integer"},
                        },
                    },
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "phase": {"type": "string"},
                "replicas": {"type": "integer"},
                "selector": {"type": "string"},
            },
        },
    },
}


def widget_crd(group: str) -> dict:
    columns = [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
    ]
    subresources = {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.size",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        },
    }
    manifest = crd_manifest(
        group,
        kind="Widget",
        plural="widgets",
        versions=[
            version(
                "v1",
                schema=WIDGET_SCHEMA,
                additionalPrinterColumns=columns,
                subresources=subresources,
                selectableFields=[{"jsonPath": ".spec.color"}],
            )
        ],
        short=["wd"],
    )
    manifest["spec"]["names"]["categories"] = ["all", "gadgets"]
    return manifest


def widget(name: str, group: str, **spec: object) -> str:
    return yaml.safe_dump(
        {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}
    )


def test_kubectl_on_a_new_type(server: Server) -> None:
    group = "kubectl.example.com"
    server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(widget_crd(group)))
    out = server.kubectl(
        "wait", "--for", "condition=Established", f"crd/widgets.{group}", "--timeout=10s"
    ).stdout
    assert "condition met" in out
    ns = "kubectl-cr"
    server.kubectl("create", "namespace", ns, check=False)
    server.kubectl("-n", ns, "apply", "-f", "-", stdin=widget("w1", group, size=2, color="red"))
    server.kubectl("-n", ns, "apply", "-f", "-", stdin=widget("w2", group, size=5, color="blue"))
    rows = server.kubectl("-n", ns, "get", "widgets").stdout.splitlines()
    assert rows[0].split() == ["NAME", "SIZE", "PHASE"]  # Age only when no columns are given
    assert rows[1].split()[:2] == ["w1", "2"]
    wide = server.kubectl("-n", ns, "get", "wd", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "SIZE", "PHASE", "COLOR"]
    assert server.kubectl("-n", ns, "get", "gadgets", "-o", "name").stdout.split() == [
        f"widget.{group}/w1",
        f"widget.{group}/w2",
    ]
    selected = server.kubectl(
        "-n", ns, "get", "widgets", "--field-selector", "spec.color=blue", "-o", "name"
    )
    assert selected.stdout.split() == [f"widget.{group}/w2"]
    explained = server.kubectl("explain", "widgets.spec.size").stdout
    assert "How big the widget is." in explained
    explained = server.kubectl(
        "explain", "widgets.spec.size", "--output=plaintext-openapiv2"
    ).stdout  # the custom resource's schema is in /openapi/v2's Protobuf too
    assert "How big the widget is." in explained
    server.kubectl("-n", ns, "scale", "widget", "w1", "--replicas=4")
    got = json.loads(server.kubectl("-n", ns, "get", "widget", "w1", "-o", "json").stdout)
    assert got["spec"]["size"] == 4 and got["metadata"]["generation"] == 2
    server.kubectl(
        "-n", ns, "patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"color":"x"}}'
    )
    server.kubectl(
        "-n",
        ns,
        "patch",
        "widget",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"phase":"Ready"}}',
    )
    rows = server.kubectl("-n", ns, "get", "widget", "w1").stdout.splitlines()
    assert rows[1].split()[:3] == ["w1", "4", "Ready"]
    strategic = server.kubectl(
        "-n", ns, "patch", "widget", "w1", "--type=strategic", "-p", "{}", check=False
    )
    assert strategic.returncode == 1
    assert "application/strategic-merge-patch+json is not supported" in strategic.stderr
    server.kubectl("delete", "crd", f"widgets.{group}")
    gone = server.kubectl("-n", ns, "get", "widgets", check=False)
    assert gone.returncode == 1


def test_server_side_apply_uses_the_list_markers(server: Server) -> None:
    group = "ssa.example.com"
    server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(widget_crd(group)))
    server.kubectl("wait", "--for", "condition=Established", f"crd/widgets.{group}")
    first = widget("w", group, ports=[{"name": "http", "port": 80}])
    second = widget("w", group, ports=[{"name": "admin", "port": 9000}])
    server.kubectl("apply", "--server-side", "--field-manager", "a", "-f", "-", stdin=first)
    server.kubectl("apply", "--server-side", "--field-manager", "b", "-f", "-", stdin=second)
    shown = server.kubectl("get", "widget", "w", "-o", "json", "--show-managed-fields")
    got = json.loads(shown.stdout)
    # A list-type map merges the managers' items by key instead of replacing the list.
    assert got["spec"]["ports"] == [{"name": "http", "port": 80}, {"name": "admin", "port": 9000}]
    managers = {m["manager"] for m in got["metadata"]["managedFields"]}
    assert managers == {"a", "b"}
    clash = widget("w", group, ports=[{"name": "http", "port": 81}])
    r = server.kubectl(
        "apply", "--server-side", "--field-manager", "b", "-f", "-", stdin=clash, check=False
    )
    assert r.returncode == 1 and "conflict" in r.stderr.lower()
    server.kubectl("delete", "crd", f"widgets.{group}")


def test_the_python_dynamic_client(server: Server, admin: requests.Session) -> None:
    group = "dynamic.example.com"
    r = admin.post(server.url + CRDS, json=widget_crd(group))
    assert r.status_code == 201
    client = dynamic.DynamicClient(
        api_client.ApiClient(configuration=config.load_kube_config(str(server.kubeconfig)))
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            widgets = client.resources.get(api_version=f"{group}/v1", kind="Widget")
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            client.resources.invalidate_cache()
            time.sleep(0.1)
    body = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": "dyn"},
        "spec": {"size": 1},
    }
    created = widgets.create(body=body, namespace="default")
    assert created.metadata.name == "dyn" and created.spec.size == 1
    patched = widgets.patch(
        name="dyn",
        namespace="default",
        body={"spec": {"size": 3}},
        content_type="application/merge-patch+json",
    )
    assert patched.spec.size == 3
    assert [w.metadata.name for w in widgets.get(namespace="default").items] == ["dyn"]
    widgets.delete(name="dyn", namespace="default")
    delete_crd(admin, server, f"widgets.{group}")


def test_kubectl_lists_objects_whose_columns_hold_other_types(server: Server) -> None:
    """A column's value of another type, or a date that does not parse, is printed as
    kube prints it (empty, ``<invalid>``): one object cannot break the list (it was a
    500 for every reader here)."""
    group = "columns.example.com"
    columns = [
        {"name": "Due", "type": "date", "jsonPath": ".spec.due"},
        {"name": "Count", "type": "integer", "jsonPath": ".spec.count"},
    ]
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    manifest = crd_manifest(
        group, versions=[version("v1", schema=schema, additionalPrinterColumns=columns)]
    )
    server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(manifest))
    server.kubectl("wait", "--for", "condition=Established", f"crd/crontabs.{group}")
    for name, spec in (
        ("good", {"due": "2020-01-01T00:00:00Z", "count": 3}),
        ("odd", {"due": "tomorrow", "count": "three"}),
    ):
        body = {"apiVersion": f"{group}/v1", "kind": "CronTab", "metadata": {"name": name}}
        server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump({**body, "spec": spec}))
    rows = [r.split() for r in server.kubectl("get", f"crontabs.{group}").stdout.splitlines()]
    assert rows[0] == ["NAME", "DUE", "COUNT"]
    assert rows[1][0] == "good" and rows[1][1][0].isdigit() and rows[1][2] == "3"  # an age
    assert rows[2] == ["odd", "<invalid>"]  # an integer column given a string: empty
    server.kubectl("delete", "crd", f"crontabs.{group}")
