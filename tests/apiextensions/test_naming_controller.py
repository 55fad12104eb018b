"""The naming-and-establishing controller over real storage on a test clock: names
accepted, conflicts in a group, names freed by a deletion, and its reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from platform_api.apiextensions import crd as crds
from platform_api.apiextensions.naming import NamingController
from tests.controllers.kit import ControllerSetup
from tests.spying import calls_of

Obj = dict[str, Any]
CRDS = ("apiextensions.platform.io", "v1", "customresourcedefinitions")
GROUP = "g.example.com"


def definition(plural: str, kind: str, group: str = GROUP, name: str = "") -> Obj:
    schema = {"openAPIV3Schema": {"type": "object"}}
    return {
        "apiVersion": "apiextensions.platform.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name or f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": kind},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}],
        },
    }


def started(tmp_path: Path) -> tuple[ControllerSetup, NamingController]:
    setup = ControllerSetup(str(tmp_path))
    cluster = setup.cluster
    controller = NamingController(cluster.stores[CRDS], cluster.hub, cluster.clock)
    setup.start(controller)
    return setup, controller


def condition(setup: ControllerSetup, name: str, type_: str) -> Obj:
    crd = setup.get(CRDS, name)
    assert crd is not None
    found = crds.find_condition(crd, type_)
    assert found is not None
    return {k: found[k] for k in ("status", "reason", "message")}


def test_a_new_definition_is_named_then_established(tmp_path: Path) -> None:
    setup, _ = started(tmp_path)
    setup.create(CRDS, definition("foos", "Foo"))
    assert condition(setup, "foos.g.example.com", crds.ESTABLISHED) == {
        "status": "True",
        "reason": "InitialNamesAccepted",
        "message": "the initial names have been accepted",
    }
    crd = setup.get(CRDS, "foos.g.example.com")
    assert crd is not None
    assert crd["status"]["acceptedNames"] == {
        "plural": "foos",
        "singular": "foo",
        "kind": "Foo",
        "listKind": "FooList",
    }


def test_a_kind_taken_in_the_group_waits_until_it_is_freed(tmp_path: Path) -> None:
    setup, _ = started(tmp_path)
    setup.create(CRDS, definition("foos", "Foo"))
    setup.create(CRDS, definition("bars", "Foo"))
    assert condition(setup, "bars.g.example.com", crds.NAMES_ACCEPTED) == {
        "status": "False",
        "reason": "ListKindConflict",  # kube reports the last of its checks that failed
        "message": '"FooList" is already in use',
    }
    assert condition(setup, "bars.g.example.com", crds.ESTABLISHED)["status"] == "False"
    setup.delete(CRDS, "foos.g.example.com")
    terminating = setup.get(CRDS, "foos.g.example.com")
    assert terminating is not None and terminating["metadata"].get("finalizers")
    setup.cluster.run(setup.cluster.stores[CRDS].update("", "foos.g.example.com", _cleaned))
    setup.wait(0.1)
    assert setup.get(CRDS, "foos.g.example.com") is None
    assert condition(setup, "bars.g.example.com", crds.NAMES_ACCEPTED)["status"] == "True"
    assert condition(setup, "bars.g.example.com", crds.ESTABLISHED)["status"] == "True"


def _cleaned(existing: Obj | None) -> Obj:
    """The finalizer controller's last step: the custom resources are gone."""
    assert existing is not None
    existing["metadata"]["finalizers"] = []
    return existing


def test_two_definitions_created_in_one_turn_do_not_both_take_a_kind(tmp_path: Path) -> None:
    """The second sees the first's accepted names though their events are not yet out."""
    setup, _ = started(tmp_path)
    store = setup.cluster.stores[CRDS]
    setup.cluster.run(store.create("", definition("foos", "Foo")))
    setup.cluster.run(store.create("", definition("bars", "Foo")))
    setup.cluster.settle()
    statuses = sorted(
        condition(setup, n, crds.NAMES_ACCEPTED)["status"]
        for n in ("foos.g.example.com", "bars.g.example.com")
    )
    assert statuses == ["False", "True"]


def test_syncs_read_the_definitions_once_not_per_sync(tmp_path: Path) -> None:
    """A busy group costs each sync its group's names, not a decoding of every CRD."""
    setup, _ = started(tmp_path)
    with calls_of(setup.cluster.stores[CRDS], "list") as lists:
        for i in range(30):
            setup.create(CRDS, definition(f"things{i}", f"Thing{i}"))
    assert lists == []
    for i in range(30):
        assert condition(setup, f"things{i}.g.example.com", crds.ESTABLISHED)["status"] == "True"
