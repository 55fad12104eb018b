"""kube's ScaleHandler: the owners of an object's replicas seen from its Scale, and the
Scale's owners after an apply folded back (the reference agreed on every step of an
apply sequence; tests/e2e/test_workloads.py runs one)."""

from __future__ import annotations

from platform_api.fieldmanager.entries import Entry
from platform_api.fieldmanager.scaleowners import (
    SCALE_REPLICAS,
    parent_owners,
    replicas_path,
    scale_owners,
)

REPLICAS = ("f:spec", "f:replicas")
OTHER = ("f:spec", "f:paused")


def entry(manager: str, op: str, version: str, *fields: tuple[str, ...], sub: str = "") -> Entry:
    return Entry(manager, op, version, sub, time="t", fields=set(fields))


def test_a_custom_resources_path_is_its_spec_replicas_path() -> None:
    assert replicas_path(".spec.size") == ("f:spec", "f:size")
    assert replicas_path(".spec.replicas") == REPLICAS


def test_only_owners_of_the_replicas_are_seen_on_the_scale() -> None:
    creator = entry("creator", "Update", "apps/v1", REPLICAS, OTHER)
    other = entry("other", "Update", "apps/v1", OTHER)
    owners, origins = scale_owners({creator.key: creator, other.key: other}, REPLICAS)
    (seen,) = owners.values()
    assert (seen.manager, seen.api_version, seen.fields) == (
        "creator",
        "autoscaling/v1",
        {SCALE_REPLICAS},
    )
    assert origins == {seen.key: creator.key}


def test_an_apply_that_took_the_replicas_owns_them_on_the_object() -> None:
    creator = entry("creator", "Update", "apps/v1", REPLICAS, OTHER)
    parent = {creator.key: creator}
    _, origins = scale_owners(parent, REPLICAS)
    applied = entry("m", "Apply", "autoscaling/v1", SCALE_REPLICAS, sub="scale")
    folded = parent_owners(parent, {applied.key: applied}, origins, REPLICAS, "apps/v1")
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


def test_an_owner_still_on_the_scale_is_kept_as_it_was() -> None:
    creator = entry("creator", "Update", "apps/v1", REPLICAS, OTHER)
    parent = {creator.key: creator}
    owners, origins = scale_owners(parent, REPLICAS)
    applied = entry("m", "Apply", "autoscaling/v1", SCALE_REPLICAS, sub="scale")
    scale = {**owners, applied.key: applied}  # the same value applied: both own it
    folded = parent_owners(parent, scale, origins, REPLICAS, "apps/v1")
    assert folded[creator.key] is creator
    assert len(folded) == 2


def test_an_owner_left_with_nothing_is_dropped() -> None:
    scaler = entry("scaler", "Update", "apps/v1", REPLICAS, sub="scale")
    parent = {scaler.key: scaler}
    _, origins = scale_owners(parent, REPLICAS)
    applied = entry("m", "Apply", "autoscaling/v1", SCALE_REPLICAS, sub="scale")
    folded = parent_owners(parent, {applied.key: applied}, origins, REPLICAS, "apps/v1")
    assert [e.manager for e in folded.values()] == ["m"]
