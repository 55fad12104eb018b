"""Whose fields a write records (managedFields): what the writer sent, defaulted, as
kube's handlers record it before mutating admission and the kind's preparation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.fieldmanager.manager import APISERVER, FieldManager
from platform_api.fieldmanager.typed import Typed
from platform_api.registry.store import Store
from tests.admission.plugin_kit import SCHEME, Cluster, run

Obj = dict[str, Any]


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    made = Cluster(str(tmp_path / "db"))
    for store in made.stores.values():
        rt = store.resource
        node = SCHEME.schemas.get(rt.definition) if rt.definition else {}
        manager = FieldManager(Typed(SCHEME.schemas), node, True)
        store.field_manager = lambda manager=manager: manager  # type: ignore[misc]
    return made


def owned(obj: Obj, manager: str = APISERVER) -> Obj:
    entries = [m for m in obj["metadata"].get("managedFields") or [] if m["manager"] == manager]
    assert len(entries) == 1, entries
    assert (entries[0]["operation"], entries[0]["apiVersion"]) == ("Update", "v1")
    fields: Obj = entries[0]["fieldsV1"]
    return fields


def test_the_writer_owns_what_it_sent_and_its_defaults_not_the_kinds_preparation(
    cluster: Cluster,
) -> None:
    store: Store = cluster.store("namespaces")
    made = run(store.create("", {"metadata": {"name": "x"}}, track=store.tracker(APISERVER)))
    assert made["spec"] == {"finalizers": ["kubernetes"]}  # prepared, not owned
    assert owned(made) == {"f:metadata": {"f:labels": {".": {}, "f:platform.io/metadata.name": {}}}}


def test_fields_mutating_admission_adds_are_not_the_writers(cluster: Cluster) -> None:
    store: Store = cluster.store("configmaps")

    async def mutate(obj: Obj, old: Obj | None) -> Obj:
        obj["metadata"].setdefault("labels", {})["added"] = "by-admission"
        return obj

    sent = {"metadata": {"name": "c"}, "data": {"k": "v"}}
    made = run(store.create("default", sent, track=store.tracker("me"), mutate=mutate))
    assert made["metadata"]["labels"] == {"added": "by-admission"}
    assert owned(made, "me") == {"f:data": {".": {}, "f:k": {}}}

    def change(current: Obj | None) -> Obj:
        assert current is not None
        return {**current, "data": {"k": "v", "j": "w"}}

    updated, _ = run(
        store.update("default", "c", change, track=store.tracker("you"), mutate=mutate)
    )
    assert owned(updated.object, "you") == {"f:data": {"f:j": {}}}


def test_stores_without_a_field_manager_record_nothing(tmp_path: Path) -> None:
    store = Cluster(str(tmp_path / "db")).store("configmaps")
    assert store.tracker(APISERVER) is None
