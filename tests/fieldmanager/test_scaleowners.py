"""kube's ScaleHandler: the owners of an object's replicas seen from its Scale, and the
Scale's owners after a write folded back.  Each case was answered alike by the reference
kube-apiserver (tests/e2e/test_workloads.py and test_crd_scale_owners.py run them)."""

from __future__ import annotations

from platform_api.fieldmanager.entries import Entry, encode
from platform_api.fieldmanager.scaleowners import (
    SCALE_REPLICAS,
    built_in_mappings,
    parent_owners,
    replicas_path,
    scale_owners,
)

REPLICAS = ("f:spec", "f:replicas")
OTHER = ("f:spec", "f:paused")
DEPLOYMENTS = built_in_mappings("apps", "deployments")


def entry(manager: str, op: str, version: str, *fields: tuple[str, ...], sub: str = "") -> Entry:
    return Entry(manager, op, version, sub, time="t", fields=set(fields))


def test_a_custom_resources_path_is_its_spec_replicas_path() -> None:
    assert replicas_path(".spec.size") == ("f:spec", "f:size")
    assert replicas_path(".spec.replicas") == REPLICAS


def test_the_built_in_workloads_versions() -> None:
    assert set(DEPLOYMENTS) == {"apps/v1beta1", "apps/v1beta2", "apps/v1"}
    assert set(built_in_mappings("apps", "replicasets")) == {"apps/v1beta2", "apps/v1"}
    assert built_in_mappings("", "replicationcontrollers") == {"v1": REPLICAS}
    assert built_in_mappings("", "pods") == {}


def test_only_owners_of_the_replicas_are_seen_on_the_scale() -> None:
    creator = entry("creator", "Update", "apps/v1", REPLICAS, OTHER)
    other = entry("other", "Update", "apps/v1", OTHER)
    owners = scale_owners({creator.key: creator, other.key: other}, DEPLOYMENTS)
    (seen,) = owners.values()
    assert (seen.manager, seen.api_version, seen.fields, seen.time) == (
        "creator",
        "autoscaling/v1",
        {SCALE_REPLICAS},
        "t",
    )


def test_a_version_without_a_scale_or_unknown_is_not_seen() -> None:
    mappings = {"g/v1": REPLICAS, "g/v2": None}
    v2 = entry("a", "Update", "g/v2", REPLICAS)
    gone = entry("b", "Update", "g/v9", REPLICAS)
    assert scale_owners({v2.key: v2, gone.key: gone}, mappings) == {}
    folded = parent_owners({v2.key: v2, gone.key: gone}, {}, mappings, "g/v1")
    assert list(folded.values()) == [v2]  # kept as it is; the unknown version dropped


def test_an_apply_that_took_the_replicas_owns_them_on_the_object() -> None:
    creator = entry("creator", "Update", "apps/v1", REPLICAS, OTHER)
    parent = {creator.key: creator}
    applied = entry("m", "Apply", "autoscaling/v1", SCALE_REPLICAS, sub="scale")
    folded = parent_owners(parent, {applied.key: applied}, DEPLOYMENTS, "apps/v1")
    by_manager = {e.manager: e for e in folded.values()}
    assert by_manager["creator"].fields == {OTHER}  # the replicas were taken from it
    mine = by_manager["m"]
    assert (mine.operation, mine.api_version, mine.subresource, mine.time, mine.fields) == (
        "Apply",
        "apps/v1",
        "scale",
        None,
        {REPLICAS},
    )


def test_an_applier_still_on_the_scale_is_kept_as_it_was() -> None:
    applier = entry("a", "Apply", "apps/v1", REPLICAS, OTHER)
    parent = {applier.key: applier}
    scale = scale_owners(parent, DEPLOYMENTS)
    folded = parent_owners(parent, scale, DEPLOYMENTS, "apps/v1")
    assert folded == {applier.key: applier}


def test_an_updater_still_on_the_scale_comes_back_as_a_second_entry() -> None:
    """Its Scale-side identifier names autoscaling/v1, so kube never matches it with
    the object's: what else it owns stays, the replicas return in an entry of their own
    without a time, and both are written."""
    creator = entry("creator", "Update", "apps/v1", REPLICAS, OTHER)
    parent = {creator.key: creator}
    scale = scale_owners(parent, DEPLOYMENTS)
    folded = parent_owners(parent, scale, DEPLOYMENTS, "apps/v1")
    assert [(e["manager"], e.get("time"), e["fieldsV1"]) for e in encode(folded)] == [
        ("creator", None, {"f:spec": {"f:replicas": {}}}),
        ("creator", "t", {"f:spec": {"f:paused": {}}}),
    ]


def test_a_custom_resource_written_through_another_version() -> None:
    mappings = {"g/v1": REPLICAS, "g/v2": ("f:spec", "f:size")}
    owner = entry("u", "Update", "g/v1", REPLICAS, OTHER)
    parent = {owner.key: owner}
    scaler = entry("s", "Update", "autoscaling/v1", SCALE_REPLICAS, sub="scale")
    folded = parent_owners(parent, {scaler.key: scaler}, mappings, "g/v2")
    by_manager = {e.manager: e for e in folded.values()}
    assert by_manager["u"].fields == {OTHER}
    assert (by_manager["s"].api_version, by_manager["s"].fields) == ("g/v2", {("f:spec", "f:size")})


def test_an_owner_left_with_nothing_is_dropped() -> None:
    scaler = entry("scaler", "Update", "apps/v1", REPLICAS, sub="scale")
    parent = {scaler.key: scaler}
    applied = entry("m", "Apply", "autoscaling/v1", SCALE_REPLICAS, sub="scale")
    folded = parent_owners(parent, {applied.key: applied}, DEPLOYMENTS, "apps/v1")
    assert [e.manager for e in folded.values()] == ["m"]
