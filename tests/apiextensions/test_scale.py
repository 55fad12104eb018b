"""The scale subresource's reading of a custom resource, as kube's ``unstructured.Nested*``
and ValidateScaleSpec/Status read it (apiextensions-apiserver v1.36)."""

from __future__ import annotations

import pytest

from platform_api import errors
from platform_api.apiextensions.scale import nested, scale_errors, to_scale

SCALE = {
    "specReplicasPath": ".spec.replicas",
    "statusReplicasPath": ".status.replicas",
    "labelSelectorPath": ".status.selector",
}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"spec": {"replicas": 3}}, (3, True, "")),
        ({"spec": {}}, (None, False, "")),
        ({}, (None, False, "")),
        ({"spec": None}, (None, False, "")),  # null on the way is not found, no error
        (
            {"spec": {"replicas": "3"}},
            (None, True, ".spec.replicas accessor error: 3 is of the type string, expected int64"),
        ),
        (
            {"spec": {"replicas": True}},
            (None, True, ".spec.replicas accessor error: true is of the type bool, expected int64"),
        ),
        (
            {"spec": "x"},  # a step through a string: named by the path up to it
            (
                None,
                False,
                ".spec.replicas accessor error: x is of the type string, "
                "expected map[string]interface{}",
            ),
        ),
        (
            {"spec": [1]},
            (
                None,
                False,
                ".spec.replicas accessor error: [1] is of the type []interface {}, "
                "expected map[string]interface{}",
            ),
        ),
    ],
)
def test_nested_reads_as_kubes_unstructured_accessors(
    obj: dict[str, object], expected: tuple[object, bool, str]
) -> None:
    assert nested(obj, ".spec.replicas", int, "int64") == expected


def test_a_step_through_a_scalar_names_the_path_up_to_that_step() -> None:
    _, _, problem = nested({"a": {"b": 5}}, ".a.b.c.d", int, "int64")
    assert (
        problem == ".a.b.c accessor error: 5 is of the type int64, expected map[string]interface{}"
    )


def test_scale_errors_report_a_spec_that_is_no_object() -> None:
    errs = scale_errors({"spec": "x", "status": {"replicas": 1}}, SCALE)
    assert [(e.field, e.bad_value, e.detail) for e in errs] == [
        (
            ".spec.replicas",
            0,
            ".spec.replicas accessor error: x is of the type string, "
            "expected map[string]interface{}",
        )
    ]
    assert scale_errors({"spec": "x"}, SCALE, spec=False) == []


def test_scale_errors_check_the_replicas_range() -> None:
    errs = scale_errors({"spec": {"replicas": -1}, "status": {"replicas": 2**31}}, SCALE)
    assert [(e.field, e.bad_value, e.detail) for e in errs] == [
        (".spec.replicas", -1, "should be a non-negative integer"),
        (".status.replicas", 2**31, "should be less than or equal to 2147483647"),
    ]


def test_to_scale_fails_as_kube_on_a_status_that_is_no_object() -> None:
    with pytest.raises(errors.StatusError) as failed:
        to_scale({"metadata": {"name": "w"}, "spec": {"replicas": 1}, "status": 3}, SCALE)
    assert failed.value.code == 500
    assert failed.value.message == (
        "Internal error occurred: .status.replicas accessor error: 3 is of the type int64, "
        "expected map[string]interface{}"
    )
