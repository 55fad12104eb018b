"""Ownership rules of Update and Apply against the built-in schemas."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from platform_api.errors import StatusError
from platform_api.fieldmanager.entries import Entry, cap_updates, conflict_error, decode
from platform_api.fieldmanager.manager import FieldManager, Who
from platform_api.fieldmanager.typed import Typed
from platform_api.scheme.schemas import load_schemas

Obj = dict[str, Any]
KUBE_FIXTURES = Path(__file__).parent.parent / "codec" / "kube"
T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"


def manager_for(group: str, kind: str, has_status: bool = False) -> FieldManager:
    schemas = load_schemas()
    node = schemas.get(schemas.for_kind(group, "v1", kind))
    return FieldManager(Typed(schemas), node, has_status)


def configmap(data: dict[str, str], **meta: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", **meta},
        "data": data,
    }


def fields(obj: Obj, manager: str) -> dict[str, Any]:
    for entry in obj["metadata"].get("managedFields", []):
        if entry["manager"] == manager:
            result: dict[str, Any] = entry["fieldsV1"]
            return result
    raise KeyError(manager)


def apply(fm: FieldManager, live: Obj | None, config: Obj, who: str, force: bool = False) -> Obj:
    return fm.apply(live, config, Who(who, "v1"), force, T1)


def test_create_records_an_update_with_dots_for_new_maps() -> None:
    fm = manager_for("", "ConfigMap")
    obj = configmap({"a": "1"}, labels={"x": "y"})
    fm.update(None, obj, Who("kubectl-create", "v1"), T0)
    assert obj["metadata"]["managedFields"] == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:data": {".": {}, "f:a": {}},
                "f:metadata": {"f:labels": {".": {}, "f:x": {}}},
            },
        }
    ]


def test_a_kube_written_pod_gets_kubes_field_set() -> None:
    """kube compares against Go objects: fields Go always writes (``containers``, ``spec``)
    are never added themselves, fields an empty object lacks (``volumes``) are."""
    kube = orjson.loads((KUBE_FIXTURES / "pod.json").read_bytes())
    expected = kube["metadata"]["managedFields"][0]["fieldsV1"]
    created = orjson.loads(orjson.dumps(kube))
    del created["metadata"]["managedFields"], created["status"]
    del created["spec"]["imagePullSecrets"]  # added by kube's admission, after tracking
    manager_for("", "Pod", has_status=True).update(None, created, Who("codec-fixtures", "v1"), T0)
    assert fields(created, "codec-fixtures") == expected


def test_scale_updates_carry_no_time() -> None:
    """kube's scale handler rebuilds the entry from the Scale's and drops its time."""
    fm = manager_for("apps", "Deployment", has_status=True)
    live = deployment({"replicas": 1})
    fm.update(None, live, Who("kubectl", "apps/v1"), T0)
    scaled = {**copy.deepcopy(live), "spec": {"replicas": 3}}
    fm.update(live, scaled, Who("kubectl", "apps/v1", "scale"), T1)
    entry = scaled["metadata"]["managedFields"][0]
    assert (entry["subresource"], "time" in entry) == ("scale", False)


def test_apply_owns_exactly_its_configuration() -> None:
    fm = manager_for("", "ConfigMap")
    out = apply(fm, None, configmap({"a": "1"}, labels={"x": "y"}), "mgr")
    assert fields(out, "mgr") == {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}
    assert out["metadata"]["managedFields"][0]["operation"] == "Apply"


def test_conflict_force_and_sharing() -> None:
    fm = manager_for("", "ConfigMap")
    live = apply(fm, None, configmap({"a": "1", "b": "2"}), "one")
    with pytest.raises(StatusError) as caught:
        apply(fm, live, configmap({"a": "9"}), "two")
    status = caught.value.status()
    assert (status["code"], status["reason"]) == (409, "Conflict")
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "one": .data.a'
    assert status["details"] == {
        "causes": [
            {"reason": "FieldManagerConflict", "message": 'conflict with "one"', "field": ".data.a"}
        ]
    }
    shared = apply(fm, live, configmap({"a": "1"}), "two")  # equal value: shared
    assert fields(shared, "one") == {"f:data": {"f:a": {}, "f:b": {}}}
    assert fields(shared, "two") == {"f:data": {"f:a": {}}}
    forced = apply(fm, live, configmap({"a": "9"}), "two", force=True)
    assert forced["data"] == {"a": "9", "b": "2"}
    assert fields(forced, "one") == {"f:data": {"f:b": {}}}


def test_several_conflicts_are_listed_by_manager() -> None:
    fm = manager_for("", "ConfigMap")
    live = apply(fm, None, configmap({"a": "1"}), "one")
    live = apply(fm, live, configmap({"b": "1"}), "two")
    with pytest.raises(StatusError) as caught:
        apply(fm, live, configmap({"a": "2", "b": "2"}), "three")
    assert caught.value.status()["message"] == (
        'Apply failed with 2 conflicts: conflicts with "one":\n- .data.a\n'
        'conflicts with "two":\n- .data.b'
    )


def test_conflicting_managers_are_listed_by_their_identifiers() -> None:
    """kube sorts the managers by identifier (their JSON): a manager's scale entry comes
    before its entry of the object itself, an Update's version counts."""
    replicas, image = ("f:spec", "f:replicas"), ("f:spec", "f:image")
    scale = Entry("m3", "Apply", "apps/v1", "scale")
    main = Entry("m3", "Apply", "apps/v1")
    update = Entry("m1", "Update", "apps/v1", "scale")
    error = conflict_error([(main, image), (scale, replicas), (update, replicas)])
    assert error.message == (
        'Apply failed with 3 conflicts: conflicts with "m1" with subresource "scale" using '
        'apps/v1:\n- .spec.replicas\nconflicts with "m3" with subresource "scale":\n'
        '- .spec.replicas\nconflicts with "m3":\n- .spec.image'
    )
    assert main.identifier() == '{"manager":"m3","operation":"Apply"}'
    assert update.identifier() == (
        '{"manager":"m1","operation":"Update","apiVersion":"apps/v1","subresource":"scale"}'
    )


