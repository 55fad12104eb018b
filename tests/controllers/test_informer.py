"""The controllers' indexes: objects shared by indexes that start together."""

from __future__ import annotations

from pathlib import Path

from platform_api.controllers.informer import ByNamespace, shared_lists
from tests.controllers.kit import ControllerSetup

PODS = ("", "v1", "pods")


def pod(name: str) -> dict[str, object]:
    spec = {"containers": [{"name": "c", "image": "nginx"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_indexes_loading_together_share_one_decoding(tmp_path: Path) -> None:
    setup = ControllerSetup(str(tmp_path))
    setup.create(PODS, pod("p"), "default")
    store = setup.cluster.stores[PODS]
    with shared_lists():
        first, second = ByNamespace(store), ByNamespace(store)
        first.load(), second.load()
    assert first.objects["default"]["p"] is second.objects["default"]["p"]
    alone = ByNamespace(store)
    alone.load()  # outside: a list of its own
    assert alone.objects["default"]["p"] is not first.objects["default"]["p"]
    assert alone.objects == first.objects


def test_an_index_loaded_from_a_shared_list_takes_the_later_events(tmp_path: Path) -> None:
    setup = ControllerSetup(str(tmp_path))
    setup.create(PODS, pod("p"), "default")
    store = setup.cluster.stores[PODS]
    with shared_lists():
        first = ByNamespace(store)
        first.load()
        setup.create(PODS, pod("q"), "default")  # a commit between two loads
        second = ByNamespace(store)
        second.load()
    events = store.storage.events_since(second.revision)
    for event in events:
        second.apply(event)
    assert sorted(second.objects["default"]) == ["p", "q"]
