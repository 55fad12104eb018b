"""Values kube prints in update refusals, as the reference printed them (found by 700
PUTs of 15 kinds compared with it): named Go types and IntOrStrings marshalled as
JSON, a nil list as null; and a StorageClass's pointers defaulted only when absent."""

from __future__ import annotations

from platform_api.registry.coordination import validate_budget_spec
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.quota_validation import validate_scopes_unchanged
from platform_api.registry.storageclass import validate_storage_class

GROUP = "storage.platform.io"


def test_an_int_or_string_is_marshalled() -> None:
    spec = {"minAvailable": "\x01", "selector": {"matchLabels": {"a": "b"}}}
    assert str(validate_budget_spec(spec)[0]).startswith(
        'spec.minAvailable: Invalid value: "\\u0001": a valid percent string'
    )


def test_scopes_removed_are_null() -> None:
    old = {"spec": {"scopes": ["NotTerminating"]}}
    assert [str(e) for e in validate_scopes_unchanged({"spec": {}}, old)] == [
        "spec.scopes: Invalid value: null: field is immutable"
    ]
    assert [str(e) for e in validate_scopes_unchanged({"spec": {"scopes": []}}, old)] == [
        "spec.scopes: Invalid value: []: field is immutable"
    ]


def test_a_storage_class_keeps_an_empty_reclaim_policy() -> None:
    """kube defaults a nil pointer, not "", and validates a policy only when it is set."""
    obj = {"provisioner": "x.io/p", "reclaimPolicy": ""}
    apply_defaults(GROUP, "StorageClass", obj)
    assert (obj["reclaimPolicy"], obj["volumeBindingMode"]) == ("", "Immediate")
    assert validate_storage_class(obj) == []
    obj = {"provisioner": "x.io/p", "volumeBindingMode": ""}
    apply_defaults(GROUP, "StorageClass", obj)
    assert [str(e) for e in validate_storage_class(obj)] == [
        'volumeBindingMode: Unsupported value: "": supported values: "Immediate", '
        '"WaitForFirstConsumer"'
    ]