def deployment(spec: Obj) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec}


def test_a_null_claims_and_clears_a_field_as_structured_merge_diff_does() -> None:
    """A null in an applied configuration (kube hands the field manager the JSON) is a
    value: it conflicts with the field's owner and, forced, clears the field; a null
    struct merges as an empty one (the configuration's own, not the live fields)."""
    fm = manager_for("apps", "Deployment", has_status=True)
    live = apply(fm, None, deployment({"replicas": 2, "paused": True}), "one")
    with pytest.raises(StatusError) as caught:
        apply(fm, live, deployment({"replicas": None}), "two")
    assert caught.value.status()["message"] == (
        'Apply failed with 1 conflict: conflict with "one": .spec.replicas'
    )
    forced = apply(fm, live, deployment({"replicas": None}), "two", force=True)
    assert forced["spec"] == {"paused": True}  # no null left: Go's value has none
    assert fields(forced, "two") == {"f:spec": {"f:replicas": {}}}
    assert fields(forced, "one") == {"f:spec": {"f:paused": {}}}
    kept = apply(fm, live, deployment({"strategy": None}), "two")
    assert kept["spec"] == {"replicas": 2, "paused": True}
    assert fields(kept, "two") == {"f:spec": {"f:strategy": {}}}
    whole = apply(fm, live, {**deployment({}), "spec": None}, "two")
    assert whole["spec"] == {"replicas": 2, "paused": True}
    assert fields(whole, "two") == {"f:spec": {}}


def test_released_fields_are_removed_unless_someone_owns_them() -> None:
    fm = manager_for("", "ConfigMap")
    live = apply(fm, None, configmap({"a": "1", "b": "2", "c": "3"}), "one")
    live = apply(fm, live, configmap({"c": "3"}), "two")  # shares c
    out = apply(fm, live, configmap({"a": "1"}), "one")
    assert out["data"] == {"a": "1", "c": "3"}
    gone = apply(
        fm, out, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, "one"
    )
    assert gone["data"] == {"c": "3"}
    assert [e["manager"] for e in gone["metadata"]["managedFields"]] == ["two"]


def test_update_takes_fields_and_never_conflicts() -> None:
    fm = manager_for("", "ConfigMap")
    live = apply(fm, None, configmap({"a": "1"}), "one")
    new = configmap({"a": "2"})
    fm.update(live, new, Who("editor", "v1"), T2)
    assert [e["manager"] for e in new["metadata"]["managedFields"]] == ["editor"]
    assert fields(new, "editor") == {"f:data": {"f:a": {}}}
    with pytest.raises(StatusError) as caught:
        apply(fm, new, configmap({"a": "3"}), "one")
    assert 'conflict with "editor" using v1: .data.a' in caught.value.status()["message"]


