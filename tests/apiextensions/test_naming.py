"""kube's naming-condition rules: which requested names a CRD may have."""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions import crd as crds
from platform_api.apiextensions.naming import calculate_names
from platform_api.storage import mediatypes


def crd(plural: str, kind: str, group: str = "g.example.com", **names: Any) -> dict[str, Any]:
    spec_names = {"plural": plural, "singular": kind.lower(), "kind": kind, **names}
    return {
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "names": spec_names},
    }


def accepted(obj: dict[str, Any]) -> dict[str, Any]:
    """The CRD after its requested names were accepted."""
    names, _, _ = calculate_names(obj, [])
    return {**obj, "status": {"acceptedNames": names}}


def test_fresh_names_are_accepted() -> None:
    names, named, established = calculate_names(crd("foos", "Foo", listKind="FooList"), [])
    assert names == {"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList"}
    assert named == {"status": "True", "reason": "NoConflicts", "message": "no conflicts found"}
    assert established == {
        "status": "False",
        "reason": "Installing",
        "message": "the initial names have been accepted",
    }


def test_a_kind_in_use_in_the_group_conflicts() -> None:
    other = accepted(crd("foos", "Foo"))
    names, named, established = calculate_names(crd("bars", "Foo"), [other])
    assert named == {
        "status": "False",
        "reason": "KindConflict",
        "message": '"Foo" is already in use',
    }
    assert names["plural"] == "bars" and names["kind"] == ""
    assert established["reason"] == "NotAccepted"


def test_names_of_other_groups_do_not_conflict() -> None:
    other = accepted(crd("foos", "Foo", group="other.example.com"))
    _, named, _ = calculate_names(crd("foos", "Foo"), [other])
    assert named["status"] == "True"


def test_short_names_conflict_with_any_resource_name() -> None:
    other = accepted(crd("foos", "Foo"))
    names, named, _ = calculate_names(crd("bars", "Bar", shortNames=["foo", "foos"]), [other])
    assert named["reason"] == "ShortNamesConflict"
    assert named["message"] == '["foo" is already in use, "foos" is already in use]'
    assert "shortNames" not in names


def test_a_crd_keeps_the_names_it_accepted_before() -> None:
    mine = accepted(crd("foos", "Foo"))
    _, named, _ = calculate_names(mine, [mine])
    assert named["status"] == "True"


def test_established_stays_true_once_set() -> None:
    mine = accepted(crd("foos", "Foo"))
    mine["status"]["conditions"] = [
        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "x"}
    ]
    _, _, established = calculate_names(mine, [mine])
    assert established["status"] == "True"


def test_conditions_are_set_on_a_crd_read_back_from_protobuf() -> None:
    """etcd holds CRDs in Protobuf; read back, a CRD without conditions has Go's null
    (the field is not omitempty).  The naming controller crashed on it, so CRDs made
    through one replica never became Established on another."""
    fresh = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        **crd("foos", "Foo"),
        "status": {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]},
    }
    stored = mediatypes.decode(mediatypes.encode(fresh, mediatypes.PROTOBUF))
    assert stored["status"]["conditions"] is None
    crds.set_condition(stored, crds.NAMES_ACCEPTED, "True", "NoConflicts", "no conflicts found")
    crds.set_condition(stored, crds.ESTABLISHED, "True", "InitialNamesAccepted", "accepted")
    assert [c["type"] for c in stored["status"]["conditions"]] == ["NamesAccepted", "Established"]
    assert crds.is_true(stored, crds.ESTABLISHED)
