"""Upstream group names: objects and their managedFields go out in the group asked for,
and come back in under the branded one."""

from __future__ import annotations

from typing import Any

from platform_api.scheme.aliases import Aliases
from platform_api.scheme.catalog import builtin_scheme

ALIASES = Aliases(builtin_scheme(), enabled=True)
BRANDED, UPSTREAM = "rbac.authorization.platform.io", "rbac.authorization.k8s.io"


def entry(manager: str, api_version: str) -> dict[str, Any]:
    return {"manager": manager, "operation": "Update", "apiVersion": api_version}


def role(api_version: str | None, *entries: dict[str, Any]) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "r", "managedFields": list(entries)}}
    if api_version:
        obj["apiVersion"] = api_version
    return obj


def test_an_object_and_its_owners_go_out_in_the_group_asked() -> None:
    stored = role(f"{BRANDED}/v1", entry("a", f"{BRANDED}/v1"), entry("b", "v1"))
    out = ALIASES.rename(stored, UPSTREAM)
    assert out == role(f"{UPSTREAM}/v1", entry("a", f"{UPSTREAM}/v1"), entry("b", "v1"))
    assert stored["metadata"]["managedFields"][0]["apiVersion"] == f"{BRANDED}/v1"  # untouched


def test_list_items_name_no_type_but_their_owners_are_renamed() -> None:
    listed = {"apiVersion": f"{BRANDED}/v1", "kind": "RoleList"}
    listed["items"] = [role(None, entry("a", f"{BRANDED}/v1"))]
    out = ALIASES.rename(listed, UPSTREAM)
    assert out["apiVersion"] == f"{UPSTREAM}/v1"
    assert out["items"] == [role(None, entry("a", f"{UPSTREAM}/v1"))]


def test_other_groups_and_no_alias_change_nothing() -> None:
    stored = role("apps/v1", entry("a", "apps/v1"))
    assert ALIASES.rename(stored, UPSTREAM) is stored
    assert ALIASES.rename(stored, "") is stored


def test_owners_sent_in_an_upstream_name_are_kept_under_the_branded_one() -> None:
    body = role(f"{BRANDED}/v1", entry("a", f"{UPSTREAM}/v1"), entry("b", "apps/v1"), "junk")  # type: ignore[arg-type]
    ALIASES.canonical_managed_fields(body)
    assert body["metadata"]["managedFields"] == [
        entry("a", f"{BRANDED}/v1"),
        entry("b", "apps/v1"),
        "junk",
    ]
    off = Aliases(builtin_scheme(), enabled=False)
    body = role(f"{BRANDED}/v1", entry("a", f"{UPSTREAM}/v1"))
    off.canonical_managed_fields(body)
    assert body["metadata"]["managedFields"] == [entry("a", f"{UPSTREAM}/v1")]