def test_managed_fields_reset_and_untracked_after() -> None:
    """kube's isResetManagedFields and skipNonAppliedManager: ``[{}]`` (or ``[]`` for a
    built-in kind) strips every entry, the object's later Updates record none, and its
    first Apply records what was there as ``before-first-apply``."""
    fm = manager_for("", "ConfigMap")
    live = apply(fm, None, configmap({"a": "1"}), "one")
    for reset in ([{}], []):
        cleared = configmap({"a": "1"}, managedFields=reset)
        fm.update(live, cleared, Who("x", "v1"), T2)
        assert "managedFields" not in cleared["metadata"]
    later = configmap({"a": "1", "b": "2"}, labels={"l": "v"})
    fm.update(cleared, later, Who("x", "v1"), T2)
    assert "managedFields" not in later["metadata"]
    applied = apply(fm, later, configmap({"c": "3"}), "two")
    assert fields(applied, "before-first-apply") == {
        "f:data": {".": {}, "f:a": {}, "f:b": {}},
        "f:metadata": {"f:labels": {".": {}, "f:l": {}}},
    }
    assert fields(applied, "two") == {"f:data": {"f:c": {}}}
    # an Update as kube's managedFieldsUpdater records one: stamped with its time
    first = [e for e in applied["metadata"]["managedFields"] if e["manager"] != "two"]
    assert first[0]["time"] == T1


def test_a_custom_resource_keeps_its_entries_when_sent_an_empty_list() -> None:
    fm = FieldManager(Typed(None, unstructured=True), {}, has_status=False)
    live = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"}, "a": 1}
    fm.update(None, live, Who("one", "example.com/v1"), T0)
    new = {**live, "metadata": {"name": "w", "managedFields": []}, "b": 2}
    fm.update(live, new, Who("two", "example.com/v1"), T1)
    assert [e["manager"] for e in new["metadata"]["managedFields"]] == ["one", "two"]


def test_no_op_apply_changes_nothing() -> None:
    fm = manager_for("", "ConfigMap")
    live = apply(fm, None, configmap({"a": "1"}), "one")
    again = fm.apply(live, configmap({"a": "1"}), Who("one", "v1"), False, T2)
    assert again["metadata"]["managedFields"] == live["metadata"]["managedFields"]
    assert again["data"] == live["data"]


def test_list_map_items_merge_by_key_and_keep_order() -> None:
    fm = manager_for("", "Pod", has_status=True)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]},
    }
    live = apply(fm, None, pod, "one")
    patch = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "z"}, {"name": "b", "image": "y"}]},
    }
    out = apply(fm, live, patch, "two")
    assert [c["name"] for c in out["spec"]["containers"]] == ["a", "c", "b"]
    assert fields(out, "two")["f:spec"]["f:containers"]['k:{"name":"c"}'] == {
        ".": {},
        "f:image": {},
        "f:name": {},
    }


def test_status_is_not_owned_on_the_main_resource() -> None:
    fm = manager_for("", "Pod", has_status=True)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": {"phase": "X"}}
    out = apply(fm, None, pod, "one")
    assert "managedFields" not in out["metadata"]


def test_a_write_takes_no_field_its_sub_resource_cannot_change() -> None:
    """A spec change sent through /status is reset (kube's reset fields): its owner keeps
    it, for updates and applies alike, and an apply does not conflict on it."""
    fm = manager_for("apps", "Deployment", has_status=True)
    live = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    live["spec"] = {"replicas": 2}
    fm.update(None, live, Who("owner", "apps/v1"), T0)
    new = copy.deepcopy(live)
    new["spec"]["replicas"], new["status"] = 9, {"replicas": 1}
    new["metadata"].pop("managedFields")
    fm.update(live, new, Who("kubelet", "apps/v1", "status"), T1)
    assert fields(new, "owner") == {"f:spec": {"f:replicas": {}}}
    assert fields(new, "kubelet") == {"f:status": {"f:replicas": {}}}
    config = {**live, "spec": {"replicas": 7}, "status": {"replicas": 1}}
    config["metadata"] = {"name": "d"}
    applied = fm.apply(new, config, Who("bob", "apps/v1", "status"), False, T2)
    assert fields(applied, "owner") == {"f:spec": {"f:replicas": {}}}
    assert fields(applied, "bob") == {"f:status": {"f:replicas": {}}}


