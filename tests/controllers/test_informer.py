"""The controllers' indexes: objects shared by indexes that start together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def owned(name: str, uid: str | None) -> dict[str, Any]:
    obj: dict[str, Any] = pod(name)
    meta: dict[str, Any] = {"name": name}
    if uid is not None:
        ref = {"apiVersion": "v1", "kind": "X", "name": "x", "uid": uid, "controller": True}
        meta["ownerReferences"] = [ref]
    obj["metadata"] = meta
    return obj


def adopt(setup: ControllerSetup, name: str, uid: str | None) -> None:
    refs = owned(name, uid)["metadata"].get("ownerReferences", [])

    def write(existing: dict[str, Any] | None) -> dict[str, Any]:
        assert existing is not None
        existing["metadata"]["ownerReferences"] = refs
        return existing

    setup.cluster.run(setup.cluster.stores[PODS].update("default", name, write))


def test_candidates_are_the_controllers_objects_then_the_orphans(tmp_path: Path) -> None:
    """What a claim reads: kube scans the namespace for them; the index keeps them by
    their controller's uid, following adoption, release and deletion."""
    setup = ControllerSetup(str(tmp_path))
    store = setup.cluster.stores[PODS]
    setup.create(PODS, owned("a", "u1"), "default")
    setup.create(PODS, owned("b", "u2"), "default")
    setup.create(PODS, owned("free", None), "default")
    setup.create(PODS, owned("elsewhere", "u1"), "other")
    index = ByNamespace(store, owners=True)
    index.load()

    def names(namespace: str, uid: str) -> list[str]:
        return [str(p["metadata"]["name"]) for p in index.candidates(namespace, uid)]

    assert names("default", "u1") == ["a", "free"]
    assert names("default", "u2") == ["b", "free"]
    assert names("other", "u1") == ["elsewhere"]
    start = index.revision
    setup.create(PODS, owned("c", "u1"), "default")
    adopt(setup, "free", "u2")
    adopt(setup, "b", None)  # released by u2
    setup.delete(PODS, "a", "default", grace_period=0)
    for event in store.storage.events_since(start):
        index.apply(event)
    assert names("default", "u1") == ["c", "b"]
    assert names("default", "u2") == ["free", "b"]
