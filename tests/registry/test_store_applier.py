"""Store.applier: the forced server-side apply of the server's own controllers."""

from __future__ import annotations

import copy
from pathlib import Path

from platform_api.fieldmanager.manager import FieldManager
from platform_api.fieldmanager.typed import Typed
from tests.authorization.rbac_cluster import Cluster


def test_each_try_applies_a_fresh_copy_of_the_configuration(tmp_path: Path) -> None:
    """The store's retry loop may call the update again: the configuration must come
    through the first try untouched (the merge shares its values)."""
    cluster = Cluster(str(tmp_path))
    store = cluster.stores[("", "v1", "configmaps")]
    # read as a custom resource is: JSON values, nulls kept, so the merge shares them
    store.field_manager = lambda: FieldManager(Typed(None, unstructured=True), {}, False)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    live = cluster.run(store.create("default", body)).object
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"x": "y"}},
        "data": {"b": "2"},
    }
    kept = copy.deepcopy(config)
    apply = store.applier("controller", config)
    first = apply(copy.deepcopy(live))
    first["metadata"]["labels"]["x"] = "changed"  # what later steps of a write may do
    second = apply(copy.deepcopy(live))
    assert config == kept
    assert second["metadata"]["labels"] == {"x": "y"} and second["data"] == {"a": "1", "b": "2"}
    [entry] = [e for e in second["metadata"]["managedFields"] if e["manager"] == "controller"]
    assert entry["operation"] == "Apply"
