"""CustomResourceDefinition manifests and waits shared by the custom-resource tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import requests

from tests.e2e.conftest import Server

CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions"
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "cronSpec": {"type": "string"},
                "image": {"type": "string"},
                "replicas": {"type": "integer"},
            },
        },
        "status": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}},
        },
    },
}


def crd_manifest(
    group: str,
    kind: str = "CronTab",
    plural: str = "crontabs",
    scope: str = "Namespaced",
    versions: list[dict[str, Any]] | None = None,
    short: list[str] | None = None,
) -> dict[str, Any]:
    names: dict[str, Any] = {"plural": plural, "singular": kind.lower(), "kind": kind}
    if short:
        names["shortNames"] = short
    return {
        "apiVersion": "apiextensions.platform.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": names,
            "versions": versions or [version("v1")],
        },
    }


def version(
    name: str,
    storage: bool = True,
    served: bool = True,
    schema: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "name": name,
        "served": served,
        "storage": storage,
        "schema": {"openAPIV3Schema": schema or SCHEMA},
        **extra,
    }


def eventually(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.02)
    raise AssertionError("condition not reached")


def condition(crd: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in crd.get("status", {}).get("conditions") or []:
        if cond["type"] == kind:
            return dict(cond)
    return None


def create_crd(admin: requests.Session, server: Server, manifest: dict[str, Any]) -> dict:
    """Create a CRD and wait until it is Established (its types are served)."""
    r = admin.post(server.url + CRDS, json=manifest)
    assert r.status_code == 201, r.text
    name = manifest["metadata"]["name"]

    def established() -> dict | None:
        crd = admin.get(f"{server.url}{CRDS}/{name}").json()
        cond = condition(crd, "Established")
        return crd if cond and cond["status"] == "True" else None

    created: dict = eventually(established)
    return created


def delete_crd(admin: requests.Session, server: Server, name: str) -> None:
    admin.delete(f"{server.url}{CRDS}/{name}")
    eventually(lambda: admin.get(f"{server.url}{CRDS}/{name}").status_code == 404)


def ns_path(group: str, namespace: str, plural: str = "crontabs", v: str = "v1") -> str:
    return f"/apis/{group}/{v}/namespaces/{namespace}/{plural}"


def crontab(name: str, group: str, v: str = "v1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/{v}",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": spec or {"cronSpec": "* * * * */5", "image": "cron:1", "replicas": 1},
    }


def namespace(admin: requests.Session, server: Server, name: str) -> str:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert admin.post(server.url + "/api/v1/namespaces", json=body).status_code == 201
    return name
