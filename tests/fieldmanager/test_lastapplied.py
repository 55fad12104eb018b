"""kubectl's client-side to server-side apply move, as kube's field manager eases it."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.errors import StatusError
from platform_api.fieldmanager.lastapplied import LAST_APPLIED, annotation_for
from platform_api.fieldmanager.manager import Who
from tests.fieldmanager.test_manager import T0, apply, configmap, manager_for

Obj = dict[str, Any]
CSA = "kubectl-client-side-apply"


def client_side_applied(data: dict[str, str]) -> Obj:
    """A ConfigMap as ``kubectl apply`` (client-side) leaves it."""
    fm = manager_for("", "ConfigMap")
    last = configmap(data, annotations={})  # kubectl records the annotations it applied
    obj = configmap(data, annotations={LAST_APPLIED: annotation_for(last)})
    fm.update(None, obj, Who(CSA, "v1"), T0)
    return obj


def test_kubectl_takes_what_the_last_client_side_apply_set() -> None:
    fm = manager_for("", "ConfigMap")
    live = client_side_applied({"a": "1"})
    config = configmap({"a": "2", "b": "3"}, annotations={"note": "<&>"})
    merged = apply(fm, live, config, "kubectl")
    assert merged["data"] == {"a": "2", "b": "3"}
    assert merged["metadata"]["annotations"][LAST_APPLIED] == (
        '{"apiVersion":"v1","data":{"a":"2","b":"3"},"kind":"ConfigMap","metadata":'
        '{"annotations":{"note":"\\u003c\\u0026\\u003e"},"name":"c"}}\n'
    )


def test_other_managers_and_other_owners_still_conflict() -> None:
    fm = manager_for("", "ConfigMap")
    live = client_side_applied({"a": "1"})
    with pytest.raises(StatusError) as caught:
        apply(fm, live, configmap({"a": "2"}), "other")
    assert caught.value.code == 409
    live = apply(fm, live, configmap({"z": "1"}), "someone", force=True)
    with pytest.raises(StatusError) as caught:  # z never was in the last-applied config
        apply(fm, live, configmap({"a": "2", "z": "2"}), "kubectl")
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "someone": .data.z'
    )


def test_no_annotation_is_added_and_a_no_op_stamps_no_time() -> None:
    fm = manager_for("", "ConfigMap")
    live = apply(fm, None, configmap({"a": "1"}), "a")
    assert "annotations" not in live["metadata"]
    shared = apply(fm, live, configmap({"a": "1"}), "kubectl")
    entries = {e["manager"]: e for e in shared["metadata"]["managedFields"]}
    assert "time" in entries["a"] and "time" not in entries["kubectl"]
    assert "annotations" not in shared["metadata"]


def test_a_field_changed_since_the_last_client_side_apply_conflicts_again() -> None:
    """kube's allowedConflictsFromLastApplied keeps only the fields that still hold what
    the last client-side apply set; an annotation of another version allows none."""
    fm = manager_for("", "ConfigMap")
    live = client_side_applied({"a": "1", "b": "1"})
    live["data"]["a"] = "5"  # changed since, by the client-side applier's own Update
    with pytest.raises(StatusError) as caught:
        apply(fm, live, configmap({"a": "2", "b": "2"}), "kubectl")
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a'
    )
    other = client_side_applied({"a": "1"})
    annotations = other["metadata"]["annotations"]
    annotations[LAST_APPLIED] = annotations[LAST_APPLIED].replace('"v1"', '"v2"')
    with pytest.raises(StatusError):
        apply(fm, other, configmap({"a": "2"}), "kubectl")
