"""The default roles and bindings of a real server: contents, aggregation, restarts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import requests

from platform_api.authorization.rbac.bootstrap import cluster_role_bindings, cluster_roles
from platform_api.authorization.rbac.reconcile import default_policy
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.test_deletion import eventually

GROUP = "rbac.authorization.platform.io"
RBAC = f"/apis/{GROUP}/v1"
AUTOUPDATE = f"{GROUP}/autoupdate"
EXPECTED = {o["metadata"]["name"]: o for o in cluster_roles() + cluster_role_bindings()}
Obj = dict[str, Any]


def get(admin: requests.Session, server: Server, path: str) -> Obj:
    r = admin.get(server.url + RBAC + path)
    assert r.status_code == 200, r.text
    obj: Obj = r.json()
    return obj


def role_rules(admin: requests.Session, server: Server, name: str) -> list[Obj]:
    rules: list[Obj] = get(admin, server, f"/clusterroles/{name}").get("rules") or []
    return rules


def aggregated(admin: requests.Session, server: Server) -> bool:
    """``view`` into ``edit`` into ``admin``: done once ``admin`` holds all of it."""
    view = role_rules(admin, server, "view")
    edit = role_rules(admin, server, "edit")
    admin_rules = role_rules(admin, server, "admin")
    return (
        view == role_rules(admin, server, "system:aggregate-to-view")
        and edit == role_rules(admin, server, "system:aggregate-to-edit") + view
        and admin_rules == edit + role_rules(admin, server, "system:aggregate-to-admin")
    )


def versions(admin: requests.Session, server: Server) -> dict[str, str]:
    out = {}
    for obj in default_policy():
        plural = {"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings"}.get(
            obj["kind"]
        )
        if plural is None:
            continue
        name = obj["metadata"]["name"]
        out[f"{plural}/{name}"] = get(admin, server, f"/{plural}/{name}")["metadata"][
            "resourceVersion"
        ]
    return out


def test_defaults_have_kubes_contents(fresh_server: Server) -> None:
    server = fresh_server
    admin = session_for(server, cert=server.admin_cert)
    ready = admin.get(server.url + "/readyz?verbose")
    assert "[+]poststarthook/rbac/bootstrap-roles ok" in ready.text
    cluster_admin = get(admin, server, "/clusterroles/cluster-admin")
    assert cluster_admin["rules"] == [
        {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
        {"verbs": ["*"], "nonResourceURLs": ["*"]},
    ]
    assert cluster_admin["metadata"]["labels"] == {"platform.io/bootstrapping": "rbac-defaults"}
    assert cluster_admin["metadata"]["annotations"] == {AUTOUPDATE: "true"}
    for name in ("admin", "view"):
        obj = get(admin, server, f"/clusterroles/{name}")
        assert obj["aggregationRule"] == EXPECTED[name]["aggregationRule"]
        assert obj["metadata"]["labels"] == EXPECTED[name]["metadata"]["labels"]
    eventually(lambda: aggregated(admin, server))
    view = role_rules(admin, server, "view")
    assert view == EXPECTED["system:aggregate-to-view"]["rules"]
    assert not any("secrets" in r.get("resources", []) for r in view)
    verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    bindings = {"verbs": verbs, "apiGroups": [GROUP], "resources": ["rolebindings", "roles"]}
    assert bindings in role_rules(admin, server, "admin")
    basic = get(admin, server, "/clusterrolebindings/system:basic-user")
    assert basic["roleRef"] == {
        "apiGroup": GROUP,
        "kind": "ClusterRole",
        "name": "system:basic-user",
    }
    assert basic["subjects"] == [
        {"kind": "Group", "apiGroup": GROUP, "name": "system:authenticated"}
    ]


def test_a_labelled_role_joins_view(fresh_server: Server) -> None:
    server = fresh_server
    admin = session_for(server, cert=server.admin_cert)
    eventually(lambda: aggregated(admin, server))
    widgets = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "widget-viewer", "labels": {f"{GROUP}/aggregate-to-view": "true"}},
        "rules": [widgets],
    }
    assert admin.post(server.url + RBAC + "/clusterroles", json=body).status_code == 201
    eventually(lambda: widgets in role_rules(admin, server, "view"))
    eventually(lambda: widgets in role_rules(admin, server, "admin"))
    r = admin.delete(server.url + RBAC + "/clusterroles/widget-viewer")
    assert r.status_code == 200
    eventually(lambda: widgets not in role_rules(admin, server, "view"))


def test_a_restart_rewrites_nothing_and_respects_autoupdate_false(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data")
    try:
        admin = session_for(server, cert=server.admin_cert)
        eventually(lambda: aggregated(admin, server))
        pinned = get(admin, server, "/clusterroles/system:discovery")
        pinned["metadata"]["annotations"][AUTOUPDATE] = "false"
        pinned["rules"] = [{"verbs": ["get"], "nonResourceURLs": ["/version"]}]
        r = admin.put(server.url + RBAC + "/clusterroles/system:discovery", json=pinned)
        assert r.status_code == 200, r.text
        before = versions(admin, server)
    finally:
        server.stop()
    server = start_server(tmp_path / "data")
    try:
        admin = session_for(server, cert=server.admin_cert)
        assert aggregated(admin, server)
        assert versions(admin, server) == before
        kept = get(admin, server, "/clusterroles/system:discovery")
        assert kept["rules"] == [{"verbs": ["get"], "nonResourceURLs": ["/version"]}]
    finally:
        server.stop()


def test_gates_turned_off_take_their_pages_and_rules_away(tmp_path: Path) -> None:
    """kube installs /flagz and /statusz only while their gates are on, and its default
    policy follows the gates: system:monitoring names neither page then; turning
    ClusterTrustBundle on makes the trust-bundle roles and binding."""
    flipped = "--feature-gates=ComponentFlagz=false,ComponentStatusz=false,ClusterTrustBundle=true"
    server = start_server(tmp_path / "data", flipped)
    try:
        admin = session_for(server, cert=server.admin_cert)
        for page in ("/flagz", "/statusz"):
            gone = admin.get(server.url + page)
            assert (gone.status_code, gone.text) == (404, "404 page not found\n")
        listed = admin.get(server.url + "/").json()["paths"]
        assert "/flagz" not in listed and "/statusz" not in listed and "/livez" in listed
        (urls,) = [
            r for r in role_rules(admin, server, "system:monitoring") if "nonResourceURLs" in r
        ]
        assert "/flagz" not in urls["nonResourceURLs"] and "/metrics" in urls["nonResourceURLs"]
        discovery = "system:cluster-trust-bundle-discovery"
        assert role_rules(admin, server, discovery) == [
            {
                "verbs": ["get", "list", "watch"],
                "apiGroups": ["certificates.platform.io"],
                "resources": ["clustertrustbundles"],
            }
        ]
        bound = get(admin, server, f"/clusterrolebindings/{discovery}")
        assert bound["subjects"] == [
            {"kind": "Group", "apiGroup": GROUP, "name": "system:serviceaccounts"}
        ]
    finally:
        server.stop()