def test_at_most_ten_update_entries() -> None:
    fm = manager_for("", "ConfigMap")
    obj = configmap({})
    fm.update(None, obj, Who("m", "v1"), T0)
    for i in range(12):
        new = configmap({f"k{i}": "v", **obj.get("data", {})})
        new["metadata"]["managedFields"] = obj["metadata"].get("managedFields")
        fm.update(obj, new, Who(f"m{i:02d}", "v1"), f"2026-01-01T00:00:{i:02d}Z")
        obj = new
    managers = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(managers) == 10 and managers[0] == "ancient-changes"
    assert fields(obj, "ancient-changes") == {
        "f:data": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}}
    }


def test_cap_keeps_small_sets() -> None:
    managers = decode([])
    cap_updates(managers)
    assert managers == {}


def test_undeclared_fields_are_named_as_structured_merge_diff_names_them() -> None:
    fm = manager_for("", "Pod", has_status=True)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    assert fm.misfits(pod) == []
    pod["spec"] = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "x": 1}]}]}
    assert fm.misfits(pod) == [
        '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].x: '
        "field not declared in schema"
    ]
    # SMD stops reading a struct at an undeclared field, and goes on with the rest
    pod["spec"] = {"containers": [{"name": "c", "bogus": 1, "zzz": 3}], "zzz": 2}
    assert fm.misfits(pod) == [
        '.spec.containers[name="c"].bogus: field not declared in schema',
        ".spec.zzz: field not declared in schema",
    ]
    labels = {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"any": "key"}}}
    assert fm.misfits(labels) == []  # a map takes any key


def test_a_null_list_is_an_empty_one_to_compare() -> None:
    """A CRD is created with ``conditions: null`` (Go's nil slice); the naming controller's
    conditions are items added to it, not the list replaced, as kube records them."""
    fm = manager_for("apiextensions.platform.io", "CustomResourceDefinition", has_status=True)
    live = {
        "apiVersion": "apiextensions.platform.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "a.b"},
        "spec": {"group": "b", "scope": "Namespaced"},
        "status": {"conditions": None, "storedVersions": ["v1"]},
    }
    fm.update(None, live, Who("maker", "apiextensions.platform.io/v1"), T0)
    named = copy.deepcopy(live)
    condition = {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"}
    named["status"]["conditions"] = [condition]
    fm.update(live, named, Who("namer", "apiextensions.platform.io/v1", "status"), T1)
    assert fields(named, "namer") == {
        "f:status": {
            "f:conditions": {
                'k:{"type":"NamesAccepted"}': {
                    ".": {},
                    "f:reason": {},
                    "f:status": {},
                    "f:type": {},
                }
            }
        }
    }
    cleared = copy.deepcopy(named)
    cleared["status"]["conditions"] = None  # back to null: its items are removed
    fm.update(named, cleared, Who("clearer", "apiextensions.platform.io/v1", "status"), T2)
    assert [e["manager"] for e in cleared["metadata"]["managedFields"]] == ["maker"]


@pytest.mark.parametrize(
    "entry",
    [
        {"operation": "Bogus", "apiVersion": "v1"},
        {"operation": "Update"},
        {"operation": "Apply", "apiVersion": ""},
        {"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"},
    ],
)
def test_entries_kube_cannot_decode_fail_them_all(entry: Obj) -> None:
    """kube's DecodeManagedFields: then the live object's entries stand."""
    raw = {"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": {}, **entry}
    with pytest.raises(ValueError):
        decode([raw])


def test_unknown_path_element_types_are_dropped_with_their_children() -> None:
    """As structured-merge-diff reads FieldsV1 (a later version may know them)."""
    entry = {"manager": "m", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}
    fields = {"f:data": {"f:a": {}, "x:b": {"f:c": {}}, "q": {}}, "z:d": {}}
    [decoded] = decode([{**entry, "fieldsV1": fields}]).values()
    assert decoded.fields == {("f:data", "f:a")}


def test_sent_entries_are_cut_back_to_atomic_fields() -> None:
    """Entries a request sends are read in the kind's schema, as kube reads every entry:
    one owning items of a container's args (an atomic list) owns the list."""
    fm = manager_for("", "Pod", has_status=True)
    item = 'k:{"name":"c"}'
    sent = {
        "manager": "hand",
        "operation": "Update",
        "apiVersion": "v1",
        "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:containers": {item: {"f:args": {"i:0": {}}}}}},
    }
    spec = {"containers": [{"name": "c", "image": "i", "args": ["a"]}]}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    new = {**copy.deepcopy(pod), "metadata": {"name": "p", "managedFields": [sent]}}
    fm.update(pod, new, Who("u", "v1"), T1)
    assert fields(new, "hand") == {"f:spec": {"f:containers": {item: {"f:args": {}}}}}


def test_a_managers_conflicts_are_listed_as_kube_iterates_them() -> None:
    """As the reference answered: at each level the fields that end there come before
    those under a nested one (``.immutable`` before ``.data.x``)."""
    fm = manager_for("", "ConfigMap")
    live = apply(fm, None, {**configmap({"x": "1"}), "immutable": False}, "a")
    with pytest.raises(StatusError) as caught:
        apply(fm, live, {**configmap({"x": "2"}), "immutable": True}, "b")
    status = caught.value.status()
    assert status["message"] == (
        'Apply failed with 2 conflicts: conflicts with "a":\n- .immutable\n- .data.x'
    )
    assert [c["field"] for c in status["details"]["causes"]] == [".immutable", ".data.x"]


def test_a_released_struct_nobody_owns_anything_in_goes_whole() -> None:
    """As the reference answered: an applier moving a Deployment from a rolling update
    to ``Recreate`` releases ``rollingUpdate.maxSurge``; ``rollingUpdate`` goes whole,
    the ``maxUnavailable`` the server defaulted in it too (else the update is refused)."""
    fm = manager_for("apps", "Deployment")
    strategy = {"rollingUpdate": {"maxSurge": 1}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    live = apply(fm, None, {**deployment, "spec": {"strategy": strategy}}, "a")
    live["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] = "25%"  # defaulted
    out = apply(fm, live, {**deployment, "spec": {"strategy": {"type": "Recreate"}}}, "a")
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_a_no_op_apply_over_a_live_null_stamps_no_time() -> None:
    """A built-in's live JSON can hold a null Go reads as no field (an HPA's
    status.currentMetrics): an apply that changes nothing is still a no-op."""
    fm = manager_for("", "ConfigMap")
    live = apply(fm, None, configmap({"a": "1"}), "one")
    live["binaryData"] = None
    again = apply(fm, live, configmap({}), "two")
    (entry,) = [e for e in again["metadata"]["managedFields"] if e["manager"] == "two"]
    assert "time" not in entry


def test_a_status_write_owns_the_metadata_its_kind_lets_it_change() -> None:
    """kube's /status reset fields: a Pod's status writer owns the labels it sets, a
    Deployment's keeps the old labels (and so owns none), a custom resource's keeps
    all the metadata (the reference's answers)."""
    config = {**deployment({}), "status": {"replicas": 1}}
    config["metadata"] = {"name": "d", "labels": {"x": "1"}, "annotations": {"y": "2"}}
    for kept, owned in (
        (frozenset({"generation"}), {"f:annotations": {"f:y": {}}, "f:labels": {"f:x": {}}}),
        (frozenset({"generation", "labels"}), {"f:annotations": {"f:y": {}}}),
        (None, None),
    ):
        fm = manager_for("apps", "Deployment", has_status=True)
        fm.status_keeps_metadata = kept
        out = fm.apply(None, copy.deepcopy(config), Who("s", "apps/v1", "status"), False, T1)
        assert fields(out, "s").get("f:metadata") == owned


def test_a_released_item_takes_what_others_own_in_it_from_its_struct() -> None:
    """A field another manager owns inside a released list item goes with the item, so
    it keeps nothing above it: a ReplicationController's applier that stops applying
    its template takes the template away, defaults and all, though an updater had
    changed the container's image (the reference's answer: spec.template Required)."""
    fm = manager_for("", "ReplicationController", has_status=True)
    template = {"metadata": {"labels": {"app": "s"}}, "spec": {"containers": [{"name": "b"}]}}
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "r"}}
    live = apply(fm, None, {**rc, "spec": {"selector": {"app": "s"}, "template": template}}, "m")
    live["spec"]["template"]["spec"]["restartPolicy"] = "Always"  # what defaults add
    changed = copy.deepcopy(live)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "x:2"
    fm.update(live, changed, Who("smp", "v1"), T1)
    out = apply(fm, changed, {**rc, "spec": {}}, "m")
    assert out["spec"] == {}
    assert "smp" not in {e["manager"] for e in out["metadata"]["managedFields"]}
